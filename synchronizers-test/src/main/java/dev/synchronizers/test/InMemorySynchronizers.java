package dev.synchronizers.test;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldListener;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.Synchronizers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Every synchronizer of the API in one JVM, with this library's semantics, for users' unit tests: no
 * Redis needed. Locks are reentrant and owned by (client, thread) or by a handle, fencing tokens increase
 * per name, permits belong to the client that acquired them (a release by a client that holds none
 * throws {@link IllegalStateException}), holds have leases, and a hold that ends without a release is
 * <em>lost</em>: the client's {@link LostHoldListener}s are told, {@code lost()} stages complete, and
 * {@code unlock()}/{@code release()} throw {@link dev.synchronizers.LostHoldException}, exactly as with
 * {@code RedisSynchronizers}. A test written against this class means the same against Redis.
 *
 * <p>One instance is one <em>client</em> (what one {@code RedisSynchronizers} is in a process). Clients
 * made by one {@link Store} share its state, so a test can play two JVMs:
 *
 * <pre>{@code
 * InMemorySynchronizers.Store store = InMemorySynchronizers.newStore();
 * InMemorySynchronizers jvmA = store.client();
 * InMemorySynchronizers jvmB = store.client();
 * }</pre>
 *
 * <p>Two hooks reach the paths a real server cannot be made to take in a unit test:
 * <ul>
 *   <li>{@link #loseHold(String)}: every hold of that name (lock, fair lock, read-write lock, semaphore
 *       permits) is lost with cause {@link LostHold.Cause#GONE}, as if another client had forced it;</li>
 *   <li>{@link #setUnavailable(boolean)}: while set, every call that would reach Redis throws
 *       {@link SynchronizerUnavailableException} (waiters too, when they wake), and holds renewed by the
 *       watchdog are lost as {@link LostHold.Cause#UNRENEWABLE} once a lease has passed, as in an
 *       outage.</li>
 * </ul>
 *
 * <p>Where one JVM differs from Redis: there is no network, so nothing is ever an unknown outcome;
 * an {@code UNRENEWABLE} loss is reported when the lease has passed rather than shortly before it;
 * and a renewed hold of a client that stops renewing is modelled by {@link #close()} only. All
 * state lives under one store-wide lock; waiters wait on its condition.
 *
 * <p>Thread-safe. Closing a client ends its waits with {@link IllegalStateException}; its renewed
 * holds then run out after one lease, as a dead process's do.
 */
public final class InMemorySynchronizers implements Synchronizers {

    /** The lease of a {@link #newStore()} store: 30 s, as {@code RedisSynchronizers}' default. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    final Store store;
    private final String clientId = UUID.randomUUID().toString();
    private final List<LostHoldListener> listeners = new CopyOnWriteArrayList<>();
    volatile boolean closed;

    private InMemorySynchronizers(Store store) {
        this.store = store;
    }

    /**
     * A client of a store of its own, with the {@linkplain #DEFAULT_LEASE default lease}.
     *
     * @return the new client
     */
    public static InMemorySynchronizers create() {
        return newStore().client();
    }

    /**
     * A new, empty store with the {@linkplain #DEFAULT_LEASE default lease}.
     *
     * @return the new store
     */
    public static Store newStore() {
        return new Store(DEFAULT_LEASE);
    }

    /**
     * A new, empty store whose holds have {@code lease} as their lease: how long a renewed hold outlives
     * an outage ({@link #setUnavailable(boolean)}) or a closed client.
     *
     * @param lease the lease of the store's holds, at least a millisecond
     * @return the new store
     * @throws IllegalArgumentException if {@code lease} is under a millisecond
     */
    public static Store newStore(Duration lease) {
        return new Store(lease);
    }

    /**
     * The store this client shares with the other clients it made.
     *
     * @return the store
     */
    public Store store() {
        return store;
    }

    /**
     * The random id that owns this client's holds, as in {@code RedisSynchronizers#clientId()}: snapshots
     * name their holders by it.
     *
     * @return the client id
     */
    public String clientId() {
        return clientId;
    }

    /**
     * Adds a listener told of every hold of this client that is lost (not of fixed leases that run out,
     * as with Redis). Listeners run on the store's event thread, in order; one that throws does not stop
     * the others.
     *
     * @param listener told of each lost hold
     * @return this client
     */
    public InMemorySynchronizers addLostHoldListener(LostHoldListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        return this;
    }

    /**
     * The same as {@code store().loseHold(name)}.
     *
     * @param name the name whose holds are lost
     */
    public void loseHold(String name) {
        store.loseHold(name);
    }

    /**
     * The same as {@code store().setUnavailable(unavailable)}.
     *
     * @param unavailable true to begin an outage, false to end it
     */
    public void setUnavailable(boolean unavailable) {
        store.setUnavailable(unavailable);
    }

    @Override
    public DistributedLock lock(String name) {
        return new MemLock(this, store.lockState(LockState.Type.LOCK, checkName(name)), false);
    }

    @Override
    public DistributedLock fairLock(String name) {
        return new MemLock(this, store.lockState(LockState.Type.FAIR, checkName(name)), false);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        return new MemReadWriteLock(this, store.lockState(LockState.Type.RW, checkName(name)));
    }

    @Override
    public DistributedSemaphore semaphore(String name) {
        return new MemSemaphore(this, store.semaphoreState(checkName(name)));
    }

    @Override
    public DistributedCountDownLatch countDownLatch(String name) {
        return new MemLatch(this, store.latchState(checkName(name)));
    }

    /**
     * Closes this client: its waiting threads and pending async acquisitions fail with
     * {@link IllegalStateException}, later calls throw it, and its renewed holds are no longer renewed:
     * they end one lease later, as a dead process's do (nobody is told). Idempotent.
     */
    @Override
    public void close() {
        store.closeClient(this);
    }

    @Override
    public String toString() {
        return "InMemorySynchronizers[" + clientId + "]";
    }

    void tell(LostHold report) {
        for (LostHoldListener listener : listeners) {
            store.events.execute(() -> {
                try {
                    listener.holdLost(report);
                } catch (RuntimeException e) {
                    // a listener that throws does not stop the others
                }
            });
        }
    }

    /** Throws when this client is closed or the store unavailable; the caller holds the store's lock. */
    void check() {
        if (closed) {
            throw new IllegalStateException("client " + clientId + " is closed");
        }
        if (store.unavailable) {
            throw new SynchronizerUnavailableException("the in-memory store is set unavailable (setUnavailable(true))",
                    null);
        }
    }

    static String checkName(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("name must not be empty");
        }
        return name;
    }

    static long leaseNanos(long lease, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        long nanos = unit.toNanos(lease);
        if (nanos < TimeUnit.MILLISECONDS.toNanos(1)) {
            throw new IllegalArgumentException("leaseTime must be at least 1 ms: " + lease + " " + unit);
        }
        return nanos;
    }

    static long leaseNanos(Duration lease) {
        Objects.requireNonNull(lease, "lease");
        if (lease.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("lease must be at least 1 ms: " + lease);
        }
        return lease.toNanos();
    }

    /**
     * The state that the clients of one store share: what one Redis holds. Made by
     * {@link InMemorySynchronizers#newStore()}; needs no closing (its threads are daemons that end when
     * idle).
     */
    public static final class Store {

        final ReentrantLock mutex = new ReentrantLock();
        /** Signalled (all) on every change a waiter may wait for. */
        final Condition changed = mutex.newCondition();
        final long leaseNanos;
        private final Duration lease;
        final Map<String, LockState> locks = new HashMap<>();
        final Map<String, SemState> semaphores = new HashMap<>();
        final Map<String, LatchState> latches = new HashMap<>();
        final List<InMemorySynchronizers> clients = new ArrayList<>();
        volatile boolean unavailable;
        private long outage;
        final ScheduledThreadPoolExecutor timer;
        final ThreadPoolExecutor events;
        final ExecutorService async;

        Store(Duration lease) {
            this.leaseNanos = leaseNanos(lease);
            this.lease = lease;
            timer = new ScheduledThreadPoolExecutor(1, daemons("timer"));
            timer.setKeepAliveTime(1, TimeUnit.SECONDS);
            timer.allowCoreThreadTimeOut(true);
            timer.setRemoveOnCancelPolicy(true);
            events = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), daemons("events"));
            events.allowCoreThreadTimeOut(true);
            async = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new SynchronousQueue<>(),
                    daemons("async"));
        }

        private static ThreadFactory daemons(String role) {
            AtomicInteger count = new AtomicInteger();
            return task -> {
                Thread thread = new Thread(task, "in-memory-synchronizers-" + role + "-" + count.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            };
        }

        /**
         * A new client of this store, with a client id of its own: another process, as far as ownership
         * goes.
         *
         * @return the new client
         */
        public InMemorySynchronizers client() {
            InMemorySynchronizers client = new InMemorySynchronizers(this);
            mutex.lock();
            try {
                clients.add(client);
            } finally {
                mutex.unlock();
            }
            return client;
        }

        /**
         * The lease of this store's holds.
         *
         * @return the lease
         */
        public Duration lease() {
            return lease;
        }

        /**
         * Every hold of {@code name} — of {@code lock(name)}, {@code fairLock(name)},
         * {@code readWriteLock(name)} and {@code semaphore(name)}, thread holds, handles and permits, of
         * every client — is lost with cause {@link LostHold.Cause#GONE}, as if another client had forced
         * it: the owning clients' listeners are told, {@code lost()} stages complete, the owners'
         * {@code unlock()}/{@code release()} throw {@link dev.synchronizers.LostHoldException}, a running
         * {@code callLocked} body is interrupted, and waiters may take the name at once.
         *
         * @param name the name whose holds are lost
         * @return the number of holds lost
         */
        public int loseHold(String name) {
            checkName(name);
            mutex.lock();
            try {
                int lost = 0;
                for (LockState.Type type : LockState.Type.values()) {
                    LockState state = locks.get(type + "\0" + name);
                    if (state != null) {
                        lost += state.loseAll(LostHold.Cause.GONE, true);
                    }
                }
                SemState semaphore = semaphores.get(name);
                if (semaphore != null) {
                    lost += semaphore.loseAll(LostHold.Cause.GONE);
                }
                changed.signalAll();
                return lost;
            } finally {
                mutex.unlock();
            }
        }

        /**
         * Sets or ends an outage. While set, every call that would reach Redis throws
         * {@link SynchronizerUnavailableException} — acquires, releases (the hold is dropped, as the
         * library drops it locally and retries the release later), snapshots, {@code verify()}, and
         * waiters when they wake (they are woken at once). Calls that are local in the library
         * ({@code isHeldByCurrentThread()}, {@code getHoldCount()}, {@code fencingToken()},
         * {@code isHeld()}) still answer. If the outage lasts a {@linkplain #lease() lease}, every hold
         * renewed by the watchdog (no fixed lease) is lost with cause {@link LostHold.Cause#UNRENEWABLE};
         * fixed leases run out as usual.
         *
         * @param unavailable true to begin an outage, false to end it
         */
        public void setUnavailable(boolean unavailable) {
            mutex.lock();
            try {
                if (this.unavailable == unavailable) {
                    return;
                }
                this.unavailable = unavailable;
                long epoch = ++outage;
                if (unavailable) {
                    timer.schedule(() -> outageLasted(epoch), leaseNanos, TimeUnit.NANOSECONDS);
                }
                changed.signalAll();
            } finally {
                mutex.unlock();
            }
        }

        /**
         * Whether {@link #setUnavailable(boolean)} set an outage that is not over.
         *
         * @return true during an outage
         */
        public boolean isUnavailable() {
            return unavailable;
        }

        /**
         * How many threads, of every client, wait for a signal on a condition of {@code lock(name)},
         * {@code fairLock(name)} or the write lock of {@code readWriteLock(name)}: a thread counts from
         * the moment its {@code await} has released the lock until it is signalled, times out or is
         * interrupted, as {@link java.util.concurrent.locks.ReentrantLock#getWaitQueueLength} counts.
         * A test waits on it for "the worker now awaits" instead of sleeping. Exact at the moment it is
         * read (the store's state is one lock); costs one pass over the lock's conditions.
         *
         * @param name the lock's name
         * @return the number of threads waiting for a signal, 0 if none or the name was never used
         * @throws NullPointerException if {@code name} is null
         * @throws IllegalArgumentException if {@code name} is empty
         */
        public int conditionWaiters(String name) {
            checkName(name);
            mutex.lock();
            try {
                int waiting = 0;
                for (LockState.Type type : LockState.Type.values()) {
                    LockState state = locks.get(type + "\0" + name);
                    if (state == null) {
                        continue;
                    }
                    for (MemCondition.Waiters waiters : state.conditions.values()) {
                        for (MemCondition.Node node : waiters.nodes) {
                            if (!node.signalled) {
                                waiting++;
                            }
                        }
                    }
                }
                return waiting;
            } finally {
                mutex.unlock();
            }
        }

        private void outageLasted(long epoch) {
            mutex.lock();
            try {
                if (!unavailable || outage != epoch) {
                    return;
                }
                for (LockState state : locks.values()) {
                    for (Hold hold : new ArrayList<>(state.holds)) {
                        if (!hold.fixed) {
                            state.lose(hold, LostHold.Cause.UNRENEWABLE, true);
                        }
                    }
                }
                for (SemState state : semaphores.values()) {
                    for (SemState.Grant grant : new ArrayList<>(state.grants)) {
                        if (!grant.fixed) {
                            state.lose(grant, LostHold.Cause.UNRENEWABLE);
                        }
                    }
                }
                changed.signalAll();
            } finally {
                mutex.unlock();
            }
        }

        LockState lockState(LockState.Type type, String name) {
            mutex.lock();
            try {
                return locks.computeIfAbsent(type + "\0" + name, key -> new LockState(this, type, name));
            } finally {
                mutex.unlock();
            }
        }

        SemState semaphoreState(String name) {
            mutex.lock();
            try {
                return semaphores.computeIfAbsent(name, key -> new SemState(this, name));
            } finally {
                mutex.unlock();
            }
        }

        LatchState latchState(String name) {
            mutex.lock();
            try {
                return latches.computeIfAbsent(name, key -> new LatchState(name));
            } finally {
                mutex.unlock();
            }
        }

        void closeClient(InMemorySynchronizers client) {
            mutex.lock();
            try {
                if (client.closed) {
                    return;
                }
                client.closed = true;
                clients.remove(client);
                long deadline = System.nanoTime() + leaseNanos;
                // As the library's close(): holds are not released but no longer renewed, and the
                // lost() stage of each handle still held completes ABANDONED (listeners not told).
                for (LockState state : locks.values()) {
                    for (Hold hold : state.holds) {
                        if (hold.client != client) {
                            continue;
                        }
                        if (!hold.fixed) {
                            state.fix(hold, deadline, true);
                        }
                        if (hold.handle != null && !hold.handle.released) {
                            CompletableFutures.complete(this, hold.lostStage, new LostHold(state.name,
                                    state.kind(hold.read), -1, hold.token, LostHold.Cause.ABANDONED, hold.handle));
                        }
                    }
                }
                for (SemState state : semaphores.values()) {
                    for (SemState.Grant grant : state.grants) {
                        if (grant.client != client) {
                            continue;
                        }
                        if (!grant.fixed) {
                            state.expireAt(grant, deadline);
                        }
                        if (grant.handle != null) {
                            CompletableFutures.complete(this, grant.lostStage,
                                    new LostHold(state.name, SemState.KIND, -1, -1, LostHold.Cause.ABANDONED));
                        }
                    }
                }
                changed.signalAll();
            } finally {
                mutex.unlock();
            }
        }

        ScheduledFuture<?> at(long deadline, Runnable task) {
            return timer.schedule(() -> {
                mutex.lock();
                try {
                    task.run();
                    changed.signalAll();
                } finally {
                    mutex.unlock();
                }
            }, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }
}
