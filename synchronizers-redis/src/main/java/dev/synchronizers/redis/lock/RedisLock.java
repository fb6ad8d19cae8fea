package dev.synchronizers.redis.lock;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.AsyncLine;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.LostHoldListeners;
import dev.synchronizers.redis.client.Machinery;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;

/**
 * The reentrant lock behind every lock of the library: {@link dev.synchronizers.Synchronizers#lock}
 * (non-fair), {@link dev.synchronizers.Synchronizers#fairLock} (fair), both halves of
 * {@link dev.synchronizers.Synchronizers#readWriteLock}, and {@code Redlock.lock} (a quorum of
 * independent servers). This class is the {@code java.util.concurrent} facade: argument checks,
 * re-entry, this JVM's holds, lost-hold errors and reports, and keeping a held lock reachable. What
 * goes to Redis is its {@link LockBackend}'s: one server ({@link ServerLockBackend}, with the
 * {@link LockPolicy} of its kind) or a quorum ({@code QuorumLockBackend}).
 *
 * <p>A hold is owned by one thread of one client. Reentrancy is counted in this object
 * ({@link Holds}); Redis sees only the first acquisition, which issues the fencing token, and the
 * last release.
 *
 * <p>A hold without a lease time is renewed by the client's watchdog (every node's, for a quorum);
 * one with a lease time is not, and ends with its lease. A hold that ends without {@link #unlock()}
 * is lost: the lost-hold listeners are told (except for a fixed lease), {@link #isHeldByCurrentThread()}
 * turns false and the next {@code unlock()} throws {@link LostHoldException}; the first local
 * waiter is woken, as an unlock would have. A held lock keeps this object reachable, so that
 * {@code unlock()} finds the hold however the object is reached again; a hold that ended no longer
 * does. Its record stays in this object: {@code unlock()} through it still throws
 * {@code LostHoldException}, but once every reference was dropped and the object collected,
 * {@code unlock()} through a new object for the name throws a plain
 * {@link IllegalMonitorStateException} (never taken through it).
 *
 * <p>Re-entering and the local queries ({@code isHeldByCurrentThread}, {@code getHoldCount},
 * {@code fencingToken}) make no network call; what a fresh acquisition and the last release cost
 * is the backend's.
 *
 * <h2>Distributed considerations</h2>
 * Because reentrancy is local, a hold count is lost with its process, and Redis cannot tell how
 * deep a holder is; the lease is what frees the lock after a crash. See {@link DistributedLock}
 * for pauses, failover, clocks and fencing tokens.
 */
public final class RedisLock implements DistributedLock {

    /** Longer leases would lose precision in Lua's doubles and overflow Redis's expiry arithmetic. */
    private static final long MAX_LEASE_MILLIS = TimeUnit.DAYS.toMillis(3650);

    private final String name;
    final String kind;
    public final LockBackend backend;
    final ClientContext context;
    public final Holds holds;
    /** What to keep reachable while this lock has holds: itself, or the read-write lock it is half of. */
    private final Object pinTarget;
    /** For a write lock, its read lock, to refuse an upgrade; otherwise null. */
    private volatile RedisLock readHalf;
    /** How many conditions this lock object has made: the next one's index. */
    private final AtomicInteger conditions = new AtomicInteger();
    /** This client's pending async acquisitions of this lock, waited for one at a time. */
    private final AsyncLine asyncLine;

    public RedisLock(LockBackend backend, Object pinTarget) {
        this.backend = backend;
        this.name = backend.name;
        this.kind = backend.kind;
        this.context = backend.context;
        this.holds = backend.holds;
        this.pinTarget = pinTarget == null ? this : pinTarget;
        this.asyncLine = new AsyncLine(context, kind + " '" + name + "'");
    }

    /** The lock behind {@code lock(name)} or {@code fairLock(name)} of a client of one server. */
    public static RedisLock onServer(String name, LockPolicy policy, Machinery machinery) {
        LockKeys keys = policy == LockPolicy.FAIR
                ? LockKeys.fair(machinery.keyPrefix, name)
                : LockKeys.of(machinery.keyPrefix, name);
        return new RedisLock(new ServerLockBackend(name, policy, keys, machinery), null);
    }

