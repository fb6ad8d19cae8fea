package dev.synchronizers.redis.script;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of {@code semaphore-add.lua}: whether the total changed, and the total. Its header
 * declares:
 * <pre>
 * {1, new_total}  changed
 * {0, total}      the total would become negative; nothing changed
 * </pre>
 *
 * @param changed whether the delta was applied
 * @param total the total after the call: the new one if changed, the unchanged one if not
 */
public record SemaphoreAddReply(boolean changed, long total) {

    private static final Set<Script> DECODED = EnumSet.of(Script.SEMAPHORE_ADD);

    private static final String EXPECTED = "{1, new_total} or {0, total}";

    /**
     * Reads a reply of {@code semaphore-add.lua}.
     *
     * @param script the script that answered: {@link Script#SEMAPHORE_ADD}
     * @param reply its raw reply
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is another script
     * @throws UnexpectedReplyException if the reply has neither declared shape
     */
    public static SemaphoreAddReply of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "SemaphoreAddReply");
        List<?> list = ReplyShape.list(script, reply, EXPECTED, 2);
        long code = ReplyShape.integer(script, list, 0, EXPECTED);
        long total = ReplyShape.integer(script, list, 1, EXPECTED);
        if (code != 1L && code != 0L) {
            throw new UnexpectedReplyException(script, reply, EXPECTED);
        }
        return new SemaphoreAddReply(code == 1L, total);
    }
}
