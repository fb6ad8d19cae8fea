package dev.synchronizers.redis.script;

import java.util.List;
import java.util.Set;

/** The checks every typed reply's decoder shares: which scripts it reads, and each element's type. */
final class ReplyShape {

    private ReplyShape() {
    }

    /** Refuses a script whose reply the decoder does not read: a programming error, not a reply. */
    static void requireOneOf(Set<Script> decoded, Script script, String type) {
        if (!decoded.contains(script)) {
            throw new IllegalArgumentException(type + " does not decode the reply of " + script.file
                    + "; it decodes " + decoded);
        }
    }

    /** The reply as a list of {@code size} elements, or the script's unexpected-reply error. */
    static List<?> list(Script script, Object reply, String expected, int... sizes) {
        if (reply instanceof List<?> list) {
            for (int size : sizes) {
                if (list.size() == size) {
                    return list;
                }
            }
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }

    /** Element {@code index}, which must be an integer reply. */
    static long integer(Script script, List<?> reply, int index, String expected) {
        if (index < reply.size() && reply.get(index) instanceof Long value) {
            return value;
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }

    /** Element {@code index}, which must be a bulk-string reply. */
    static String string(Script script, List<?> reply, int index, String expected) {
        if (index < reply.size() && reply.get(index) instanceof String value) {
            return value;
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }

    /** Element {@code index}, which must be a nested list whose length is a multiple of {@code group}. */
    static List<?> groups(Script script, List<?> reply, int index, int group, String expected) {
        if (index < reply.size() && reply.get(index) instanceof List<?> value && value.size() % group == 0) {
            return value;
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }

    /**
     * Element {@code index} of a nested list, a number sent as an integer or as its decimal text (a
     * hash value read back by HGET or HGETALL); {@code whole} is the reply, for the message.
     */
    static long number(Script script, List<?> whole, List<?> nested, int index, String expected) {
        Object value = nested.get(index);
        if (value instanceof Long number) {
            return number;
        }
        if (value instanceof String text) {
            try {
                return Long.parseLong(text);
            } catch (NumberFormatException e) {
                // falls through to the unexpected-reply error
            }
        }
        throw new UnexpectedReplyException(script, whole, expected);
    }

    /**
     * Element {@code index} of a nested list, which must be a bulk string; {@code whole} is the
     * reply, for the message.
     */
    static String text(Script script, List<?> whole, List<?> nested, int index, String expected) {
        if (nested.get(index) instanceof String value) {
            return value;
        }
        throw new UnexpectedReplyException(script, whole, expected);
    }
}
