package dev.synchronizers.redis;

import dev.synchronizers.redis.script.Script;

/**
 * What differs between the non-fair and the fair lock. Stateless.
 *
 * <ul>
 *   <li>Non-fair: a waiter's first try leaves no trace; after it subscribes, a failed try records
 *       that someone waits, so that the release publishes. Waiters of one client queue locally and
 *       only the first talks to Redis.</li>
 *   <li>Fair: every try by a waiter takes (or keeps) its place in the queue in Redis, so every
 *       waiter of every client is in the one queue and no local queue is needed; a release wakes
 *       the first waiter by name. {@code tryLock()} barges, with the non-fair script, as
 *       {@code ReentrantLock(true).tryLock()} does.</li>
 * </ul>
 */
enum LockPolicy {
    NONFAIR(Script.LOCK_ACQUIRE, Script.LOCK_ACQUIRE_WAITING, true),
    FAIR(Script.FAIR_LOCK_ACQUIRE, Script.FAIR_LOCK_ACQUIRE, false);

    /** Used by a waiter's first try, before it subscribes. */
    final Script firstTry;
    /** Used by a waiter's tries once it is subscribed to wake-ups. */
    final Script subscribedTry;
    /** Used by the untimed {@code tryLock()}: barges in both policies. */
    final Script tryOnce = Script.LOCK_ACQUIRE;
    /** Whether waiters of one client queue locally (non-fair) or each take a place in Redis (fair). */
    final boolean localQueue;

    LockPolicy(Script firstTry, Script subscribedTry, boolean localQueue) {
        this.firstTry = firstTry;
        this.subscribedTry = subscribedTry;
        this.localQueue = localQueue;
    }

    boolean queuesInRedis() {
        return !localQueue;
    }
}
