package dev.synchronizers.redis;

/**
 * Key and channel names for one lock; all share the name's hash tag so they live in one Cluster
 * slot. No other class builds key names for a lock.
 *
 * @param lock the hash of the hold: owner to fencing token, plus the non-fair waiting mark
 * @param token the last fencing token issued for the name; lives one second past its issue
 * @param queue the fair lock's waiters in arrival order
 * @param places the fair lock's waiters with the end of their place's lease
 * @param wakeups the channel releases publish to when someone waits
 */
record LockKeys(String lock, String token, String queue, String places, String wakeups) {

    /** The keys of {@code lock(name)}. */
    static LockKeys of(String prefix, String name) {
        return under(prefix + ":lock:{" + name + "}");
    }

    /** The keys of {@code fairLock(name)}: a lock of its own, apart from {@code lock(name)}. */
    static LockKeys fair(String prefix, String name) {
        return under(prefix + ":fairlock:{" + name + "}");
    }

    private static LockKeys under(String base) {
        return new LockKeys(base, base + ":token", base + ":queue", base + ":places", base + ":wake");
    }

    /** The keys of the non-fair acquire scripts, in their header's order. */
    String[] forAcquire() {
        return new String[] {lock, token};
    }

    /** The keys of the fair acquire script, in its header's order. */
    String[] forFairAcquire() {
        return new String[] {lock, token, queue, places};
    }

    /** The keys of the release, force-unlock and leave scripts, in their header's order. */
    String[] forRelease() {
        return new String[] {lock, queue, places, wakeups};
    }

    /** The keys of one item of the place-renewal script. */
    String[] forPlace() {
        return new String[] {queue, places};
    }

    /** The key of one item of the hold-renewal script. */
    String[] forHold() {
        return new String[] {lock};
    }
}
