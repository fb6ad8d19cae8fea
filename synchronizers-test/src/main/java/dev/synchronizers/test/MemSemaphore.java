package dev.synchronizers.test;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.SemaphoreSnapshot;
import dev.synchronizers.SynchronizerUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/** {@code semaphore(name)} in memory: owned permits, FIFO waiters, barging untimed tries. */
final class MemSemaphore implements DistributedSemaphore {

    private final InMemorySynchronizers client;
    private final SemState state;
    private final InMemorySynchronizers.Store store;

    MemSemaphore(InMemorySynchronizers client, SemState state) {
        this.client = client;
        this.state = state;
        this.store = client.store;
    }

    @Override
    public String name() {
        return state.name;
    }

    private static long threadId() {
        return Thread.currentThread().getId();
    }

    /** waitNanos: below 0 untimed, 0 one try, above 0 timed. Null when not granted (and for 0 permits). */
    private SemState.Grant take(int permits, long waitNanos, boolean barge, boolean interruptible, boolean handle)
            throws InterruptedException {
        if (permits < 0 || handle && permits < 1) {
            throw new IllegalArgumentException("permits must be " + (handle ? "> 0" : ">= 0") + ": " + permits);
        }
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        store.mutex.lock();
        try {
            client.check();
            Object waiter = null;
            long remaining = waitNanos;
            try {
                while (true) {
                    boolean above = permits > state.total();
                    if (!above && state.available() >= permits
                            && (barge || state.queue.isEmpty() || state.queue.peekFirst() == waiter)) {
                        if (waiter != null) {
                            state.queue.remove(waiter);
                            waiter = null;
                            store.changed.signalAll();
                        }
                        if (permits == 0) {
                            return null;
                        }
                        SemState.Grant grant = new SemState.Grant(client, threadId(), permits);
                        state.grants.add(grant);
                        return grant;
                    }
                    if (waitNanos == 0 || waitNanos > 0 && remaining <= 0) {
                        throw new NotGranted();
                    }
                    if (above) {
                        // above the total: waits out of the line, holding nobody up
                        if (waiter != null) {
                            state.queue.remove(waiter);
                            waiter = null;
                            store.changed.signalAll();
                        }
                    } else if (waiter == null) {
                        waiter = new Object();
                        state.queue.addLast(waiter);
                    }
                    if (waitNanos > 0) {
                        remaining = store.changed.awaitNanos(remaining);
                    } else {
                        store.changed.await();
                    }
                    client.check();
                }
            } finally {
                if (waiter != null && state.queue.remove(waiter)) {
                    store.changed.signalAll();
                }
            }
        } finally {
            store.mutex.unlock();
        }
    }

    /** Thrown inside take() when the acquisition is not granted. */
    private static final class NotGranted extends RuntimeException {
        NotGranted() {
            super(null, null, false, false);
        }
    }

    private boolean tryTake(int permits, long waitNanos, boolean barge, boolean interruptible)
            throws InterruptedException {
        try {
            take(permits, waitNanos, barge, interruptible, false);
            return true;
        } catch (NotGranted e) {
            return false;
        }
    }

