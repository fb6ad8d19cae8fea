package dev.synchronizers.redis;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * The reentrant, non-fair lock behind {@link dev.synchronizers.Synchronizers#lock(String)}.
 *
 * <p>A hold is owned by one thread of one client: the owner string is {@code <client-id>:<thread-id>}.
 * Reentrancy is counted in this object ({@link Hold}); Redis sees only the first acquisition,
 * which issues the fencing token, and the last release. A thread arriving while the lock is free
 * takes it even if others wait (non-fair); waiters of this client queue locally in arrival order
 * and only the first talks to Redis (see {@link Acquirer}).
 *
 * <p>A hold without a lease time is renewed by the client's watchdog; one with a lease time is
 * not, and ends with its lease. A hold that ends without {@link #unlock()} is lost: the lost-hold
 * listeners are told (except for a fixed lease), {@link #isHeldByCurrentThread()} turns false and
 * the next {@code unlock()} throws {@link LostHoldException}.
 *
 * <p>An uncontended {@code lock()} and {@code unlock()} cost one script call each. Re-entering and
 * the local queries cost none.
 *
 * <h2>Distributed considerations</h2>
 * Because reentrancy is local, a hold count is lost with its process, and Redis cannot tell how
 * deep a holder is; the lease is what frees the lock after a crash. See {@link DistributedLock}
 * for pauses, failover, clocks and fencing tokens.
 */
final class RedisLock implements DistributedLock {

    private static final String KIND = "lock";

    private final String name;
    private final LockKeys keys;
    private final Machinery machinery;
    private final Acquirer acquirer;
    /** This client's holds, by thread id. */
    private final Map<Long, Hold> holds = new ConcurrentHashMap<>();

    RedisLock(String name, Machinery machinery) {
        this.name = name;
        this.keys = LockKeys.of(machinery.keyPrefix, name);
        this.machinery = machinery;
        this.acquirer = new Acquirer(machinery.wakeups, keys.wakeups(), machinery.leaseMillis);
    }

    @Override
    public String name() {
        return name;
    }

    /* --------------- acquire --------------- */

    @Override
    public void lock() {
        acquireUninterruptibly(0);
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        acquireUninterruptibly(leaseMillis(leaseTime, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(Acquirer.FOREVER, true, 0);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(0, false, 0);
        } catch (InterruptedException e) {
            throw new AssertionError("a single attempt does not wait", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(unit.toNanos(time), true, 0);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long leaseMillis = leaseMillis(leaseTime, unit);
        return acquire(unit.toNanos(waitTime), true, leaseMillis);
    }

    private void acquireUninterruptibly(long fixedLeaseMillis) {
        try {
            acquire(Acquirer.FOREVER, false, fixedLeaseMillis);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait threw InterruptedException", e);
        }
    }

    /**
     * Acquires for the current thread.
     *
     * @param fixedLeaseMillis the lease of a fresh hold, or 0 for a watchdog-renewed one
     */
    private boolean acquire(long timeoutNanos, boolean interruptible, long fixedLeaseMillis)
            throws InterruptedException {
        long threadId = Machinery.currentThreadId();
        Hold held = holds.get(threadId);
        if (held != null) {
            LostHold.Cause ended = held.lease.endedBecause();
            if (ended != null) {
                throw lost(ended, "cannot re-enter");
            }
            if (held.count == Integer.MAX_VALUE) {
                throw new Error("Maximum lock count exceeded");
            }
            held.count++;
            return true;
        }
        machinery.checkOpen();
        String owner = machinery.currentOwner();
        long leaseMillis = fixedLeaseMillis > 0 ? fixedLeaseMillis : machinery.leaseMillis;
        String lease = Long.toString(leaseMillis);
        Attempt attempt = acquirer.acquire(subscribed -> {
            machinery.checkOpen();
            long sent = System.nanoTime();
            Script script = subscribed ? Script.LOCK_ACQUIRE_WAITING : Script.LOCK_ACQUIRE;
            List<Object> reply = machinery.await(
                    machinery.scripts.run(script, keys.forAcquire(), owner, lease), "acquire lock '" + name + "'");
            return Attempt.of(reply, sent);
        }, timeoutNanos, interruptible);
        if (!attempt.acquired()) {
            return false;
        }
        long token = attempt.fencingToken();
        Watchdog.Lease registered = machinery.watchdog.register(Script.LOCK_RENEW, keys.lock(), owner,
                fixedLeaseMillis, attempt.sentNanos(),
                cause -> machinery.listeners.report(new LostHold(name, KIND, threadId, token, cause)));
        holds.put(threadId, new Hold(owner, token, registered));
        return true;
    }

    /* --------------- release --------------- */

    @Override
    public void unlock() {
        long threadId = Machinery.currentThreadId();
        Hold held = holds.get(threadId);
        if (held == null) {
            throw new IllegalMonitorStateException(
                    "lock '" + name + "': unlock() by a thread that does not hold it (never taken or already released)");
        }
        if (held.count > 1) {
            held.count--;
            LostHold.Cause ended = held.lease.endedBecause();
            if (ended != null) {
                throw lost(ended, "unlock()");
            }
            return;
        }
        holds.remove(threadId);
        if (!machinery.watchdog.unregister(held.lease)) {
            throw lost(held.lease.endedBecause(), "unlock()");
        }
        long released = machinery.<Long>await(
                machinery.scripts.run(Script.LOCK_RELEASE, keys.forRelease(), held.owner, Long.toString(held.token)),
                "release lock '" + name + "' (the hold was dropped locally and expires with its lease)");
        if (released == 0L) {
            LostHold.Cause cause = held.lease.fixed() ? LostHold.Cause.LEASE_EXPIRED : LostHold.Cause.GONE;
            machinery.listeners.report(new LostHold(name, KIND, threadId, held.token, cause));
            throw lost(cause, "unlock()");
        }
        acquirer.wakeHead();
    }

    @Override
    public boolean forceUnlock() {
        machinery.checkOpen();
        long released = machinery.<Long>await(
                machinery.scripts.run(Script.LOCK_FORCE_UNLOCK, keys.forRelease()), "force-unlock lock '" + name + "'");
        // This client's own holders learn at once; other clients' at their watchdog's next tick.
        for (Hold held : holds.values()) {
            machinery.watchdog.declareLost(held.lease, LostHold.Cause.GONE);
        }
        acquirer.wakeHead();
        return released == 1L;
    }

    /* --------------- queries --------------- */

    @Override
    public boolean isLocked() {
        machinery.checkOpen();
        return machinery.await(machinery.redis.exists(keys.lock()), "query lock '" + name + "'") == 1L;
    }

    @Override
    public boolean isHeldByCurrentThread() {
        Hold held = holds.get(Machinery.currentThreadId());
        return held != null && held.lease.endedBecause() == null;
    }

    @Override
    public int getHoldCount() {
        Hold held = holds.get(Machinery.currentThreadId());
        return held == null ? 0 : held.count;
    }

    @Override
    public long fencingToken() {
        Hold held = holds.get(Machinery.currentThreadId());
        if (held == null) {
            throw new IllegalMonitorStateException("lock '" + name + "': fencingToken() by a thread that does not hold it");
        }
        return held.token;
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("lock '" + name + "': conditions are not supported by distributed locks");
    }

    /** Shows the name and what this JVM knows; makes no network call. */
    @Override
    public String toString() {
        int count = 0;
        for (Hold held : holds.values()) {
            count += held.count;
        }
        String state = count == 0 ? "not held by this JVM" : "held by this JVM: " + count + (count == 1 ? " hold" : " holds");
        return "RedisLock[" + name + ", " + state + (acquirer.hasWaiters() ? ", local waiters" : "") + "]";
    }

    /* --------------- helpers --------------- */

    private LostHoldException lost(LostHold.Cause cause, String what) {
        return new LostHoldException(name, cause,
                "lock '" + name + "': " + what + " failed: the hold was lost: " + LostHoldListeners.describe(cause));
    }

    private static long leaseMillis(long leaseTime, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        if (leaseTime <= 0) {
            throw new IllegalArgumentException("leaseTime must be > 0: " + leaseTime + " " + unit);
        }
        long millis = unit.toMillis(leaseTime);
        if (millis < 1) {
            throw new IllegalArgumentException("leaseTime must be at least 1 ms: " + leaseTime + " " + unit);
        }
        return millis;
    }

    /** One thread's hold: its count (touched only by the owning thread), token and lease. */
    private static final class Hold {
        final String owner;
        final long token;
        final Watchdog.Lease lease;
        volatile int count = 1;

        Hold(String owner, long token, Watchdog.Lease lease) {
            this.owner = owner;
            this.token = token;
            this.lease = lease;
        }
    }
}
