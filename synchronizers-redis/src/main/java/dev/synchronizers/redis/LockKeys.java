package dev.synchronizers.redis;

/**
 * Key and channel names for one lock; all share the name's hash tag so they live in one Cluster
 * slot. No other class builds key names for a lock.
 *
 * @param lock the hash of the hold: owner to fencing token, plus the waiting mark
 * @param token the last fencing token issued for the name; lives one second past its issue
 * @param wakeups the channel a release publishes to when someone waits
 */
record LockKeys(String lock, String token, String wakeups) {

    static LockKeys of(String prefix, String name) {
        String base = prefix + ":lock:{" + name + "}";
        return new LockKeys(base, base + ":token", base + ":wake");
    }

    /** The keys of the acquire scripts, in their header's order. */
    String[] forAcquire() {
        return new String[] {lock, token};
    }

    /** The keys of the release and force-unlock scripts, in their header's order. */
    String[] forRelease() {
        return new String[] {lock, wakeups};
    }
}
