package dev.synchronizers.redis;

import java.util.List;

/**
 * The outcome of one acquire step: one script call.
 *
 * @param acquired whether the caller now holds it
 * @param fencingToken the new hold's fencing token, if acquired; if not, a queueing try's grant
 *     floor (at least every token issued before the try, so a grant message carrying a token at
 *     or below it is older than this wait), or {@code -1}
 * @param holderTtlMillis if not acquired, the holder's remaining lease in ms; {@code -1} if it has
 *     none (the waiter then re-checks after the client's default lease)
 * @param sentNanos {@link System#nanoTime()} just before the step was sent; a lease granted by the
 *     step started after it
 */
record Attempt(boolean acquired, long fencingToken, long holderTtlMillis, long sentNanos) {

    /** Reads a {@code {1, token}}, {@code {0, pttl}} or {@code {0, pttl, floor}} script reply. */
    static Attempt of(List<Object> reply, long sentNanos) {
        long value = (Long) reply.get(1);
        return ((Long) reply.get(0)) == 1L
                ? new Attempt(true, value, 0, sentNanos)
                : new Attempt(false, reply.size() > 2 ? (Long) reply.get(2) : -1, value, sentNanos);
    }
}