    /** Makes this write lock refuse to be taken by a thread that holds only {@code read}. */
    void refuseUpgradeFrom(RedisLock read) {
        this.readHalf = read;
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
        acquireUninterruptibly(backend.fixedLeaseMillis(leaseTime, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(false, Acquirer.FOREVER, true, 0);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(true, 0, false, 0);
        } catch (InterruptedException e) {
            throw new AssertionError("a single attempt does not wait", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(false, unit.toNanos(time), true, 0);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long leaseMillis = backend.fixedLeaseMillis(leaseTime, unit);
        return acquire(false, unit.toNanos(waitTime), true, leaseMillis);
    }

    private void acquireUninterruptibly(long fixedLeaseMillis) {
        try {
            acquire(false, Acquirer.FOREVER, false, fixedLeaseMillis);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait threw InterruptedException", e);
        }
    }

    /**
     * Acquires for the current thread: re-enters a hold of this JVM, or waits for the lock in Redis
     * and books the hold.
     *
     * @param barging whether this is the untimed {@code tryLock()}
     * @param fixedLeaseMillis the lease of a fresh hold, or 0 for a watchdog-renewed one
     */
    private boolean acquire(boolean barging, long timeoutNanos, boolean interruptible, long fixedLeaseMillis)
            throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        long threadId = ClientContext.currentThreadId();
        Holds.Hold held = holds.get(threadId);
        if (held != null && held.lease.endedBecause() == LostHold.Cause.LEASE_EXPIRED) {
            // The fixed lease the caller chose is over: the hold has ended, so this is a fresh start.
            backend.endLease(held.lease);
            forget(threadId, held);
            held = null;
        }
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
        if (upgradeRefused(timeoutNanos)) {
            return false;
        }
        context.checkOpen();
        try {
            return backend.meters.timed(() -> backend.acquire(threadId, barging, timeoutNanos, interruptible,
                    fixedLeaseMillis, false, grant -> book(threadId, grant)));
        } catch (SynchronizerUnavailableException e) {
            throw context.unlessClosed(e);
        }
    }

    /**
     * Tells whether this write lock refuses the current thread because it holds only the read lock:
     * two readers upgrading would each wait for the other to leave, so a wait that would never end
     * throws rather than hang, and a timed one fails at once.
     *
     * @throws IllegalMonitorStateException if the wait has no end
     */
    private boolean upgradeRefused(long timeoutNanos) {
        RedisLock read = readHalf;
        if (read == null || read.getHoldCount() == 0) {
            return false;
        }
        if (timeoutNanos == Acquirer.FOREVER) {
            throw new IllegalMonitorStateException(kind + " '" + name + "': upgrade from the read lock to the"
                    + " write lock is not supported; release the read lock first");
        }
        return true;
    }

    /** Books a fresh hold: pinned before its lease is kept, so that its end, however soon, finds it pinned. */
    private void book(long threadId, LockBackend.Grant grant) {
        Holds.Hold hold = new Holds.Hold(grant.owner(), grant.token(), grant.checkToken(), backend.meters.holdStarted());
        context.pin(pinTarget);
        hold.lease = grant.start(cause -> onLost(threadId, hold, cause));
        holds.put(threadId, hold);
    }

    /**
     * Told by the lease's keeper, on its thread, that a hold ended without unlock() (its fixed lease
     * ran out, it was forced, lost or abandoned). The hold stops pinning this object, so a lock that
     * is never unlocked can still be collected; its record stays, so that the owner's unlock()
     * through this object throws as documented. A local waiter that left asking Redis to the holder
     * is woken, since no unlock() will wake it.
     */
    private void onLost(long threadId, Holds.Hold hold, LostHold.Cause cause) {
        // Ended in the books (and the metrics' active holds) before it is counted and reported lost,
        // so that whoever sees the loss sees the hold over.
        if (cause == LostHold.Cause.ABANDONED) {
            forget(threadId, hold);
        } else {
            unpin(hold, false);
        }
        context.listeners.report(new LostHold(name, kind, threadId, hold.token, cause));
        backend.acquirer.wakeHead();
    }

    /** Drops a hold that ended without unlock() from this JVM's books and stops it pinning this object. */
    private void forget(long threadId, Holds.Hold hold) {
        holds.remove(threadId, hold);
        unpin(hold, false);
    }

    /**
     * Ends a hold here, once, whether it ends by unlock() or otherwise: it stops pinning this
     * object and counting as held.
     *
     * @param released whether unlock() ended it while it was not known lost, for the hold timer
     */
    void unpin(Holds.Hold hold, boolean released) {
        if (hold.pinned.compareAndSet(true, false)) {
            context.unpin(pinTarget);
            backend.meters.holdEnded(hold.metric, released);
        }
    }

    /* --------------- release --------------- */

    @Override
    public void unlock() {
        long threadId = ClientContext.currentThreadId();
        Holds.Hold held = holds.get(threadId);
        if (held == null) {
            throw new IllegalMonitorStateException(kind + " '" + name
                    + "': unlock() by a thread that does not hold it (never taken or already released)");
        }
        if (held.count > 1) {
            held.count--;
            LostHold.Cause ended = held.lease.endedBecause();
            if (ended != null) {
                throw lost(ended, "unlock()");
            }
            return;
        }
        holds.remove(threadId, held);
        end(held, threadId, null, "unlock()");
    }

    /**
     * Ends a hold that its owner releases (its last unlock(), or its handle's release()): its lease
     * first, then in Redis, reporting and throwing what it finds lost.
     *
     * @param threadId the owning thread, or -1 for a handle's hold
     * @param handle the owning handle, or null for a thread's hold
     */
    void end(Holds.Hold held, long threadId, LockHandle handle, String what) {
        // A local head that skipped asking Redis because this hold was live waits for a wake from
        // here: after the release on success, and on every way out that fails.
        boolean active = backend.endLease(held.lease);
        unpin(held, active && held.lease.endedBecause() == null);
        if (!active) {
            backend.acquirer.wakeHead();
            LostHold.Cause cause = held.lease.endedBecause();
            cause = cause == null ? LostHold.Cause.GONE : cause;
            backend.unlockedLost(held, cause);
            throw lost(cause, what);
        }
        context.checkOpen();
        LostHold.Cause lostAtRelease = backend.release(threadId, held);
        if (lostAtRelease != null) {
            // Redis no longer had it when the release came.
            context.listeners.report(new LostHold(name, kind, threadId, held.token, lostAtRelease, handle));
            throw lost(lostAtRelease, what);
        }
    }

    @Override
    public boolean forceUnlock() {
        context.checkOpen();
        return backend.forceUnlock();
    }

    /* --------------- handles --------------- */

    @Override
    public LockHandle acquire() throws InterruptedException {
        return acquireHandle(Acquirer.FOREVER, 0).orElseThrow();
    }

    @Override
    public LockHandle acquire(Duration lease) throws InterruptedException {
        return acquireHandle(Acquirer.FOREVER, fixedLease(lease)).orElseThrow();
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait) throws InterruptedException {
        return acquireHandle(Acquirer.timeoutNanos(wait), 0);
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        long waitNanos = Acquirer.timeoutNanos(wait);
        return acquireHandle(waitNanos, fixedLease(lease));
    }

    /** Checks a handle's fixed lease as {@link #leaseMillis} checks a lease time, naming the argument {@code lease}. */
    long fixedLease(Duration lease) {
        Objects.requireNonNull(lease, "lease");
        long millis;
        try {
            millis = lease.toMillis();
        } catch (ArithmeticException tooLong) {
            millis = Long.MAX_VALUE;
        }
        if (lease.isNegative() || millis < 1 || millis > MAX_LEASE_MILLIS) {
            throw new IllegalArgumentException("lease must be at least 1 ms and at most 3650 days: " + lease);
        }
        return backend.fixedLeaseMillis(millis, TimeUnit.MILLISECONDS);
    }

    /**
     * Acquires a hold for a new handle: never reentrant, so it waits while the lock is held, by
     * anyone. An untimed wait by a thread that holds the lock itself would never end: refused.
     */
    private Optional<LockHandle> acquireHandle(long timeoutNanos, long fixedLeaseMillis) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        long threadId = ClientContext.currentThreadId();
        if (timeoutNanos == Acquirer.FOREVER && isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException(kind + " '" + name + "': acquire() by a thread that holds it by"
                    + " lock() would wait for itself; handles are not reentrant");
        }
        if (upgradeRefused(timeoutNanos)) {
            return Optional.empty();
        }
        context.checkOpen();
        RedisLockHandle[] booked = new RedisLockHandle[1];
        try {
            backend.meters.timed(() -> backend.acquire(threadId, false, timeoutNanos, true, fixedLeaseMillis, true,
                    grant -> booked[0] = bookHandle(grant)));
        } catch (SynchronizerUnavailableException e) {
            throw context.unlessClosed(e);
        }
        return Optional.ofNullable(booked[0]);
    }

    /** Books a fresh handle's hold: pinned before its lease is kept, as a thread's is. */
    private RedisLockHandle bookHandle(LockBackend.Grant grant) {
        Holds.Hold hold = new Holds.Hold(grant.owner(), grant.token(), backend.meters.holdStarted());
        RedisLockHandle handle = new RedisLockHandle(this, hold);
        context.pin(pinTarget);
        hold.lease = grant.start(handle::lost);
        holds.addHandle(hold);
        return handle;
    }

    /**
     * {@inheritDoc}
     *
     * <p>This client's async acquisitions of one lock are waited for one at a time, in the order
     * they were made, by one thread of the client's however many are pending (see the class
     * javadoc of the library's async line); each takes its turn in the lock's queue as a blocking
     * {@code acquire()} would.
     */
    @Override
    public CompletionStage<LockHandle> acquireAsync() {
        return asyncLine.<LockHandle>submit(Acquirer.FOREVER, null,
                timeout -> acquireHandle(Acquirer.FOREVER, 0).orElseThrow(), LockHandle::close);
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait) {
        long waitNanos = Acquirer.timeoutNanos(wait);
        return asyncLine.submit(waitNanos, Optional.empty(), timeout -> acquireHandle(Math.max(0, timeout), 0),
                acquired -> acquired.ifPresent(LockHandle::close));
    }

    @Override
    public boolean verifyHeld() {
        Holds.Hold held = holds.get(ClientContext.currentThreadId());
        if (held == null || held.lease.endedBecause() != null) {
            return false;
        }
        return verify(held);
    }

    /** One round trip: whether Redis has the hold; one found gone is declared lost at once. */
    boolean verify(Holds.Hold held) {
        context.checkOpen();
        if (backend.stillHeld(held)) {
            return held.lease.endedBecause() == null;
        }
        backend.declareLost(held.lease, LostHold.Cause.GONE);
        return false;
    }

    /* --------------- queries --------------- */

    @Override
    public boolean isLocked() {
        context.checkOpen();
        return backend.isLocked();
    }

    @Override
    public int getQueueLength() {
        return snapshot().queueLength();
    }

    @Override
    public boolean hasQueuedThreads() {
        return getQueueLength() > 0;
    }

    @Override
    public LockSnapshot snapshot() {
        context.checkOpen();
        return backend.snapshot();
    }

    @Override
    public boolean isHeldByCurrentThread() {
        Holds.Hold held = holds.get(ClientContext.currentThreadId());
        return held != null && held.lease.endedBecause() == null;
    }

    @Override
    public int getHoldCount() {
        Holds.Hold held = holds.get(ClientContext.currentThreadId());
        return held == null ? 0 : held.count;
    }

    @Override
    public long fencingToken() {
        Holds.Hold held = holds.get(ClientContext.currentThreadId());
        if (held == null) {
            throw new IllegalMonitorStateException(kind + " '" + name + "': fencingToken() by a thread that does not hold it");
        }
        return held.token;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The condition is this lock's {@code n}-th, counting from 0 in the order this lock object made
     * them; see {@link RedisCondition} for how it waits and signals. Refused by a read lock and by a
     * Redlock lock (their backends say why).
     */
    @Override
    public Condition newCondition() {
        return backend.newCondition(this, Integer.toString(conditions.getAndIncrement()));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Its keys are those of {@link #newCondition()}'s with {@code n=<name>} where the index
     * would be: an index is digits only, so the two never meet.
     */
    @Override
    public Condition newCondition(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("name must not be empty");
        }
        return backend.newCondition(this, "n=" + name);
    }

    /**
     * For a condition's await: ends the current thread's hold however deep, in Redis too, as its
     * last {@code unlock()} would (waking the lock's waiters).
     *
     * @throws LostHoldException if the hold was lost; it is then dropped from the books
     * @throws SynchronizerUnavailableException if Redis does not answer (the release is retried)
     */
    public void releaseForAwait(long threadId, Holds.Hold held) {
        backend.releaseForReal(held);
        holds.remove(threadId, held);
        end(held, threadId, null, "await()");
    }

    /**
     * For a condition's await: takes the lock again for the current thread, uninterruptibly (an
     * interrupt is kept for the caller), with {@code count} holds.
     *
     * @param fixedLeaseMillis the lease the thread's hold had, or 0 for a renewed one
     */
    public void retake(int count, long fixedLeaseMillis) {
        acquireUninterruptibly(fixedLeaseMillis);
        holds.get(ClientContext.currentThreadId()).count = count;
    }

    /** Shows the name and what this JVM knows; makes no network call. */
    @Override
    public String toString() {
        int count = holds.count();
        String state = count == 0 ? "not held by this JVM" : "held by this JVM: " + count + (count == 1 ? " hold" : " holds");
        return "RedisLock[" + kind + " " + name + backend.describe() + ", " + state
                + (backend.acquirer.hasWaiters() ? ", local waiters" : "") + "]";
    }

    /* --------------- helpers --------------- */

    public LostHoldException lost(LostHold.Cause cause, String what) {
        return new LostHoldException(name, cause,
                kind + " '" + name + "': " + what + " failed: the hold was lost: " + LostHoldListeners.describe(cause));
    }

    /**
     * Checks a caller's lease time and returns it in milliseconds: positive, at least 1 ms, at most
     * 3650 days. Every backend checks at least this.
     */
    public static long leaseMillis(long leaseTime, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        if (leaseTime <= 0) {
            throw new IllegalArgumentException("leaseTime must be > 0: " + leaseTime + " " + unit);
        }
        long millis = unit.toMillis(leaseTime);
        if (millis < 1) {
            throw new IllegalArgumentException("leaseTime must be at least 1 ms: " + leaseTime + " " + unit);
        }
        if (millis > MAX_LEASE_MILLIS) {
            throw new IllegalArgumentException("leaseTime must be at most 3650 days: " + leaseTime + " " + unit);
        }
        return millis;
    }
}
