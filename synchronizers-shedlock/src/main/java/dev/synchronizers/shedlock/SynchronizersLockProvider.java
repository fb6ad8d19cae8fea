package dev.synchronizers.shedlock;

import static java.util.Objects.requireNonNull;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.Synchronizers;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link ExtensibleLockProvider} whose locks are {@link DistributedLock}s: ShedLock's
 * lock called {@code name} is {@code lock(name)} of the given {@link Synchronizers} (or whatever
 * the given function returns for the name, for example a Redlock's {@code lock(name)}), held
 * through a {@link LockHandle}.
 *
 * <h2>Ownership</h2>
 * A lock belongs to the {@link SimpleLock} returned by {@link #lock(LockConfiguration)}, not to a
 * thread: it may be unlocked or extended from any thread. It is never reentrant: while it is held,
 * every other {@code lock} of the name returns empty, from this provider, another provider or
 * another process, and so does a thread's {@code tryLock()} of the {@code DistributedLock}. The
 * returned lock is a {@link FencedLock}: it carries the hold's fencing token, which the running
 * task also reads with {@link #currentFencingToken()}.
 *
 * <h2>Leases</h2>
 * By default a hold has a fixed lease of {@code lockAtMostFor}, as ShedLock's other providers do:
 * it ends by the store's clock when {@code lockAtMostFor} has passed, whether the task has finished
 * or not, so a task that runs longer may overlap the next run. {@link #withKeepAlive()} returns a
 * provider whose holds are renewed by the client's watchdog for as long as they are held (they end
 * a client lease after the process dies), and {@link #withKeepAliveUpTo()} one that renews them up
 * to {@code lockAtMostFor}. A renewed hold that is lost (forced, or not renewed in time) is reported
 * to the client's lost-hold listener. When a lock is unlocked, its name stays closed until
 * {@code lockAtLeastUntil} ({@link LockConfiguration#getLockAtLeastUntil()}) by the store's clock
 * ({@link LockHandle#releaseAfter(Duration)}), and nobody is woken before.
 *
 * <h2>Usage</h2>
 * <pre> {@code
 * @Bean
 * LockProvider lockProvider(Synchronizers synchronizers) {
 *     return new SynchronizersLockProvider(synchronizers).withKeepAlive();
 * }
 *
 * @Scheduled(cron = "0 * * * * *")
 * @SchedulerLock(name = "report", lockAtMostFor = "10m", lockAtLeastFor = "30s")
 * void report() {
 *     store.write(report(), SynchronizersLockProvider.currentFencingToken());
 * }}</pre>
 *
 * <h2>Distributed considerations</h2>
 * {@code lockAtMostFor}, {@code lockAtLeastFor} and a renewal are applied as durations by the
 * store's clock; {@code lockAtLeastUntil} is turned into a duration with ShedLock's clock
 * ({@code ClockProvider}) when the lock is unlocked, so this JVM's clock only has to measure the
 * task's own run. A hold can still end while its task runs (a fixed lease ran out, a long pause, a
 * failover that lost the key): another process may then run the task too. The fencing token is
 * what makes that safe, if the resource the task writes to checks it; the lock alone cannot.
 *
 * <p>Thread-safe. The provider holds no state of its own beyond the locks' handles.
 */
public final class SynchronizersLockProvider implements ExtensibleLockProvider {

    private static final Duration ONE_MILLISECOND = Duration.ofMillis(1);
    /** How soon a cap that the store did not answer is tried again once its deadline has passed. */
    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * The holds taken by {@link #lock} on each thread and not yet unlocked there: the innermost is
     * the running task's. ShedLock's own record of them (LockExtender) is private.
     */
    private static final ThreadLocal<ArrayDeque<Hold>> RUNNING = new ThreadLocal<>();

    private final Function<String, ? extends DistributedLock> locks;
    private final Renewal renewal;
    private final boolean interruptOnLoss;

    /**
     * Creates a provider whose lock called {@code name} is {@code synchronizers.lock(name)}, with a
     * fixed lease of {@code lockAtMostFor}.
     *
     * @param synchronizers the client that holds the locks
     * @throws NullPointerException if {@code synchronizers} is null
     */
    public SynchronizersLockProvider(Synchronizers synchronizers) {
        this(requireNonNull(synchronizers, "synchronizers")::lock);
    }

    /**
     * Creates a provider whose lock called {@code name} is {@code locks.apply(name)}, for example
     * {@code redlock::lock}, with a fixed lease of {@code lockAtMostFor}. The function is called on
     * every {@link #lock(LockConfiguration)} and may return the same object each time or not.
     *
     * @param locks the lock of each name
     * @throws NullPointerException if {@code locks} is null
     */
    public SynchronizersLockProvider(Function<String, ? extends DistributedLock> locks) {
        this(requireNonNull(locks, "locks"), Renewal.NONE, false);
    }

    private SynchronizersLockProvider(Function<String, ? extends DistributedLock> locks, Renewal renewal,
            boolean interruptOnLoss) {
        this.locks = locks;
        this.renewal = renewal;
        this.interruptOnLoss = interruptOnLoss;
    }

    /**
     * Returns a provider over the same locks whose holds are renewed by the client's watchdog until
     * they are unlocked, however long the task runs: {@code lockAtMostFor} is not used. A task that
     * outlives {@code lockAtMostFor} is not run twice, without ShedLock's
     * {@code KeepAliveLockProvider} and its 30-second minimum. If the process dies, the lock ends a
     * client lease later ({@code RedisSynchronizers.Builder.lease}). A hold that the watchdog could
     * not renew in time, or that was forced, is reported to the client's lost-hold listener, and the
     * lock's {@link SimpleLock#unlock() unlock()} throws {@link LostHoldException}.
     *
     * @return a keep-alive provider; this provider is unchanged
     */
    public SynchronizersLockProvider withKeepAlive() {
        return new SynchronizersLockProvider(locks, Renewal.UNCAPPED, interruptOnLoss);
    }

    /**
     * Returns a provider over the same locks whose holds are renewed by the client's watchdog, as
     * {@link #withKeepAlive()}, but no longer than {@code lockAtMostFor}: half way through it, the
     * hold is given a fixed lease that ends {@code lockAtMostFor} after it was taken (or after it was
     * last {@linkplain SimpleLock#extend(Duration, Duration) extended}), by the store's clock. If the
     * process dies before, the lock ends a client lease later, or at the cap if that is later.
     *
     * @return a keep-alive provider capped by {@code lockAtMostFor}; this provider is unchanged
     */
    public SynchronizersLockProvider withKeepAliveUpTo() {
        return new SynchronizersLockProvider(locks, Renewal.CAPPED, interruptOnLoss);
    }

    /**
     * Returns a provider over the same locks, with the same lease, that interrupts the thread
     * running a task when the task's lock is lost: forced by another client, not renewed in time
     * (reported {@code UNRENEWABLE} before the store can let it go, as long as this JVM keeps up),
     * or its fixed lease of {@code lockAtMostFor} ran out. The thread interrupted is the one that
     * took the lock, which ShedLock's executor runs the task on; it is interrupted only while the
     * lock is held there (until its {@link SimpleLock#unlock() unlock()}), and the interrupt this
     * provider set is cleared by that {@code unlock()}, which then throws {@link LostHoldException}.
     * Off by default, so that a task that does not expect interrupts is not surprised. A task
     * stops on it if it waits interruptibly or checks {@link Thread#isInterrupted()}:
     * <pre> {@code
     * @Scheduled(cron = "0 * * * * *")
     * @SchedulerLock(name = "export")
     * void export() {
     *     for (int part = 0; part < 100; part++) {
     *         if (Thread.currentThread().isInterrupted()) {
     *             return;   // the lock is lost: another instance may run the job now
     *         }
     *         store.write(buildReport(), SynchronizersLockProvider.currentFencingToken());
     *     }
     * }}</pre>
     * ShedLock's own keep-alive ({@code KeepAliveLockProvider}) only logs when it cannot extend a
     * lock; the task goes on.
     *
     * @return a provider that interrupts a task whose lock is lost; this provider is unchanged
     */
    public SynchronizersLockProvider withInterruptOnLoss() {
        return new SynchronizersLockProvider(locks, renewal, true);
    }

    /**
     * Tries once to take the lock named {@code configuration.getName()}, without waiting. With the
     * default lease the hold ends after {@code lockAtMostFor} (at least 1 ms) unless unlocked or
     * extended first; a keep-alive provider renews it (see {@link #withKeepAlive()}). One round trip
     * (one per node, in parallel, for a quorum lock).
     *
     * <p>If the current thread is interrupted on entry, or while the try is in flight, the lock is
     * not taken (an acquisition the caller does not get is given back), the interrupt status is
     * set again, and empty is returned.
     *
     * @param configuration the lock's name, {@code lockAtMostFor} and {@code lockAtLeastFor}
     * @return a {@link FencedLock} that holds the lock, or empty if anyone else holds it, this
     *     provider included (not reentrant)
     * @throws NullPointerException if {@code configuration} is null, or the lock function returns
     *     null
     * @throws IllegalArgumentException if {@code lockAtMostFor} is over what the lock accepts as a
     *     lease (3650 days; a quorum lock also refuses one its clock-drift allowance eats half of,
     *     which is under about 6 ms with the default drift factor)
     * @throws SynchronizerUnavailableException if the store does not answer within the client's
     *     command timeout; nothing is held then
     * @throws IllegalStateException if the client is closed
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        requireNonNull(configuration, "configuration");
        String name = configuration.getName();
        DistributedLock lock = requireNonNull(locks.apply(name), () -> "the lock function returned null for " + name);
        Optional<LockHandle> handle;
        try {
            handle = renewal == Renewal.NONE
                    ? lock.tryAcquire(Duration.ZERO, lease(configuration.getLockAtMostFor()))
                    : lock.tryAcquire(Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
        if (handle.isEmpty()) {
            return Optional.empty();
        }
        Hold hold = new Hold(handle.get(), renewal);
        hold.armCap(configuration.getLockAtMostFor());
        if (interruptOnLoss) {
            hold.interruptOnLoss(Thread.currentThread());
        }
        ArrayDeque<Hold> running = RUNNING.get();
        if (running == null) {
            running = new ArrayDeque<>();
            RUNNING.set(running);
        }
        running.addLast(hold);
        return Optional.of(new HeldLock(hold, configuration));
    }

    /**
     * Returns the fencing token of the task running on the current thread: the hold of the
     * innermost lock that a {@code SynchronizersLockProvider} took on this thread and that has not
     * been unlocked yet, as ShedLock's executor takes it before the task and unlocks it after (so a
     * {@code @SchedulerLock} method, or a {@code LockingTaskExecutor} task, reads its own lock's
     * token). A lock extended meanwhile, by {@code LockExtender} or another thread, keeps its token.
     * A lock taken on this thread and unlocked on another no longer counts. Makes no network call.
     *
     * <p>The token is answered also when the hold was lost meanwhile: it is the token the task's
     * writes should carry, so that a store that has seen a newer one refuses them.
     *
     * @return the running task's fencing token
     * @throws IllegalStateException if no lock of this class is held on the current thread (the
     *     task was not run under one, or it runs on another thread than the one that locked it)
     */
    public static long currentFencingToken() {
        ArrayDeque<Hold> running = RUNNING.get();
        if (running != null) {
            while (!running.isEmpty()) {
                Hold hold = running.peekLast();
                if (!hold.unlocked) {
                    return hold.handle.fencingToken();
                }
                running.removeLast();   // unlocked on another thread
            }
            RUNNING.remove();
        }
        throw new IllegalStateException("no SynchronizersLockProvider lock is held on this thread");
    }

    /** Returns the kind of lease this provider gives, e.g. {@code SynchronizersLockProvider[keep-alive]}. */
    @Override
    public String toString() {
        return "SynchronizersLockProvider[" + renewal.description + (interruptOnLoss ? ", interrupt on loss" : "") + "]";
    }

    private static Duration lease(Duration lockAtMostFor) {
        return lockAtMostFor.compareTo(ONE_MILLISECOND) < 0 ? ONE_MILLISECOND : lockAtMostFor;
    }

    /** How a hold is kept. */
    private enum Renewal {
        NONE("lease lockAtMostFor"),
        UNCAPPED("keep-alive"),
        CAPPED("keep-alive up to lockAtMostFor");

        final String description;

        Renewal(String description) {
            this.description = description;
        }
    }

    /**
     * One hold, shared by a lock and the locks its extensions return: the handle, and for a capped
     * keep-alive the cap that is armed now.
     */
    private static final class Hold {
        final LockHandle handle;
        final Renewal renewal;
        volatile boolean unlocked;
        /** Guards the cap; a lock rather than a monitor, since it is held across a round trip. */
        private final ReentrantLock capLock = new ReentrantLock();
        /** Which arming of the cap is current: a cap armed earlier does nothing when it fires. */
        private long capGeneration;   // guarded by capLock
        private boolean capped;       // guarded by capLock: the hold has its fixed lease already
        /** The thread to interrupt on loss, until the hold is unlocked; null if none. Guarded by this. */
        private Thread runner;
        /** Whether the loss interrupted {@link #runner}. Guarded by this. */
        private boolean interruptedByLoss;

        Hold(LockHandle handle, Renewal renewal) {
            this.handle = handle;
            this.renewal = renewal;
        }

        /**
         * For a capped keep-alive, makes the hold end {@code lockAtMostFor} from now: half way, it
         * gets a fixed lease for the rest; if it has one already, it gets the new one at once.
         *
         * @return false if the store no longer had the hold
         */
        boolean armCap(Duration lockAtMostFor) {
            if (renewal != Renewal.CAPPED) {
                return true;
            }
            long deadlineNanos = System.nanoTime() + lockAtMostFor.toNanos();
            long generation;
            capLock.lock();
            try {
                if (capped) {
                    return handle.extend(lease(lockAtMostFor));
                }
                generation = ++capGeneration;
            } finally {
                capLock.unlock();
            }
            scheduleCap(generation, deadlineNanos, lockAtMostFor.toNanos() / 2);
            return true;
        }

        private void scheduleCap(long generation, long deadlineNanos, long delayNanos) {
            CompletableFuture.delayedExecutor(delayNanos, TimeUnit.NANOSECONDS)
                    .execute(() -> cap(generation, deadlineNanos));
        }

        /** Gives the hold a fixed lease up to its deadline, unless it was unlocked or re-armed. */
        private void cap(long generation, long deadlineNanos) {
            capLock.lock();
            try {
                if (unlocked || generation != capGeneration || capped) {
                    return;
                }
                long restNanos = deadlineNanos - System.nanoTime();
                try {
                    handle.extend(lease(Duration.ofNanos(Math.max(restNanos, 0))));
                    capped = true;   // or lost: either way the watchdog no longer renews it
                } catch (SynchronizerUnavailableException e) {
                    // Still renewed by the watchdog: try again half way to the deadline, or soon
                    // once it has passed (a late cap is still a cap).
                    scheduleCap(generation, deadlineNanos,
                            restNanos > RETRY_NANOS ? restNanos / 2 : RETRY_NANOS);
                } catch (IllegalStateException e) {
                    capped = true;   // released meanwhile, or the client closed: nothing to cap
                }
            } finally {
                capLock.unlock();
            }
        }

        /**
         * Interrupts {@code runner} when the hold is lost, as long as it is not unlocked by then.
         * The stage completes on the client's executor, never on the runner itself.
         */
        void interruptOnLoss(Thread runner) {
            synchronized (this) {
                this.runner = runner;
            }
            handle.lost().thenAccept(report -> {
                synchronized (this) {
                    if (this.runner != null) {
                        interruptedByLoss = true;
                        this.runner.interrupt();
                    }
                }
            });
        }

        /**
         * Marks the hold unlocked, and forgets it on this thread if it was taken here; clears the
         * interrupt that {@link #interruptOnLoss} set, if this is the thread it interrupted.
         */
        void unlocked() {
            synchronized (this) {
                if (interruptedByLoss && runner == Thread.currentThread()) {
                    Thread.interrupted();
                }
                runner = null;
            }
            unlocked = true;
            ArrayDeque<Hold> running = RUNNING.get();
            if (running != null) {
                for (Iterator<Hold> it = running.descendingIterator(); it.hasNext(); ) {
                    if (it.next() == this) {
                        it.remove();
                        break;
                    }
                }
                if (running.isEmpty()) {
                    RUNNING.remove();
                }
            }
        }
    }

    /**
     * A ShedLock lock over a {@link Hold}: valid until it is unlocked or extended (its extension is
     * a new lock over the same hold).
     */
    private static final class HeldLock implements FencedLock {
        private final Hold hold;
        private final LockConfiguration configuration;
        private boolean valid = true;   // guarded by this
        /** Whether an extension found the hold ended: no lock succeeds this one. Guarded by this. */
        private boolean extensionFailed;

        HeldLock(Hold hold, LockConfiguration configuration) {
            this.hold = hold;
            this.configuration = configuration;
        }

        @Override
        public long fencingToken() {
            return hold.handle.fencingToken();
        }

        /**
         * Ends the hold but keeps the name closed until {@code lockAtLeastUntil} by the store's
         * clock, or releases it now if that has passed. One round trip.
         *
         * @throws IllegalStateException if this lock was unlocked or extended before
         * @throws LostHoldException if the hold had ended before: its lease ran out or it was lost
         *     (the task may have overlapped another run)
         * @throws SynchronizerUnavailableException if the store does not answer; the hold then ends
         *     with its lease at the latest
         */
        @Override
        public void unlock() {
            invalidate();
            hold.unlocked();
            Duration rest = Duration.between(
                    ClockProvider.now(), configuration.getLockAtLeastUntil());
            if (rest.compareTo(ONE_MILLISECOND) < 0) {
                hold.handle.release();
            } else {
                hold.handle.releaseAfter(rest);
            }
        }

        /**
         * Extends the hold as ShedLock defines it: a fixed lease of {@code lockAtMostFor} from now
         * (a keep-alive hold stays renewed instead, up to {@code lockAtMostFor} from now if capped),
         * and {@code lockAtLeastFor} from now for the unlock. One round trip. This lock is no longer
         * usable afterwards, whatever the outcome.
         *
         * @return the lock that holds the extended hold (with the same fencing token), or empty if
         *     the hold had ended
         * @throws IllegalStateException if this lock was unlocked or extended before
         * @throws SynchronizerUnavailableException if the store does not answer; this lock stays
         *     usable then, and the hold unchanged
         */
        @Override
        public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
            LockConfiguration extended = new LockConfiguration(
                    ClockProvider.now(), configuration.getName(), lockAtMostFor,
                    lockAtLeastFor);
            invalidate();
            boolean held;
            try {
                held = switch (hold.renewal) {
                    case NONE -> hold.handle.extend(lease(lockAtMostFor));
                    case UNCAPPED -> hold.handle.verify();
                    case CAPPED -> hold.handle.verify() && hold.armCap(lockAtMostFor);
                };
            } catch (SynchronizerUnavailableException e) {
                synchronized (this) {
                    valid = true;
                }
                throw e;
            }
            if (!held) {
                // The task may go on with this hold's token (its writes should carry it); it is
                // forgotten on this thread when ShedLock's executor unlocks this lock after the task.
                synchronized (this) {
                    extensionFailed = true;
                }
                return Optional.empty();
            }
            return Optional.of(new HeldLock(hold, extended));
        }

        private synchronized void invalidate() {
            if (!valid) {
                if (extensionFailed) {
                    hold.unlocked();
                }
                throw new IllegalStateException(
                        "lock " + configuration.getName() + " was unlocked or extended already");
            }
            valid = false;
        }

        @Override
        public String toString() {
            return "SynchronizersLockProvider.lock[" + configuration.getName() + ", token "
                    + hold.handle.fencingToken() + "]";
        }
    }
}
