package dev.synchronizers.redis.script;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of {@code lock-handover.lua}: the owner's hold ended by passing the lock to a waiter of
 * the same client, or the owner no longer held it. Its header declares:
 * <pre>
 * {1, token, waiting}  handed over; token is the new hold's; waiting is 1 if the waiting mark is set
 * {0, 0, 0}            the owner does not hold this hold (its lease ran out, it was forced): nothing changed
 * </pre>
 *
 * @param handedOver whether the lock now belongs to the waiter it was handed to
 * @param token if handed over, the new hold's fencing token; otherwise {@code -1}
 * @param waitingMarked if handed over, whether other waiters have marked the lock as waited for
 */
public record HandoverReply(boolean handedOver, long token, boolean waitingMarked) {

    private static final Set<Script> DECODED = EnumSet.of(Script.LOCK_HANDOVER);

    private static final String EXPECTED = "{1, token, waiting} or {0, 0, 0}";

    /**
     * Reads a reply of {@code lock-handover.lua}.
     *
     * @param script the script that answered: {@link Script#LOCK_HANDOVER}
     * @param reply its raw reply
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is another script
     * @throws UnexpectedReplyException if the reply has neither declared shape
     */
    public static HandoverReply of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "HandoverReply");
        List<?> list = ReplyShape.list(script, reply, EXPECTED, 3);
        long code = ReplyShape.integer(script, list, 0, EXPECTED);
        long token = ReplyShape.integer(script, list, 1, EXPECTED);
        long waiting = ReplyShape.integer(script, list, 2, EXPECTED);
        if (code == 1L && (waiting == 0L || waiting == 1L)) {
            return new HandoverReply(true, token, waiting == 1L);
        }
        if (code == 0L && token == 0L && waiting == 0L) {
            return new HandoverReply(false, -1, false);
        }
        throw new UnexpectedReplyException(script, reply, EXPECTED);
    }
}
