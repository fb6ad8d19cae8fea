package dev.synchronizers.redis.semaphore;

import dev.synchronizers.redis.client.HashTag;

/**
 * Key and channel names for one semaphore; all share the name's hash tag so they live in one
 * Cluster slot. No other class builds key names for a semaphore.
 *
 * @param total the total number of permits; persists (no TTL) until deleted
 * @param holds grant (one acquisition) to permits held, 0 for a given-up acquisition, plus {@code :sum}
 * @param leases grant to the end of its lease
 * @param queue waiters not yet served, in arrival order
 * @param places queued waiters with the end of their place's lease
 * @param asks queued waiters with the permits they asked for
 * @param wakeups the base of the client channels ({@link #clientWakeups}); nothing is published on it itself
 */
public record SemaphoreKeys(String total, String holds, String leases, String queue, String places, String asks,
        String wakeups) {

    public static SemaphoreKeys of(String prefix, String name) {
        String base = HashTag.base(prefix, "semaphore", name);
        return new SemaphoreKeys(base, base + ":holds", base + ":leases", base + ":queue", base + ":places",
                base + ":asks", base + ":wake");
    }

    /**
     * The channel on which the scripts tell the waiters of the client {@code clientId} of this
     * semaphore what concerns them: {@code granted:<waiter>}, a waiter's bare name (ask again), and
     * {@code released} (the total grew, for waiters asking above it). One per client and name, under
     * the name's hash tag, so that a grant reaches one client, not every client that waits.
     */
    String clientWakeups(String clientId) {
        return wakeups + ":" + clientId;
    }

    /** For acquire, release, leave and add, which all serve the line. */
    String[] forQueue() {
        return new String[] {total, holds, leases, queue, places, asks, wakeups};
    }

    /** For setting the total, which wakes the waiters that came before it. */
    String[] forSet() {
        return new String[] {total, holds, wakeups};
    }

    String[] forTry() {
        return new String[] {total, holds, leases};
    }

    String[] forRenew() {
        return new String[] {holds, leases};
    }

    /** For the read-only snapshot. */
    String[] forSnapshot() {
        return new String[] {total, holds, leases, places};
    }

    String[] forPlace() {
        return new String[] {queue, places, asks};
    }
}
