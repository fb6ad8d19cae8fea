package dev.synchronizers.redis.script;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of a semaphore acquire or try: an {@link Outcome} and the one number that goes with it.
 *
 * <p>Decodes the replies of {@code semaphore-acquire.lua} and {@code semaphore-try.lua}, whose
 * headers declare:
 * <pre>
 * semaphore-acquire.lua
 *   {1, available}  acquired (now, granted from the line earlier, or by an earlier run of this same
 *                   call); available is what is left for others
 *   {0, wait_ms}    queued (or kept in place); wait_ms: how long until permits can come free
 *                   without a wake-up
 *   {-1, total}     more permits asked for than the total; the waiter left the line
 *   {-2, 0}         this acquisition was given up before this call ran; nothing changed
 * semaphore-try.lua
 *   {1, taken}      acquired taken permits (for 0: every available permit, possibly none); a second
 *                   run of the same call returns what the first took and takes nothing more
 *   {0, 0}          not enough free permits; nothing changed
 *   {-1, total}     more permits asked for than the total; nothing changed
 *   {-2, 0}         this acquisition was given up before this call ran; nothing changed
 * </pre>
 *
 * @param outcome what the call did
 * @param value the number that goes with the outcome: for {@link Outcome#ACQUIRED} the permits left
 *     ({@code semaphore-acquire.lua}) or taken ({@code semaphore-try.lua}); for {@link
 *     Outcome#QUEUED} the wait in ms ({@code 0} from {@code semaphore-try.lua}); for {@link
 *     Outcome#EXCEEDS_TOTAL} the total; for {@link Outcome#GIVEN_UP} {@code 0}
 */
public record SemaphoreReply(Outcome outcome, long value) {

    /** What a semaphore acquire or try did, by the reply's first element. */
    public enum Outcome {
        /** {@code 1}: the permits are the caller's. */
        ACQUIRED(1),
        /**
         * {@code 0}: not acquired now. {@code semaphore-acquire.lua} queued the waiter (or kept its
         * place); {@code semaphore-try.lua}, which never queues, changed nothing.
         */
        QUEUED(0),
        /** {@code -1}: more permits asked for than the total; the caller is not in the line. */
        EXCEEDS_TOTAL(-1),
        /** {@code -2}: the acquisition was given up before this call ran; nothing changed. */
        GIVEN_UP(-2);

        /** The reply's first element for this outcome. */
        public final long code;

        Outcome(long code) {
            this.code = code;
        }
    }

    private static final Set<Script> DECODED = EnumSet.of(Script.SEMAPHORE_ACQUIRE, Script.SEMAPHORE_TRY);

    /**
     * Reads one of the scripts' replies above.
     *
     * @param script the script that answered
     * @param reply its raw reply
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is not one of the scripts above
     * @throws UnexpectedReplyException if the reply has none of the script's declared shapes
     */
    public static SemaphoreReply of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "SemaphoreReply");
        boolean isTry = script == Script.SEMAPHORE_TRY;
        String expected = isTry ? "{1, taken}, {0, 0}, {-1, total} or {-2, 0}"
                : "{1, available}, {0, wait_ms}, {-1, total} or {-2, 0}";
        List<?> list = ReplyShape.list(script, reply, expected, 2);
        long code = ReplyShape.integer(script, list, 0, expected);
        long value = ReplyShape.integer(script, list, 1, expected);
        for (Outcome outcome : Outcome.values()) {
            if (outcome.code == code) {
                boolean zeroOnly = outcome == Outcome.GIVEN_UP || (isTry && outcome == Outcome.QUEUED);
                if (zeroOnly && value != 0L) {
                    break;
                }
                return new SemaphoreReply(outcome, value);
            }
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }
}
