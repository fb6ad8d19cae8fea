package dev.synchronizers.redis.lock;

import dev.synchronizers.redis.client.HashTag;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.script.Script;

/**
 * Key and channel names for one lock (non-fair, fair, or read-write); all share the name's hash
 * tag so they live in one Cluster slot. No other class builds key names for a lock, and
 * {@link #keysFor(Script)} is the one place that says which keys each script takes.
 *
 * @param lock the hash of the (write) hold: owner to fencing token, plus the non-fair waiting mark
 * @param token the last fencing token issued for the name; lives one second past its issue
 * @param queue waiting owners in arrival order: every fair waiter or writer; the first waiter of each
 *     client of a non-fair lock
 * @param places waiting owners with the end of their place's lease
 * @param readers read holders with the end of their read lease (read-write lock)
 * @param readTokens read holders with the fencing token of their read hold (read-write lock)
 * @param readersWaiting set while a reader waits (read-write lock)
 * @param wakeups the channel of the name's wake-ups; the non-fair and fair locks' line is served on one
 *     channel per client under it ({@link #clientWakeups})
 */
public record LockKeys(String lock, String token, String queue, String places, String readers, String readTokens,
        String readersWaiting, String wakeups) {

    /** The keys of {@code lock(name)}. */
    public static LockKeys of(String prefix, String name) {
        return under(HashTag.base(prefix, "lock", name));
    }

    /** The keys of {@code fairLock(name)}: a lock of its own, apart from {@code lock(name)}. */
    public static LockKeys fair(String prefix, String name) {
        return under(HashTag.base(prefix, "fairlock", name));
    }

    /**
     * The keys of a {@code Redlock}'s {@code lock(name)} on each of its nodes: apart from a
     * single-server lock of the same name and prefix.
     */
    public static LockKeys redlock(String prefix, String name) {
        return under(HashTag.base(prefix, "redlock", name));
    }

    /** The keys of {@code readWriteLock(name)}, shared by its two halves. */
    public static LockKeys readWrite(String prefix, String name) {
        return under(HashTag.base(prefix, "rwlock", name));
    }

    private static LockKeys under(String base) {
        return new LockKeys(base, base + ":token", base + ":queue", base + ":places", base + ":readers",
                base + ":rtokens", base + ":rwait", base + ":wake");
    }

    /**
     * The channel on which a release hands this lock to a waiter of the client {@code clientId}
     * (the non-fair and fair locks' line, {@code lock-release.lua}): one per client and name, under
     * the name's hash tag, so that a release wakes one client, not every client that waits.
     */
    public String clientWakeups(String clientId) {
        return wakeups + ":" + clientId;
    }

    /**
     * The channel on which other clients ask the client {@code clientId} to give back a lock it
     * caches ({@code lock-ask.lua}; docs/design/lock-caching.md): one per client, under the client
     * id's hash tag.
     */
    public static String askChannel(String prefix, String clientId) {
        return Machinery.askChannel(prefix, clientId);
    }

    /**
     * The keys of one condition of this lock ({@link RedisCondition}): under the lock's own keys, so
     * in its Cluster slot, and apart from every other condition of it.
     *
     * @param id the condition's identity within the lock, e.g. {@code "0"} for the first
     */
    public ConditionKeys condition(String id) {
        String base = lock + ":cond:" + id;
        return new ConditionKeys(lock, base + ":queue", base + ":places", base + ":signalled", base + ":signals",
                base + ":wake");
    }

    /**
     * Key and channel names for one condition of a lock.
     *
     * @param lock the lock's hold hash, which signals and registrations check
     * @param queue waiters not yet signalled, in arrival order
     * @param places waiters with the end of their place's lease
     * @param signalled waiters signalled and not yet taken up, with the end of their signal's lease
     * @param signals the ids of recent signals, so that a repeated one is recognised
     * @param wakeups the base of the channels that name each waiter signalled: one per client, {@link #clientWakeups}
     */
    public record ConditionKeys(String lock, String queue, String places, String signalled, String signals,
            String wakeups) {

        /**
         * The channel on which a signal names a waiter of the client {@code clientId}: one per client
         * and condition, so that a signal wakes one client, not every client with a waiter.
         */
        public String clientWakeups(String clientId) {
            return wakeups + ":" + clientId;
        }

        /**
         * The keys a script takes, in its header's order; for the batched renewal, one item's.
         *
         * @throws IllegalArgumentException for a script that is not a condition's
         */
        public String[] keysFor(Script script) {
            return switch (script) {
                case COND_AWAIT -> new String[] {lock, queue, places, signalled, wakeups};
                case COND_SIGNAL -> new String[] {lock, queue, places, signalled, signals, wakeups};
                case COND_LEAVE, COND_RENEW_PLACE -> new String[] {queue, places, signalled, wakeups};
                default -> throw new IllegalArgumentException(script + " is not a condition script");
            };
        }
    }

    /**
     * The keys a script takes, in its header's order; for a batched renew script, one item's.
     *
     * @throws IllegalArgumentException for a script that is not a lock's
     */
    public String[] keysFor(Script script) {
        return switch (script) {
            case LOCK_ACQUIRE, LOCK_CACHE_ACQUIRE, LOCK_CACHE_RESERVE, REDLOCK_SETTLE, REDLOCK_RENEW ->
                    new String[] {lock, token};
            case LOCK_ACQUIRE_WAITING, FAIR_LOCK_ACQUIRE, LOCK_HANDOVER -> new String[] {lock, token, queue, places};
            case REDLOCK_FORCE_UNLOCK -> new String[] {lock, token, wakeups};
            case LOCK_RELEASE, LOCK_GIVE_BACK, FAIR_LOCK_RELEASE, FAIR_LOCK_LEAVE ->
                    new String[] {lock, token, queue, places, wakeups};
            case LOCK_FORCE_UNLOCK -> new String[] {lock, queue, places, wakeups};
            case LOCK_RENEW, LOCK_CACHE_RENEW -> new String[] {lock};
            case FAIR_LOCK_RENEW_PLACE -> new String[] {queue, places};
            case RW_READ_ACQUIRE -> new String[] {lock, token, readers, readTokens, queue, places, readersWaiting};
            case RW_READ_TRY -> new String[] {lock, token, readers, readTokens};
            case RW_READ_RELEASE -> new String[] {lock, readers, readTokens, queue, places, wakeups};
            case RW_READ_RENEW -> new String[] {readers, readTokens};
            case RW_WRITE_ACQUIRE -> new String[] {lock, token, readers, readTokens, queue, places};
            case RW_WRITE_TRY -> new String[] {lock, token, readers};
            case RW_WRITE_RELEASE, RW_WRITE_LEAVE -> new String[] {lock, queue, places, readersWaiting, wakeups};
            case RW_FORCE_UNLOCK -> new String[] {lock, readers, readTokens, queue, places, readersWaiting, wakeups};
            case LOCK_SNAPSHOT -> new String[] {lock, places};
            case RW_SNAPSHOT -> new String[] {lock, readers, readTokens, places, readersWaiting};
            default -> throw new IllegalArgumentException(script + " is not a lock script");
        };
    }
}
