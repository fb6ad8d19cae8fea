package dev.synchronizers.redis.client;

import dev.synchronizers.redis.script.AcquireReply;

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
public record Attempt(boolean acquired, long fencingToken, long holderTtlMillis, long sentNanos) {

    /** The attempt a lock script's decoded reply describes: its token if acquired, else its wait and grant floor. */
    public static Attempt of(AcquireReply reply, long sentNanos) {
        return reply.acquired()
                ? new Attempt(true, reply.token(), 0, sentNanos)
                : new Attempt(false, reply.grantFloor(), reply.waitMillis(), sentNanos);
    }
}
