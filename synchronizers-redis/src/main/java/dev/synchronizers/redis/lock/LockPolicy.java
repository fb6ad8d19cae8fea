package dev.synchronizers.redis.lock;

import dev.synchronizers.redis.script.Script;

/**
 * What differs between the kinds of lock served by {@link RedisLock}: which scripts they run and
 * whether their waiters queue locally or in Redis. Stateless.
 *
 * <ul>
 *   <li>{@link #NONFAIR}: waiters of one client queue locally and only the first talks to Redis; a
 *       failed try of that first waiter puts it in a line in Redis (one place per waiting client),
 *       and a release hands the lock to the first place, told on its client's own channel: one
 *       client woken per release, not the herd. A free lock goes to whoever tries first (a newcomer
 *       barges); a neighbour's unlock hands the lock to the local first waiter while it sleeps
 *       (lock-handover.lua), a bounded number of times in a row while other clients wait. The
 *       untimed {@code tryLock()} and a zero wait try once and leave no trace.</li>
 *   <li>{@link #FAIR}: every try by a waiter takes (or keeps) its place in the queue in Redis, so
 *       every waiter of every client is in the one queue; a release hands the lock to the first,
 *       who learns it from a message naming it, with the new token.</li>
 *   <li>{@link #READ} and {@link #WRITE}: the two halves of a read-write lock. Waiting writers
 *       queue in Redis like fair waiters; readers wait behind the writer and behind waiting
 *       writers, and are woken all at once when the writer leaves.</li>
 * </ul>
 * In every policy the untimed {@code tryLock()} barges, as {@code ReentrantLock(true).tryLock()}
 * and {@code ReentrantReadWriteLock}'s {@code tryLock()} do.
 */
public enum LockPolicy {
    NONFAIR("lock", Script.LOCK_ACQUIRE_WAITING, Script.LOCK_ACQUIRE_WAITING, Script.LOCK_ACQUIRE,
            Script.LOCK_RELEASE, Script.LOCK_RENEW, Script.LOCK_FORCE_UNLOCK, Script.LOCK_ACQUIRE_WAITING,
            Script.FAIR_LOCK_LEAVE, true),
    FAIR("fair lock", Script.FAIR_LOCK_ACQUIRE, Script.FAIR_LOCK_ACQUIRE, Script.LOCK_ACQUIRE, Script.FAIR_LOCK_RELEASE,
            Script.LOCK_RENEW, Script.LOCK_FORCE_UNLOCK, Script.FAIR_LOCK_ACQUIRE, Script.FAIR_LOCK_LEAVE, false),
    READ("read lock", Script.RW_READ_ACQUIRE, Script.RW_READ_ACQUIRE, Script.RW_READ_TRY, Script.RW_READ_RELEASE,
            Script.RW_READ_RENEW, Script.RW_FORCE_UNLOCK, null, null, false),
    WRITE("write lock", Script.RW_WRITE_ACQUIRE, Script.RW_WRITE_ACQUIRE, Script.RW_WRITE_TRY, Script.RW_WRITE_RELEASE,
            Script.LOCK_RENEW, Script.RW_FORCE_UNLOCK, Script.RW_WRITE_ACQUIRE, Script.RW_WRITE_LEAVE, false);

    /** How messages and lost-hold events name this kind. */
    final String kind;
    /** Used by a waiter's first try, before it subscribes. */
    final Script firstTry;
    /** Used by a waiter's tries once it is subscribed to wake-ups. */
    final Script subscribedTry;
    /** Used by the untimed {@code tryLock()}: barges. */
    final Script tryOnce;
    final Script release;
    /** The batched script the watchdog renews holds of this kind with. */
    final Script renew;
    final Script forceUnlock;
    /** The try that puts a waiter in Redis's queue when it fails (takes a place lease argument), or null. */
    final Script queuedTry;
    /** The script that takes a waiter that gave up out of Redis's queue, or null. */
    final Script leave;
    /** Whether waiters of one client queue locally, only the first talking to Redis. */
    final boolean localQueue;

    LockPolicy(String kind, Script firstTry, Script subscribedTry, Script tryOnce, Script release, Script renew,
            Script forceUnlock, Script queuedTry, Script leave, boolean localQueue) {
        this.kind = kind;
        this.firstTry = firstTry;
        this.subscribedTry = subscribedTry;
        this.tryOnce = tryOnce;
        this.release = release;
        this.renew = renew;
        this.forceUnlock = forceUnlock;
        this.queuedTry = queuedTry;
        this.leave = leave;
        this.localQueue = localQueue;
    }
}
