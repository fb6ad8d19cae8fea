package dev.synchronizers.test;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;

/** {@code lock(name)}, {@code fairLock(name)}, or one half of {@code readWriteLock(name)}, in memory. */
final class MemLock implements DistributedLock {

    final InMemorySynchronizers client;
    final LockState state;
    final boolean read;
    private final InMemorySynchronizers.Store store;
    private final AtomicInteger conditions = new AtomicInteger();

    MemLock(InMemorySynchronizers client, LockState state, boolean read) {
        this.client = client;
        this.state = state;
        this.read = read;
        this.store = client.store;
    }

    @Override
    public String name() {
        return state.name;
    }

    LockState.ThreadKey me() {
        return new LockState.ThreadKey(client, Thread.currentThread().getId());
    }

    /* ------------------------------ thread holds ------------------------------ */

    /** waitNanos: below 0 untimed, 0 one try, above 0 timed. Null when not granted. */
    private Hold acquireThread(long waitNanos, long leaseNanos, boolean interruptible, boolean barge)
            throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        store.mutex.lock();
        try {
            client.check();
            LockState.ThreadKey me = me();
            Hold mine = state.find(me, read);
            if (mine != null) {
                mine.count++;
                return mine;
            }
            LockState.LostKey key = new LockState.LostKey(me, read);
            Hold lost = state.lost.get(key);
            if (lost != null) {
                if (lost.lostCause != LostHold.Cause.LEASE_EXPIRED) {
                    throw state.lostException(lost);
                }
                state.lost.remove(key);
            }
            if (!read && state.type == LockState.Type.RW && state.find(me, true) != null) {
                if (waitNanos >= 0) {
                    return null;
                }
                throw new IllegalMonitorStateException("upgrade of the read lock of '" + name()
                        + "' to its write lock is not supported: release the read lock first");
            }
            return waitFor(me, me.threadId(), leaseNanos, waitNanos, interruptible, barge, 1);
        } finally {
            store.mutex.unlock();
        }
    }

    /** With the store's lock held: waits until {@code owner} may take the lock, and takes it. */
    Hold waitFor(Object owner, long threadId, long leaseNanos, long waitNanos, boolean interruptible, boolean barge,
            int count) throws InterruptedException {
        LockState.Waiter waiter = null;
        long remaining = waitNanos;
        try {
            while (true) {
                if (state.grantable(owner, read, waiter, barge)) {
                    if (waiter != null) {
                        state.queue.remove(waiter);
                        waiter = null;
                    }
                    return state.grant(client, owner, threadId, read, leaseNanos, count);
                }
                if (waitNanos == 0 || waitNanos > 0 && remaining <= 0) {
                    return null;
                }
                if (waiter == null) {
                    waiter = new LockState.Waiter(read);
                    state.queue.addLast(waiter);
                }
                if (waitNanos > 0) {
                    remaining = store.changed.awaitNanos(remaining);
                } else if (interruptible) {
                    store.changed.await();
                } else {
                    store.changed.awaitUninterruptibly();
                }
                client.check();
            }
        } finally {
            if (waiter != null && state.queue.remove(waiter)) {
                store.changed.signalAll();
            }
        }
    }

    private Hold acquireUninterruptibly(long leaseNanos) {
        try {
            return acquireThread(-1, leaseNanos, false, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible acquire was interrupted", e);
        }
    }

    @Override
    public void lock() {
        acquireUninterruptibly(0);
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        acquireUninterruptibly(InMemorySynchronizers.leaseNanos(leaseTime, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquireThread(-1, 0, true, false);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquireThread(0, 0, false, true) != null;
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible try was interrupted", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return acquireThread(Math.max(0, unit.toNanos(time)), 0, true, false) != null;
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long lease = InMemorySynchronizers.leaseNanos(leaseTime, unit);
        return acquireThread(Math.max(0, unit.toNanos(waitTime)), lease, true, false) != null;
    }

    @Override
    public void unlock() {
        store.mutex.lock();
        try {
            LockState.ThreadKey me = me();
            Hold hold = state.find(me, read);
            if (hold == null) {
                state.throwIfLost(new LockState.LostKey(me, read), true);
                throw new IllegalMonitorStateException(state.kind(read) + " '" + name()
                        + "' is not held by the current thread");
            }
            if (hold.count > 1) {
                hold.count--;
                return;
            }
            state.end(hold);
            if (store.unavailable) {
                throw new SynchronizerUnavailableException("unlock of '" + name()
                        + "' could not reach the store (setUnavailable(true)); the hold was dropped", null);
            }
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public Condition newCondition() {
        return condition("i:" + conditions.getAndIncrement());
    }

    @Override
    public Condition newCondition(String name) {
        InMemorySynchronizers.checkName(name);
        return condition("n:" + name);
    }

    private Condition condition(String key) {
        if (read) {
            throw new UnsupportedOperationException("a read lock has no conditions, as ReentrantReadWriteLock.ReadLock");
        }
        return new MemCondition(this, key);
    }

    @Override
    public boolean isLocked() {
        store.mutex.lock();
        try {
            client.check();
            for (Hold hold : state.holds) {
                if (state.type != LockState.Type.RW || hold.read == read) {
                    return true;
                }
            }
            return false;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public boolean isHeldByCurrentThread() {
        store.mutex.lock();
        try {
            return state.find(me(), read) != null;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public int getHoldCount() {
        store.mutex.lock();
        try {
            Hold hold = state.find(me(), read);
            return hold == null ? 0 : hold.count;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public long fencingToken() {
        store.mutex.lock();
        try {
            Hold hold = state.find(me(), read);
            if (hold == null) {
                throw new IllegalMonitorStateException(state.kind(read) + " '" + name()
                        + "' is not held by the current thread");
            }
            return hold.token;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public int getQueueLength() {
        store.mutex.lock();
        try {
            client.check();
            return state.queueLength();
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public boolean hasQueuedThreads() {
        return getQueueLength() > 0;
    }

    @Override
    public LockSnapshot snapshot() {
        store.mutex.lock();
        try {
            client.check();
            List<LockSnapshot.Holder> holders = new ArrayList<>();
            for (Hold hold : state.holds) {
                if (state.type != LockState.Type.RW || hold.read == read) {
                    holders.add(holder(hold, client));
                }
            }
            return new LockSnapshot(name(), holders, state.queueLength());
        } finally {
            store.mutex.unlock();
        }
    }

    /** How {@code viewer} sees {@code hold}: whether another client renews its hold is unknown, as in Redis. */
    static LockSnapshot.Holder holder(Hold hold, InMemorySynchronizers viewer) {
        LockSnapshot.Renewal renewal = hold.client != viewer ? LockSnapshot.Renewal.UNKNOWN
                : hold.fixed ? LockSnapshot.Renewal.FIXED : LockSnapshot.Renewal.RENEWED;
        return new LockSnapshot.Holder(hold.client.clientId(), hold.threadId, hold.token, hold.leaseRemainingMillis(),
                renewal);
    }

    @Override
    public boolean forceUnlock() {
        store.mutex.lock();
        try {
            client.check();
            return state.loseAll(LostHold.Cause.GONE, true) > 0;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public boolean verifyHeld() {
        store.mutex.lock();
        try {
            client.check();
            return state.find(me(), read) != null;
        } finally {
            store.mutex.unlock();
        }
    }

    /* ------------------------------ handles ------------------------------ */

    private MemLockHandle acquireHandle(long waitNanos, long leaseNanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        store.mutex.lock();
        try {
            client.check();
            if (waitNanos < 0) {
                LockState.ThreadKey me = me();
                for (Hold hold : state.holds) {
                    if (hold.owner.equals(me) && !(read && hold.read)) {
                        throw new IllegalMonitorStateException("the current thread holds " + state.kind(hold.read) + " '"
                                + name() + "': an untimed acquire() of a handle would wait for itself");
                    }
                }
            }
            Hold hold = waitFor(new Object(), -1, leaseNanos, waitNanos, true, false, 1);
            if (hold == null) {
                return null;
            }
            MemLockHandle handle = new MemLockHandle(this, hold);
            hold.handle = handle;
            return handle;
        } finally {
            store.mutex.unlock();
        }
    }

    static long waitNanos(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative() || wait.isZero()) {
            return 0;
        }
        try {
            return wait.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public LockHandle acquire() throws InterruptedException {
        return acquireHandle(-1, 0);
    }

    @Override
    public LockHandle acquire(Duration lease) throws InterruptedException {
        return acquireHandle(-1, InMemorySynchronizers.leaseNanos(lease));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait) throws InterruptedException {
        return Optional.ofNullable(acquireHandle(waitNanos(wait), 0));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        long leaseNanos = InMemorySynchronizers.leaseNanos(lease);
        return Optional.ofNullable(acquireHandle(waitNanos(wait), leaseNanos));
    }

    @Override
    public CompletionStage<LockHandle> acquireAsync() {
        return Async.run(store, () -> acquireHandle(-1, 0), LockHandle::release);
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait) {
        long nanos = waitNanos(wait);
        return Async.run(store, () -> Optional.<LockHandle>ofNullable(acquireHandle(nanos, 0)),
                held -> held.ifPresent(LockHandle::release));
    }

    @Override
    public String toString() {
        return "InMemory " + state.kind(read) + " '" + name() + "'";
    }
}
