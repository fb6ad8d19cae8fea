package dev.synchronizers.spring.integration;

import static java.util.Objects.requireNonNull;

import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.Synchronizers;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration lock registry whose locks are {@link dev.synchronizers.DistributedLock}s: the
 * lock of a key is {@code lock(name)} of the given {@link Synchronizers} (or whatever the given
 * function returns for the name, for example a Redlock's {@code lock(name)}), held through a
 * {@link LockHandle}. A drop-in for Spring Integration's {@code RedisLockRegistry} in
 * {@code LockRegistryLeaderInitiator}, {@code LockRequestHandlerAdvice}, aggregators and
 * {@link #executeLocked(Object, org.springframework.integration.util.CheckedRunnable) executeLocked}.
 *
 * <h2>Keys</h2>
 * A key is a {@link String}, and its lock name is the key itself. A key of any other type is refused
 * with {@link IllegalArgumentException} by every method that takes one, as Spring Integration's
 * {@code RedisLockRegistry} refuses it, so that code moving from one registry to the other meets the
 * same refusal. The name is used as is: a registry and code that
 * calls {@code synchronizers.lock(name)} directly on the same client exclude each other. To keep a
 * registry's names apart, pass a function that adds a prefix, e.g.
 * {@code new SynchronizersLockRegistry(name -> synchronizers.lock("orders:" + name))}.
 *
 * <h2>Ownership and reentrancy</h2>
 * {@link #obtain(Object)} returns one lock object per (registry, key) until it is expired by
 * {@link #expireUnusedOlderThan(long)}. As with Spring Integration's own registries, the lock is
 * reentrant per thread and belongs to the thread that took it: a second thread of the same registry
 * waits in this JVM (a {@link ReentrantLock} per key, so only one thread per key talks to the store),
 * and a lock of another registry with the same name, on this client or another one, waits in the
 * store, even on the same thread. Only the owning thread may unlock; any other thread's
 * {@code unlock()} throws {@link IllegalStateException}, as Spring's registries do.
 *
 * <h2>Leases</h2>
 * {@code lock()}, {@code lockInterruptibly()} and {@code tryLock(time, unit)} take a hold that the
 * client's watchdog renews until it is unlocked, however long the thread keeps it; if the process
 * dies, the lock ends one client lease later. {@link DistributedLock#lock(Duration)} and
 * {@link DistributedLock#tryLock(Duration, Duration)} take a hold with a fixed lease of {@code ttl},
 * by the store's clock, which is not renewed. Re-entering a held lock leaves its lease as it is;
 * {@link #renewLock(Object, Duration)} changes it.
 *
 * <h2>Lost holds</h2>
 * A hold that ends other than by {@code unlock()} (a fixed lease that ran out, {@code forceUnlock()}
 * by anyone, a failover that lost it, a watchdog that could not renew it for a whole lease) is
 * <em>lost</em>. The client's lost-hold listener is told (except for a fixed lease that ran out),
 * and the owner's unlock of it throws {@link ConcurrentModificationException} with the
 * {@link LostHoldException} as its cause, which is what Spring's registries throw when the store
 * released a lock before its owner did.
 *
 * <p>A {@code tryLock} of a thread that holds the lock already asks the store whether its hold is
 * still there (one round trip, {@link LockHandle#verify()}). If it is, the hold count grows by one
 * and true is returned. If not, the hold is known lost from then on, false is returned at once
 * without waiting, and the thread no longer holds the lock: each unlock it still owes for its
 * earlier holds throws {@code ConcurrentModificationException}, and it may take the lock again
 * meanwhile (a new hold, with a new fencing token, whose unlocks pair as usual). A reentrant
 * {@code lock()} makes no network call; if the hold is known lost already, it takes a new hold in
 * the same way, waiting for it.
 *
 * <h2>Leader election</h2>
 * {@code LockRegistryLeaderInitiator} calls {@code tryLock(heartbeat)} on its lock every heartbeat
 * while it leads. Here that reentrant {@code tryLock} is one round trip that answers false as soon
 * as the store no longer has the hold, so a leader whose hold was lost is revoked at its next
 * heartbeat, not when some renewal fails; and one that cannot reach the store in time is revoked
 * too (the {@code tryLock} throws {@link CannotAcquireLockException}). Two leaders can still
 * overlap for up to one heartbeat plus the command timeout after a hold is lost, and for as long
 * as the old leader's process is paused: a leader's writes should carry
 * {@link #fencingToken(Object)}.
 *
 * <h2>Failures</h2>
 * A store that cannot be reached while a lock is acquired makes the acquisition throw Spring's
 * {@link CannotAcquireLockException} (with the {@link SynchronizerUnavailableException} as cause)
 * within the client's command timeout; nothing is held then. An {@code unlock()} that cannot reach
 * the store throws the {@link SynchronizerUnavailableException}; the lock is released in this JVM,
 * and the hold ends in the store with its lease at the latest.
 *
 * <h2>Shutdown</h2>
 * {@link #destroy()}, which a Spring context calls when it closes (before it closes the
 * {@code Synchronizers} the registry was made from, since the registry depends on it), releases in
 * the store every hold that threads of this JVM still have through this registry, so that another
 * process does not wait for a lease to run out: a stopped {@code LockRegistryLeaderInitiator}'s
 * leadership passes at once.
 *
 * <h2>Cost</h2>
 * A first acquisition and the last unlock are one round trip each (one per node, in parallel, for a
 * quorum lock); a reentrant {@code lock()} and any but the last {@code unlock()} none; a reentrant
 * {@code tryLock} one; {@code renewLock} one. Renewal of watchdog holds is batched by the client's
 * watchdog with every other hold of the client.
 *
 * <p>Thread-safe. {@link Condition}s are not supported.
 */
public final class SynchronizersLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock>, DisposableBean {

    private final Function<String, ? extends dev.synchronizers.DistributedLock> locks;
    private final boolean fair;
    private final Map<String, KeyLock> registry = new ConcurrentHashMap<>();

    /**
     * Creates a registry whose lock of a key is {@code synchronizers.lock(name)}: non-fair.
     *
     * @param synchronizers the client that holds the locks
     * @throws NullPointerException if {@code synchronizers} is null
     */
    public SynchronizersLockRegistry(Synchronizers synchronizers) {
        this(requireNonNull(synchronizers, "synchronizers")::lock, false);
    }

    /**
     * Creates a registry whose lock of a key is {@code locks.apply(name)}, for example
     * {@code redlock::lock}. The function is called once per lock object, when
     * {@link #obtain(Object)} first meets a key (or meets it again after it was expired). Threads of
     * this registry that wait for one key are served in no particular order.
     *
     * @param locks the store's lock of each name
     * @throws NullPointerException if {@code locks} is null
     */
    public SynchronizersLockRegistry(Function<String, ? extends dev.synchronizers.DistributedLock> locks) {
        this(requireNonNull(locks, "locks"), false);
    }

    private SynchronizersLockRegistry(Function<String, ? extends dev.synchronizers.DistributedLock> locks,
                                      boolean fair) {
        this.locks = locks;
        this.fair = fair;
    }

    /**
     * Creates a fair registry: the lock of a key is {@code synchronizers.fairLock(name)}, which
     * grants waiters of every client in the order they arrived at the store, and the threads of this
     * registry that wait for one key go to the store in the order they asked (a fair
     * {@link ReentrantLock}). The untimed {@code tryLock()} barges ahead of this JVM's waiting
     * threads, as {@code ReentrantLock}'s does, but not ahead of the store's queue.
     *
     * @param synchronizers the client that holds the locks
     * @return a fair registry
     * @throws NullPointerException if {@code synchronizers} is null
     */
    public static SynchronizersLockRegistry fair(Synchronizers synchronizers) {
        return new SynchronizersLockRegistry(requireNonNull(synchronizers, "synchronizers")::fairLock, true);
    }

    /**
     * Returns the lock of {@code lockKey}: the same object for the same name until it is expired.
     * Makes no network call.
     *
     * @param lockKey the key, a {@code String}: the lock's name
     * @return the lock, not yet acquired
     * @throws NullPointerException if {@code lockKey} is null, or the lock function returned null
     * @throws IllegalArgumentException if {@code lockKey} is not a {@code String}, or the lock name
     *     is refused by the client (an empty name)
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        KeyLock lock = registry.computeIfAbsent(name(lockKey), this::newLock);
        lock.touch();
        return lock;
    }

    private KeyLock newLock(String name) {
        dev.synchronizers.DistributedLock lock = requireNonNull(locks.apply(name),
                () -> "the lock function returned null for " + name);
        return new KeyLock(name, lock, fair);
    }

    /** The lock name of a key: the key, which must be a {@code String}, as Spring's registries require. */
    private static String name(Object lockKey) {
        requireNonNull(lockKey, "lockKey");
        if (lockKey instanceof String name) {
            return name;
        }
        throw new IllegalArgumentException(
                "lockKey must be a String: " + lockKey + " (" + lockKey.getClass().getName() + ")");
    }

    /**
     * Drops the lock objects that no thread of this JVM holds or waits for and that were last
     * obtained, locked or unlocked more than {@code age} milliseconds ago; a held lock is never
     * dropped. The next {@link #obtain(Object)} of such a key makes a new lock object. A thread that
     * obtained a lock object before it was dropped may still use it: it then waits in the store, not
     * in this JVM, for the key's new lock object (mutual exclusion holds either way). Makes no
     * network call; nothing changes in the store.
     *
     * @param age the age in milliseconds; zero or negative drops every unused lock object
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.nanoTime();
        registry.values().removeIf(lock -> lock.unusedFor(now) > TimeUnit.MILLISECONDS.toNanos(age));
    }

    /**
     * Renews the current thread's hold of {@code lockKey}. For a hold taken with a fixed lease, the
     * lease starts again: {@code ttl} from now, with the ttl it was taken or last renewed with. For a
     * hold renewed by the watchdog, which needs no renewal, it checks that the store still has it.
     * One round trip.
     *
     * @param lockKey the lock's key
     * @throws NullPointerException if {@code lockKey} is null
     * @throws IllegalArgumentException if {@code lockKey} is not a {@code String}
     * @throws IllegalStateException if the current thread does not hold the lock of this key, or the
     *     store no longer had the hold (it is lost then: the owner's unlock will throw
     *     {@link ConcurrentModificationException}), or the client is closed
     * @throws SynchronizerUnavailableException if the store does not answer; the hold is unchanged
     */
    @Override
    public void renewLock(Object lockKey) {
        heldLock(lockKey).renew(null);
    }

    /**
     * Gives the current thread's hold of {@code lockKey} a fixed lease of {@code ttl} from now, by
     * the store's clock: a hold that the watchdog renewed is no longer renewed, and ends when
     * {@code ttl} runs out unless unlocked or renewed first. One round trip.
     *
     * @param lockKey the lock's key
     * @param ttl the new lease, at least 1 ms
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code lockKey} is not a {@code String}, or {@code ttl} is
     *     under 1 ms or over what the lock accepts
     *     (3650 days; a quorum lock also refuses one its clock-drift allowance eats half of)
     * @throws IllegalStateException as {@link #renewLock(Object)}
     * @throws SynchronizerUnavailableException if the store does not answer; the hold is unchanged
     *     where the call did not arrive
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        requireNonNull(ttl, "ttl");
        heldLock(lockKey).renew(ttl);
    }

    /**
     * Ignored: holds taken without a ttl are renewed by the client's watchdog, in one batch per
     * tick for all the client's holds, so no scheduler is needed.
     *
     * @param renewalTaskScheduler ignored
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        // The client's watchdog renews; see the javadoc.
    }

    /**
     * Returns the fencing token of the current thread's hold of {@code lockKey}: greater than the
     * token of every earlier hold of the lock's name, by anyone. A writer passes it to the store it
     * writes to, which refuses a token lower than one it has seen. Makes no network call.
     *
     * @param lockKey the lock's key
     * @return the token of the current thread's hold
     * @throws NullPointerException if {@code lockKey} is null
     * @throws IllegalArgumentException if {@code lockKey} is not a {@code String}
     * @throws IllegalStateException if the current thread does not hold the lock of this key
     */
    public long fencingToken(Object lockKey) {
        return heldLock(lockKey).token();
    }

    private KeyLock heldLock(Object lockKey) {
        String name = name(lockKey);
        KeyLock lock = registry.get(name);
        if (lock == null || !lock.local.isHeldByCurrentThread()) {
            throw new IllegalStateException("the current thread does not hold lock " + name);
        }
        return lock;
    }

    /**
     * Releases in the store every hold that threads of this JVM still have through this registry
     * (one round trip each), so that other processes need not wait for their leases to run out. Called
     * by a Spring context when it closes. The owners are not interrupted: their last {@code unlock()}
     * then only releases the lock in this JVM; a reentrant {@code tryLock} of theirs returns false,
     * as for a lost hold (the unlocks they still owe then throw {@link ConcurrentModificationException}). A hold the store had lost already, or that it does not answer for, is left to its lease.
     * Holds taken while or after this runs are not released by it. The registry stays usable.
     */
    @Override
    public void destroy() {
        registry.values().forEach(KeyLock::letGo);
    }

    /** Returns whether this registry is fair, e.g. {@code SynchronizersLockRegistry[fair, 3 locks]}. */
    @Override
    public String toString() {
        return "SynchronizersLockRegistry[" + (fair ? "fair" : "non-fair") + ", " + registry.size() + " locks]";
    }

    /** The holds of one thread that were found lost while it still counted them. */
    private static final class Lost {
        int holds;
        LostHoldException cause;

        Lost(int holds, LostHoldException cause) {
            this.holds = holds;
            this.cause = cause;
        }
    }

    /**
     * The lock of one key: a local {@link ReentrantLock} for the threads of this JVM and the thread's
     * reentrancy, and while it is held, one {@link LockHandle} for the store.
     */
    private static final class KeyLock implements DistributedLock {

        private final String name;
        private final dev.synchronizers.DistributedLock store;
        final ReentrantLock local;
        /** The store's hold: set by the thread that holds {@code local}, taken by its unlock or by destroy(). */
        private final AtomicReference<LockHandle> handle = new AtomicReference<>();
        /** The fixed lease the hold has, or null for a hold the watchdog renews. */
        private volatile Duration ttl;
        private volatile long lastUsedNanos = System.nanoTime();
        /**
         * Holds that the owning thread still counted when its hold was found lost: its next unlocks
         * throw, as they would have had the loss been found by the last one. Per thread, so that a
         * thread that lost the lock can take it again and pair its unlocks as before.
         */
        private final ThreadLocal<Lost> lostHere = new ThreadLocal<>();

        KeyLock(String name, dev.synchronizers.DistributedLock store, boolean fair) {
            this.name = name;
            this.store = store;
            this.local = new ReentrantLock(fair);
        }

        void touch() {
            lastUsedNanos = System.nanoTime();
        }

        long unusedFor(long now) {
            if (local.isLocked() || local.hasQueuedThreads()) {
                return Long.MIN_VALUE;
            }
            return now - lastUsedNanos;
        }

        /**
         * Acquires the lock, waiting uninterruptibly, with a hold renewed by the watchdog. A thread
         * that holds it already counts one more hold, with no network call (unless its hold is known
         * lost: see {@link #tryLock(long, TimeUnit)}; it then takes a new hold).
         *
         * @throws CannotAcquireLockException if the store cannot be reached; nothing is held then
         * @throws IllegalStateException if the client is closed
         */
        @Override
        public void lock() {
            lockUninterruptibly(null);
        }

        /**
         * Acquires the lock as {@link #lock()} does, with a hold that ends after {@code ttl} by the
         * store's clock unless unlocked first; not renewed. Re-entering leaves the lease as it is.
         *
         * @param ttl the hold's lease, at least 1 ms
         * @throws NullPointerException if {@code ttl} is null
         * @throws IllegalArgumentException if {@code ttl} is out of range; nothing is held then
         * @throws CannotAcquireLockException if the store cannot be reached; nothing is held then
         * @throws IllegalStateException if the client is closed
         */
        @Override
        public void lock(Duration ttl) {
            lockUninterruptibly(checkTtl(ttl));
        }

        private void lockUninterruptibly(Duration ttl) {
            local.lock();
            if (reentered()) {
                return;
            }
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        take(ttl == null ? store.acquire() : store.acquire(ttl), ttl);
                        return;
                    } catch (InterruptedException e) {
                        // Uninterruptible: wait again (with the status clear, or the wait would end at
                        // once), and set the status again on the way out.
                        Thread.interrupted();
                        interrupted = true;
                    } catch (RuntimeException e) {
                        local.unlock();
                        throw translate(e);
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /**
         * Acquires the lock unless the current thread is interrupted, with a hold renewed by the
         * watchdog; re-entering as {@link #lock()}.
         *
         * @throws InterruptedException if interrupted on entry or while waiting; nothing is held then
         * @throws CannotAcquireLockException if the store cannot be reached; nothing is held then
         * @throws IllegalStateException if the client is closed
         */
        @Override
        public void lockInterruptibly() throws InterruptedException {
            local.lockInterruptibly();
            if (reentered()) {
                return;
            }
            inStore(() -> {
                take(store.acquire(), null);
                return true;
            });
        }

        /**
         * Acquires the lock if no one holds it, with one try in the store, and barging ahead of this
         * JVM's waiting threads. Re-entering asks the store, as {@link #tryLock(long, TimeUnit)}. If
         * the thread is interrupted meanwhile, false is returned with the interrupt status set.
         *
         * @return true if the lock is held by the current thread
         * @throws CannotAcquireLockException if the store cannot be reached; the thread's holds are
         *     as they were
         * @throws IllegalStateException if the client is closed
         */
        @Override
        public boolean tryLock() {
            try {
                return tryLockFor(0, null, true);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        /**
         * Acquires the lock if it becomes free within the waiting time, with a hold renewed by the
         * watchdog. A non-positive time makes one try.
         *
         * <p>If the current thread holds the lock already, this asks the store whether its hold is
         * still there (one round trip, {@link LockHandle#verify()}): if it is, the hold count grows
         * by one and true is returned; if not, the hold is known lost from then on, false is returned
         * at once without waiting, and the thread no longer holds the lock: the unlocks it still owes
         * for its earlier holds each throw {@link ConcurrentModificationException}, and it may take
         * the lock again meanwhile (a new hold, with a new fencing token). This is how
         * {@code LockRegistryLeaderInitiator}'s heartbeat learns that leadership was lost.
         *
         * @param time the longest time to wait
         * @param unit the unit of {@code time}
         * @return true if the lock is held by the current thread
         * @throws InterruptedException if interrupted on entry or while waiting; the thread's holds
         *     are as they were
         * @throws NullPointerException if {@code unit} is null
         * @throws CannotAcquireLockException if the store cannot be reached within the client's
         *     command timeout; the thread's holds are as they were
         * @throws IllegalStateException if the client is closed
         */
        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return tryLockFor(unit.toNanos(time), null, false);
        }

        /**
         * Acquires the lock if it becomes free within {@code waitTime}, with a hold that ends after
         * {@code ttl} by the store's clock unless unlocked first; not renewed. Re-entering asks the
         * store, as {@link #tryLock(long, TimeUnit)}, and leaves the lease as it is.
         *
         * @param waitTime the longest time to wait; zero or negative makes one try
         * @param ttl the hold's lease, at least 1 ms
         * @return true if the lock is held by the current thread
         * @throws InterruptedException if interrupted on entry or while waiting
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if {@code ttl} is out of range; nothing is held then
         * @throws CannotAcquireLockException if the store cannot be reached
         * @throws IllegalStateException if the client is closed
         */
        @Override
        public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
            requireNonNull(waitTime, "waitTime");
            return tryLockFor(saturatedNanos(waitTime), checkTtl(ttl), false);
        }

        private boolean tryLockFor(long waitNanos, Duration ttl, boolean barge) throws InterruptedException {
            long start = System.nanoTime();
            if (!(barge ? local.tryLock() : local.tryLock(waitNanos, TimeUnit.NANOSECONDS))) {
                return false;
            }
            if (local.getHoldCount() > 1) {
                LockHandle current = handle.get();
                boolean held;
                try {
                    held = current != null && current.verify();
                } catch (RuntimeException e) {
                    local.unlock();
                    throw translate(e);
                }
                if (held) {
                    return true;
                }
                forgetLostHolds(1);
                local.unlock();
                return false;
            }
            return inStore(() -> {
                Duration wait = Duration.ofNanos(Math.max(waitNanos - (System.nanoTime() - start), 0));
                Optional<LockHandle> taken = ttl == null ? store.tryAcquire(wait) : store.tryAcquire(wait, ttl);
                if (taken.isEmpty()) {
                    local.unlock();
                    return false;
                }
                take(taken.get(), ttl);
                return true;
            });
        }

        /** An acquisition in the store, made while this thread holds the JVM-local lock. */
        @FunctionalInterface
        private interface StoreAcquisition {
            boolean run() throws InterruptedException;
        }

        /**
         * Runs {@code acquisition}; if it fails, lets go of the JVM-local lock taken for it and
         * rethrows, a store failure translated to Spring's exception.
         */
        private boolean inStore(StoreAcquisition acquisition) throws InterruptedException {
            try {
                return acquisition.run();
            } catch (InterruptedException e) {
                local.unlock();
                throw e;
            } catch (RuntimeException e) {
                local.unlock();
                throw translate(e);
            }
        }

        /**
         * Releases one hold of the current thread; the last one releases the lock in the store (one
         * round trip) and then in this JVM.
         *
         * @throws IllegalStateException if the current thread does not hold the lock; nothing changes
         * @throws ConcurrentModificationException if the hold was lost before (its cause is the
         *     {@link LostHoldException}); the lock is no longer held afterwards, here or in the store
         * @throws SynchronizerUnavailableException if the store cannot be reached to release the last
         *     hold; the lock is released in this JVM, and in the store when its lease runs out at the
         *     latest
         */
        @Override
        public void unlock() {
            if (!local.isHeldByCurrentThread()) {
                Lost lost = lostHere.get();
                if (lost != null) {
                    if (--lost.holds == 0) {
                        lostHere.remove();
                    }
                    throw lostOnUnlock(lost.cause);
                }
                throw new IllegalStateException("the current thread does not own lock " + name);
            }
            lastUsedNanos = System.nanoTime();
            if (local.getHoldCount() > 1) {
                local.unlock();
                return;
            }
            LockHandle current = handle.getAndSet(null);
            ttl = null;
            if (current == null) {
                local.unlock();   // let go by destroy(): nothing left in the store
                return;
            }
            try {
                current.release();
            } catch (LostHoldException e) {
                throw lostOnUnlock(e);
            } finally {
                local.unlock();
            }
        }

        /**
         * Not supported.
         *
         * @throws UnsupportedOperationException always
         */
        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("conditions are not supported by SynchronizersLockRegistry");
        }

        /** With {@code local} just taken: whether the thread re-entered a live hold. */
        private boolean reentered() {
            if (local.getHoldCount() == 1) {
                return false;
            }
            LockHandle current = handle.get();
            if (current != null && current.isHeld()) {
                return true;
            }
            forgetLostHolds(1);   // known lost: this entry takes a new hold
            return false;
        }

        /**
         * The owner's hold is known lost: it keeps only {@code keep} local holds, and owes a
         * {@link ConcurrentModificationException} for each of the others.
         */
        private void forgetLostHolds(int keep) {
            int dropped = local.getHoldCount() - keep;
            LockHandle current = handle.getAndSet(null);
            ttl = null;
            LostHoldException cause = settle(current);
            for (int i = 0; i < dropped; i++) {
                local.unlock();
            }
            Lost lost = lostHere.get();
            if (lost == null) {
                lostHere.set(new Lost(dropped, cause));
            } else {
                lost.holds += dropped;
                lost.cause = cause;
            }
        }

        /** Ends a handle known lost, and returns what its release reported. */
        private LostHoldException settle(LockHandle lostHandle) {
            if (lostHandle != null) {
                try {
                    lostHandle.release();
                } catch (LostHoldException e) {
                    return e;
                } catch (RuntimeException e) {
                    LostHoldException lost = lostHoldException();
                    lost.addSuppressed(e);
                    return lost;
                }
            }
            return lostHoldException();
        }

        private LostHoldException lostHoldException() {
            return new LostHoldException(name, LostHold.Cause.GONE,
                    "the store no longer had the hold of lock " + name);
        }

        private ConcurrentModificationException lostOnUnlock(LostHoldException cause) {
            return new ConcurrentModificationException("Lock " + name + " was released in the store before "
                    + "its owner unlocked it (lease ran out, forced, or lost in a failover): the integrity of "
                    + "data protected by this lock may have been compromised", cause);
        }

        private void take(LockHandle taken, Duration lease) {
            handle.set(taken);
            ttl = lease;
            lastUsedNanos = System.nanoTime();
        }

        void renew(Duration newTtl) {
            LockHandle current = handle.get();
            if (current == null) {
                throw new IllegalStateException("lock " + name + " is not held");
            }
            Duration lease = newTtl != null ? newTtl : ttl;
            boolean held = lease == null ? current.verify() : current.extend(lease);
            if (!held) {
                throw new IllegalStateException("could not renew lock " + name + ": the store no longer had the hold");
            }
            if (lease != null) {
                ttl = lease;
            }
        }

        long token() {
            LockHandle current = handle.get();
            if (current == null) {
                throw new IllegalStateException("lock " + name + " is not held");
            }
            return current.fencingToken();
        }

        /** Releases the store's hold, whoever owns it here, for {@link #destroy()}. */
        void letGo() {
            LockHandle current = handle.getAndSet(null);
            if (current != null) {
                try {
                    current.release();
                } catch (RuntimeException e) {
                    // Lost already, or not answered: the hold ends with its lease either way.
                }
            }
        }

        private RuntimeException translate(RuntimeException e) {
            if (e instanceof SynchronizerUnavailableException) {
                return new CannotAcquireLockException("Failed to lock " + name + ": the store did not answer", e);
            }
            return e;
        }

        private static Duration checkTtl(Duration ttl) {
            requireNonNull(ttl, "ttl");
            if (ttl.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("ttl must be at least 1 ms: " + ttl);
            }
            return ttl;
        }

        private static long saturatedNanos(Duration d) {
            try {
                return d.toNanos();
            } catch (ArithmeticException e) {
                return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
            }
        }

        @Override
        public String toString() {
            return "SynchronizersLockRegistry.lock[" + name + (local.isLocked() ? ", locked here" : ", not locked here")
                    + "]";
        }
    }
}
