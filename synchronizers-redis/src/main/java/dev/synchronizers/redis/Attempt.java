package dev.synchronizers.redis;

import java.util.List;

/**
 * The outcome of one acquire step: one script call.
 *
 * @param acquired whether the caller now holds it
 * @param fencingToken the new hold's fencing token, if acquired
 * @param holderTtlMillis if not acquired, the holder's remaining lease in ms; {@code -1} if it has
 *     none (the waiter then re-checks after the client's default lease)
 * @param sentNanos {@link System#nanoTime()} just before the step was sent; a lease granted by the
 *     step started after it
 */
record Attempt(boolean acquired, long fencingToken, long holderTtlMillis, long sentNanos) {

    /** Reads a {@code {1, token}} or {@code {0, pttl}} script reply. */
    static Attempt of(List<Object> reply, long sentNanos) {
        long value = (Long) reply.get(1);
        return ((Long) reply.get(0)) == 1L
                ? new Attempt(true, value, 0, sentNanos)
                : new Attempt(false, -1, value, sentNanos);
    }
}
