package dev.synchronizers.redis.script;

import java.util.List;

/**
 * A script answered with a reply of a shape its header does not declare: the Lua and the Java
 * catalogue are out of step (a script of another version was loaded, or a decoder was given the
 * wrong script's reply). Thrown by the decoders of the typed replies in this package instead of a
 * {@link ClassCastException} or {@link IndexOutOfBoundsException}; the message names the script,
 * the reply received and the shapes expected.
 */
public final class UnexpectedReplyException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final transient Script script;

    /**
     * @param script the script whose reply could not be read
     * @param reply the raw reply as Lettuce decoded it
     * @param expected the shapes the script's header declares, as written there
     */
    public UnexpectedReplyException(Script script, Object reply, String expected) {
        super("unexpected reply from " + script.file + ": " + describe(reply) + "; expected " + expected);
        this.script = script;
    }

    /** The script whose reply could not be read. */
    public Script script() {
        return script;
    }

    private static String describe(Object reply) {
        if (reply instanceof List<?> list) {
            StringBuilder text = new StringBuilder("{");
            for (int i = 0; i < list.size(); i++) {
                text.append(i == 0 ? "" : ", ").append(describe(list.get(i)));
            }
            return text.append('}').toString();
        }
        if (reply instanceof String string) {
            return "'" + string + "'";
        }
        return String.valueOf(reply);
    }
}