    @Override
    public boolean trySetPermits(int permits) {
        store.mutex.lock();
        try {
            client.check();
            if (state.total != null) {
                return false;
            }
            state.total = permits;
            store.changed.signalAll();
            return true;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public void addPermits(int delta) {
        store.mutex.lock();
        try {
            client.check();
            long total = (long) state.total() + delta;
            if (delta < 0 && total < 0) {
                throw new IllegalArgumentException("delta would make the total negative: " + state.total() + " + " + delta);
            }
            if (total > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("delta would make the total overflow: " + state.total() + " + " + delta);
            }
            state.total = (int) total;
            store.changed.signalAll();
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public void acquire() throws InterruptedException {
        acquire(1);
    }

    @Override
    public void acquire(int permits) throws InterruptedException {
        tryTake(permits, -1, false, true);
    }

    @Override
    public boolean tryAcquire() {
        return tryAcquire(1);
    }

    @Override
    public boolean tryAcquire(int permits) {
        try {
            return tryTake(permits, 0, true, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible try was interrupted", e);
        }
    }

    @Override
    public boolean tryAcquire(long timeout, TimeUnit unit) throws InterruptedException {
        return tryAcquire(1, timeout, unit);
    }

    @Override
    public boolean tryAcquire(int permits, long timeout, TimeUnit unit) throws InterruptedException {
        return tryTake(permits, Math.max(0, unit.toNanos(timeout)), false, true);
    }

    @Override
    public void release() {
        release(1);
    }

    @Override
    public void release(int permits) {
        if (permits < 0) {
            throw new IllegalArgumentException("permits must be >= 0: " + permits);
        }
        store.mutex.lock();
        try {
            if (client.closed) {
                client.check();
            }
            if (permits == 0) {
                return;
            }
            long me = threadId();
            List<SemState.Grant> order = new ArrayList<>();
            for (int pass = 0; pass < 2; pass++) {
                boolean own = pass == 0;
                for (SemState.Grant grant : state.lost) {
                    if (grant.client == client && (grant.threadId == me) == own) {
                        order.add(grant);
                    }
                }
                for (SemState.Grant grant : state.grants) {
                    if (grant.client == client && grant.handle == null && (grant.threadId == me) == own) {
                        order.add(grant);
                    }
                }
            }
            int remaining = permits;
            int held = 0;
            for (SemState.Grant grant : order) {
                if (remaining == 0) {
                    break;
                }
                if (grant.lostCause != null) {
                    state.lost.remove(grant);
                    throw new LostHoldException(name(), grant.lostCause, "permits of semaphore '" + name()
                            + "' were lost: " + grant.lostCause);
                }
                int taken = Math.min(remaining, grant.permits);
                remaining -= taken;
                held += grant.permits;
            }
            if (remaining > 0) {
                throw new IllegalStateException("this client holds " + held + " permits of semaphore '" + name()
                        + "' (not counting handles), cannot release " + permits);
            }
            remaining = permits;
            for (SemState.Grant grant : order) {
                if (remaining == 0) {
                    break;
                }
                int taken = Math.min(remaining, grant.permits);
                remaining -= taken;
                grant.permits -= taken;
                if (grant.permits == 0) {
                    state.end(grant);
                }
            }
            store.changed.signalAll();
            if (store.unavailable) {
                throw new SynchronizerUnavailableException("release of semaphore '" + name()
                        + "' could not reach the store (setUnavailable(true)); the permits were dropped", null);
            }
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public int availablePermits() {
        store.mutex.lock();
        try {
            client.check();
            return state.available();
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public int drainPermits() {
        store.mutex.lock();
        try {
            client.check();
            int free = state.available();
            if (free <= 0) {
                return 0;
            }
            state.grants.add(new SemState.Grant(client, threadId(), free));
            return free;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public SemaphoreSnapshot snapshot() {
        store.mutex.lock();
        try {
            client.check();
            Map<String, int[]> byClient = new LinkedHashMap<>();
            Map<String, Long> leases = new LinkedHashMap<>();
            for (SemState.Grant grant : state.grants) {
                String id = grant.client.clientId();
                int[] sums = byClient.computeIfAbsent(id, k -> new int[2]);
                sums[0] += grant.permits;
                sums[1]++;
                long lease = Math.max(0, (grant.fixed ? grant.deadline - System.nanoTime() : store.leaseNanos) / 1_000_000);
                leases.merge(id, lease, Math::min);
            }
            List<SemaphoreSnapshot.PermitHolder> holders = new ArrayList<>();
            byClient.forEach((id, sums) -> holders.add(new SemaphoreSnapshot.PermitHolder(id, sums[0], sums[1],
                    leases.get(id))));
            return new SemaphoreSnapshot(name(), Math.max(0, state.total()), state.available(), holders,
                    state.queue.size());
        } finally {
            store.mutex.unlock();
        }
    }

    private PermitHandle handle(int permits, long waitNanos) throws InterruptedException {
        SemState.Grant grant;
        try {
            grant = take(permits, waitNanos, false, true, true);
        } catch (NotGranted e) {
            return null;
        }
        store.mutex.lock();
        try {
            MemPermitHandle handle = new MemPermitHandle(client, state, grant);
            grant.handle = handle;
            return handle;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public PermitHandle acquirePermits(int permits) throws InterruptedException {
        return handle(permits, -1);
    }

    @Override
    public Optional<PermitHandle> tryAcquirePermits(int permits, Duration wait) throws InterruptedException {
        return Optional.ofNullable(handle(permits, MemLock.waitNanos(wait)));
    }

    @Override
    public CompletionStage<PermitHandle> acquirePermitsAsync(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be > 0: " + permits);
        }
        return Async.run(store, () -> handle(permits, -1), PermitHandle::release);
    }

    @Override
    public String toString() {
        return "InMemory semaphore '" + name() + "'";
    }
}
