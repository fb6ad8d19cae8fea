package dev.synchronizers.redis;

/**
 * Key and channel names for one semaphore; all share the name's hash tag so they live in one
 * Cluster slot. No other class builds key names for a semaphore.
 *
 * @param total the total number of permits; persists (no TTL) until deleted
 * @param holds client to permits held, plus {@code :sum}
 * @param leases client to the end of the lease on its permits
 * @param queue waiters in arrival order
 * @param places waiters with the end of their place's lease
 * @param wakeups the channel the names of woken waiters are published to
 */
record SemaphoreKeys(String total, String holds, String leases, String queue, String places, String wakeups) {

    static SemaphoreKeys of(String prefix, String name) {
        String base = prefix + ":semaphore:{" + name + "}";
        return new SemaphoreKeys(base, base + ":holds", base + ":leases", base + ":queue", base + ":places",
                base + ":wake");
    }

    String[] forAcquire() {
        return new String[] {total, holds, leases, queue, places, wakeups};
    }

    String[] forTry() {
        return new String[] {total, holds, leases};
    }

    String[] forRelease() {
        return new String[] {total, holds, leases, queue, places, wakeups};
    }

    String[] forAdd() {
        return new String[] {total, holds, queue, wakeups};
    }

    String[] forLeave() {
        return new String[] {queue, places, wakeups};
    }

    String[] forRenew() {
        return new String[] {holds, leases};
    }

    String[] forPlace() {
        return new String[] {queue, places};
    }
}
