package dev.synchronizers.redis.script;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of a batched renew script: per item, in the order the items were sent, whether its
 * lease was renewed. The headers declare:
 * <pre>
 * {r1, ..., rn}  ri = 1: item i renewed (every script)
 *                ri = 0: item i is gone: its hold, grant or place no longer exists (every script)
 *                ri = 2: hold i was not on the node and is taken back (redlock-renew.lua only)
 *                ri = 2: cache i renewed, and another client asks it back (lock-cache-renew.lua only)
 *                ri = 2: waiter i is signalled, and its signal renewed (cond-renew-place.lua only)
 * </pre>
 *
 * <p>Decodes the replies of {@code lock-renew.lua}, {@code fair-lock-renew-place.lua},
 * {@code rw-read-renew.lua}, {@code semaphore-renew-place.lua}, {@code semaphore-renew.lua},
 * {@code redlock-renew.lua}, {@code cond-renew-place.lua} and {@code lock-cache-renew.lua}.
 *
 * @param outcomes what the call did to each item, in the order the items were sent
 */
public record RenewReply(List<Outcome> outcomes) {

    /** What a renewal did to one item. */
    public enum Outcome {
        /** 0: the item no longer exists; nothing was renewed. */
        GONE,
        /** 1: the item's lease was set again. */
        RENEWED,
        /** 2: the hold was not on the node, and the renewal took it back there ({@code redlock-renew.lua}). */
        TAKEN_BACK,
        /** 2: the cache's lease was set again, and another client asks it back ({@code lock-cache-renew.lua}). */
        ASKED_BACK,
        /**
         * 2: the condition waiter is signalled and has not taken the signal up yet; the signal's
         * lease was set again ({@code cond-renew-place.lua}).
         */
        SIGNALLED
    }

    private static final Set<Script> DECODED = EnumSet.of(Script.LOCK_RENEW, Script.FAIR_LOCK_RENEW_PLACE,
            Script.RW_READ_RENEW, Script.SEMAPHORE_RENEW_PLACE, Script.SEMAPHORE_RENEW, Script.REDLOCK_RENEW, Script.COND_RENEW_PLACE,
            Script.LOCK_CACHE_RENEW);

    /** Copies the list, so that the reply cannot change. */
    public RenewReply {
        outcomes = List.copyOf(outcomes);
    }

    /**
     * Returns what the call did to item {@code index}.
     *
     * @param index the item's position in the call, from 0
     * @return its outcome
     * @throws IndexOutOfBoundsException if the call had no such item
     */
    public Outcome outcome(int index) {
        return outcomes.get(index);
    }

    /**
     * Reads one of the scripts' replies above, to a call of {@code items} items.
     *
     * @param script the script that answered
     * @param reply its raw reply
     * @param items how many items the call renewed
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is not one of the scripts above
     * @throws UnexpectedReplyException if the reply does not have one answer per item, each of the
     *     values the script declares
     */
    public static RenewReply of(Script script, List<Object> reply, int items) {
        ReplyShape.requireOneOf(DECODED, script, "RenewReply");
        boolean takesBack = script == Script.REDLOCK_RENEW;
        boolean asksBack = script == Script.LOCK_CACHE_RENEW;
        boolean signals = script == Script.COND_RENEW_PLACE;
        String expected = items + (takesBack || asksBack || signals ? " answers of 0, 1 or 2" : " answers of 0 or 1");
        List<?> list = ReplyShape.list(script, reply, expected, items);
        List<Outcome> outcomes = new ArrayList<>(items);
        for (int i = 0; i < items; i++) {
            long answer = ReplyShape.integer(script, list, i, expected);
            if (answer == 0L) {
                outcomes.add(Outcome.GONE);
            } else if (answer == 1L) {
                outcomes.add(Outcome.RENEWED);
            } else if (answer == 2L && takesBack) {
                outcomes.add(Outcome.TAKEN_BACK);
            } else if (answer == 2L && asksBack) {
                outcomes.add(Outcome.ASKED_BACK);
            } else if (answer == 2L && signals) {
                outcomes.add(Outcome.SIGNALLED);
            } else {
                throw new UnexpectedReplyException(script, reply, expected);
            }
        }
        return new RenewReply(outcomes);
    }
}
