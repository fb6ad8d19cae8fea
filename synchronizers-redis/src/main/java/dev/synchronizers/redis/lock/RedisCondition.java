package dev.synchronizers.redis.lock;

import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.UnexpectedReplyException;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.wakeup.WakeupMessage;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Condition} of a lock of one server ({@code lock(name)}, {@code fairLock(name)}, a
 * {@code writeLock()}), shared by every client that makes the same condition of the same lock: the
 * waiters of all clients wait in one queue in Redis, kept under the lock's hash tag.
 *
 * <p><b>Identity.</b> A condition is named by its lock and its index among the conditions made
 * through that lock object ({@link dev.synchronizers.DistributedLock#newCondition()}): the first is
 * 0, the next 1, and so on. Two clients that make their conditions of a lock in the same order (as
 * {@code BoundedBuffer}'s {@code notFull} and {@code notEmpty} fields are made) share them. A
 * condition made by name ({@link dev.synchronizers.DistributedLock#newCondition(String)}) is named
 * by its lock and that name instead.
 *
 * <p><b>Waiting.</b> {@code await} checks that the thread holds the lock, then, in this order:
 * registers the waiter in Redis (one script, which checks the hold in Redis too), releases the hold
 * completely (all reentrant levels, waking the lock's waiters as the last {@code unlock()} would),
 * sleeps until it is signalled, its time is up or it is interrupted, leaves the condition, and takes
 * the lock again with its hold count, uninterruptibly, before it returns or throws. Registering
 * before releasing is what keeps a signal sent between the release and the sleep from being missed.
 * The waiter sleeps on a Pub/Sub wake-up that names it; its place in Redis is leased like a queue
 * place and renewed by the watchdog, whose renewal is also the backstop that finds a signal whose
 * wake-up was lost, within one renewal period.
 *
 * <p><b>Signalling.</b> {@code signal()} moves the oldest waiter whose place is live to the
 * signalled set and names it on the channel; {@code signalAll()} does so for every waiter
 * registered before it. Both check in the same script that the caller holds the lock, and run at
 * most once: a signal carries an id that Redis remembers for a lease, so one repeated because its
 * reply was lost signals nobody again. A signal nobody waits for is not remembered.
 *
 * <p><b>Signalled waiters.</b> A signalled waiter takes its signal up when it has taken the lock
 * again, which may be long after the signal if the signaller keeps the lock. Until then the watchdog
 * renews its signal as it renewed its place, so the signal stays its own for as long as it lives: one
 * {@code signal()} wakes one live waiter however long the lock is kept after it.
 *
 * <p><b>Dead waiters.</b> A waiter whose process dies (or that is cut off from Redis for a lease)
 * leaves when its place's lease runs out. A signal that chose it has a lease of its own, which ends
 * when its waiter stops renewing it; a signal still not taken up then passes on to the oldest live
 * waiter, at the next script that touches the condition, at the latest the next renewal of a live
 * waiter's place: so a live waiter is woken within a lease and one renewal period (a third of the
 * lease) of its waiter's last renewal, and no signal is swallowed by a dead waiter. A waiter cut off
 * whose signal passed on meanwhile returns from {@code await} all the same: one of the spurious
 * wake-ups {@link Condition} allows.
 *
 * <p>Thread-safe; each waiting thread has its own registration.
 */
public final class RedisCondition implements Condition {

    private static final Logger log = LoggerFactory.getLogger(RedisCondition.class);

    /** How long a signal refused for want of a connection waits before it is sent again. */
    private static final long SIGNAL_RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final RedisLock lock;
    private final Machinery machinery;
    private final LockKeys.ConditionKeys keys;
    private final String what;

    public RedisCondition(RedisLock lock, Machinery machinery, LockKeys.ConditionKeys keys, String what) {
        this.lock = lock;
        this.machinery = machinery;
        this.keys = keys;
        this.what = what;
    }

    /* --------------- await --------------- */

    @Override
    public void await() throws InterruptedException {
        await(Acquirer.FOREVER, true);
    }

    @Override
    public void awaitUninterruptibly() {
        try {
            await(Acquirer.FOREVER, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait threw InterruptedException", e);
        }
    }

    @Override
    public long awaitNanos(long nanosTimeout) throws InterruptedException {
        // Long.MAX_VALUE is Acquirer.FOREVER: kept a timed wait, so that the time left is returned.
        return await(Math.max(0, Math.min(nanosTimeout, Long.MAX_VALUE - 1)), true);
    }

    @Override
    public boolean await(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return await(Math.max(0, unit.toNanos(time)), true) > 0;
    }

    @Override
    public boolean awaitUntil(Date deadline) throws InterruptedException {
        Objects.requireNonNull(deadline, "deadline");
        // Wall-clock deadline turned into a duration once; the wait itself runs on nanoTime.
        long millis = deadline.getTime() - System.currentTimeMillis();
        long nanos = millis <= 0 ? 0 : millis >= Long.MAX_VALUE / 1_000_000 ? Long.MAX_VALUE - 1
                : TimeUnit.MILLISECONDS.toNanos(millis);
        return await(nanos, true) > 0;
    }

    /**
     * The one await behind every variant.
     *
     * @param timeoutNanos {@link Acquirer#FOREVER}, or how long to wait (zero: none)
     * @return for a timed wait, the time left (zero or less: timed out; a signal consumed counts as
     *     at least 1); for an untimed one, 1
     * @throws InterruptedException if {@code interruptible} and interrupted before or while waiting,
     *     after the lock is taken again (an interrupt after the signal was taken up is kept as the
     *     interrupt status instead)
     */
    private long await(long timeoutNanos, boolean interruptible) throws InterruptedException {
        long start = System.nanoTime();
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        long threadId = ClientContext.currentThreadId();
        Holds.Hold held = lock.holds.get(threadId);
        if (held == null) {
            throw new IllegalMonitorStateException(what + ": await() by a thread that does not hold the lock");
        }
        int count = held.count;
        long fixedLeaseMillis = held.lease.fixed() ? held.lease.fixedMillis() : 0;
        LostHold.Cause ended = held.lease.endedBecause();
        if (ended != null) {
            // Lost before the await (and reported then): the hold is dropped, the lock taken again,
            // and the loss thrown, so that the caller's finally { unlock(); } still finds a hold.
            RuntimeException lost = lock.lost(ended, "await()");
            try {
                lock.releaseForAwait(threadId, held);
            } catch (RuntimeException e) {
                lost = e;
            }
            retake(count, fixedLeaseMillis, lost, Thread.interrupted());
            throw lost;
        }
        boolean timed = timeoutNanos != Acquirer.FOREVER;
        if (timed && timeoutNanos == 0) {
            // Nothing to wait for: as a release and an immediate re-take, which no one could tell apart.
            return 0;
        }
        machinery.checkOpen();
        String waiter = machinery.newAttempt();
        WakeupDispatcher.Subscription subscription;
        try {
            // Subscribed before registering, so that no signal after the registration is missed.
            subscription = machinery.wakeups.subscribe(keys.clientWakeups(machinery.clientId), waiter);
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        }
        Wait wait = new Wait(waiter, subscription);
        // Counted as an acquisition until it has left the condition, so that close() lets a waiter
        // it fails leave (and pass its signal on) while the connections are still open.
        machinery.acquisitionStarted();
        boolean interrupted;
        try {
            interrupted = waitAndRetake(wait, threadId, held, count, fixedLeaseMillis, timed, start + timeoutNanos,
                    interruptible);
        } finally {
            machinery.acquisitionEnded();
        }
        interrupted |= Thread.interrupted();
        if (wait.failure != null) {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            throw wait.failure;
        }
        if (interrupted) {
            // An interrupt after the signal was taken up is kept for the caller, as ReentrantLock's
            // condition does: thrown now, it would swallow a signal no one else gets.
            if (interruptible && !wait.signalled) {
                throw new InterruptedException();
            }
            Thread.currentThread().interrupt();
        }
        if (!timed) {
            return 1;
        }
        long left = start + timeoutNanos - System.nanoTime();
        // Signalled, or woken spuriously (see Condition's javadoc): time may be left. Otherwise timed out.
        return wait.signalled || wait.endedUnsure ? Math.max(1, left) : Math.min(0, left);
    }

    /**
     * Registers the waiter, releases the thread's hold, sleeps, takes the lock again with
     * {@code count} holds and leaves the condition; returns whether the thread was interrupted.
     * Throws as {@link #await(long, boolean)} does where it fails before the re-take.
     */
    private boolean waitAndRetake(Wait wait, long threadId, Holds.Hold held, int count, long fixedLeaseMillis,
            boolean timed, long deadline, boolean interruptible) {
        try {
            wait.register(held);
            if (wait.failure == null) {
                try {
                    lock.releaseForAwait(threadId, held);
                } catch (RuntimeException e) {
                    // Lost before the await (reported as every lost hold is), or Redis gone.
                    wait.failure = e;
                }
            }
            if (wait.failure == null) {
                wait.sleep(timed, deadline, interruptible);
            }
        } catch (RuntimeException | Error e) {
            wait.leave(false);
            throw e;
        }
        if (!wait.registered) {
            // Never released: still held; nothing to take again.
            wait.leave(false);
            throw wait.failure;
        }
        boolean interrupted = wait.interrupted | Thread.interrupted();
        // The signal is taken up only once the lock is held again: if the re-take fails (the client
        // closed, Redis gone), the leave passes it on, or, when Redis cannot be told, its lease runs
        // out and it passes on as a dead waiter's does. Never swallowed by a waiter that throws.
        boolean retaken = false;
        try {
            retake(count, fixedLeaseMillis, wait.failure, interrupted);
            retaken = true;
        } finally {
            wait.leave(retaken);
        }
        return interrupted;
    }

    /**
     * Takes the lock again with {@code count} holds, uninterruptibly. If that fails, the interrupt
     * status is restored and the failure thrown, with {@code failure} (the await's own) suppressed.
     */
    private void retake(int count, long fixedLeaseMillis, RuntimeException failure, boolean interrupted) {
        try {
            lock.retake(count, fixedLeaseMillis);
        } catch (RuntimeException e) {
            if (failure != null && failure != e) {
                e.addSuppressed(failure);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            throw e;
        }
        if (interrupted && failure != null) {
            Thread.currentThread().interrupt();
        }
    }

    /** One thread's wait on this condition, from its registration to its leaving. */
    private final class Wait {
        private final String waiter;
        private final WakeupDispatcher.Subscription subscription;
        private Watchdog.Lease place;
        boolean registered;
        boolean signalled;
        boolean interrupted;
        /** Ended by the watchdog (its place gone or unrenewable) or a reconnection: the leave asks Redis. */
        boolean endedUnsure;
        RuntimeException failure;
        /** The registration's reply did not come: it may have run, so leaving must withdraw it. */
        private boolean withdrawInDoubt;

        Wait(String waiter, WakeupDispatcher.Subscription subscription) {
            this.waiter = waiter;
            this.subscription = subscription;
        }

        /** Registers the waiter while the thread holds the lock; a hold Redis no longer has is declared lost. */
        void register(Holds.Hold held) {
            long sent = System.nanoTime();
            Long reply;
            try {
                reply = machinery.await(machinery.scripts.run(Script.COND_AWAIT, keys.keysFor(Script.COND_AWAIT),
                        held.owner, held.checkToken, waiter, Long.toString(machinery.leaseMillis)),
                        "wait on " + what);
            } catch (RuntimeException e) {
                // It may have run: leave() withdraws it, after it on the same connection.
                registered = false;
                failure = machinery.unlessClosed(e);
                withdrawInDoubt = true;
                return;
            }
            if (reply == null || reply != 0L && reply != 1L) {
                throw new UnexpectedReplyException(Script.COND_AWAIT, reply, "0 or 1");
            }
            registered = true;
            // Renewed until leave(): the place while it waits, then its signal until it is taken up
            // with the lock held again. A renewal that finds it signalled is as good as the wake-up.
            place = machinery.watchdog.register(Renewal.ofWaiter(Script.COND_RENEW_PLACE,
                    keys.keysFor(Script.COND_RENEW_PLACE), new String[] {waiter}, sent, Thread.currentThread(),
                    cause -> subscription.wake(), () -> subscription.grant("")));
            if (reply == 0L) {
                // Redis no longer has the hold: releaseForAwait() finds it lost and throws.
                lock.backend.declareLost(held.lease, LostHold.Cause.GONE);
            }
        }

        /**
         * Sleeps until signalled, timed out or interrupted (or, for an uninterruptible wait, only
         * the first two, the interrupt remembered). A wake-up that is not a signal (a reconnection,
         * the watchdog) is settled by asking Redis.
         */
        void sleep(boolean timed, long deadlineNanos, boolean interruptible) {
            while (true) {
                subscription.reset();
                if (subscription.granted() != null) {
                    signalled = true;
                    return;
                }
                if (place.endedBecause() != null) {
                    endedUnsure = true;
                    return;
                }
                try {
                    machinery.checkOpen();
                } catch (IllegalStateException closed) {
                    failure = closed;
                    return;
                }
                if (Thread.interrupted()) {
                    interrupted = true;
                    if (interruptible) {
                        return;
                    }
                }
                long remaining = timed ? deadlineNanos - System.nanoTime() : Long.MAX_VALUE;
                if (remaining <= 0) {
                    return;
                }
                subscription.await(remaining);
                if (subscription.granted() == null && place.endedBecause() == null && machinery.isOpen()
                        && !Thread.currentThread().isInterrupted()
                        && (!timed || deadlineNanos - System.nanoTime() > 0) && signalledInRedis()) {
                    // Woken by a reconnection, whose wake-up may have been lost meanwhile.
                    signalled = true;
                    return;
                }
            }
        }

        /** One round trip, after a wake-up that was not a signal: whether Redis has this waiter signalled. */
        private boolean signalledInRedis() {
            try {
                return machinery.await(machinery.redis.zscore(keys.signalled(), waiter), "look at " + what) != null;
            } catch (RuntimeException e) {
                return false;   // the watchdog's renewal settles it, within a renewal period
            }
        }

        /**
         * Stops renewing the place and leaves the condition: a signal taken up if the wait ended
         * because of it and the lock is held again ({@code retaken}), passed on otherwise (timed
         * out, interrupted, failed, or the lock not taken again). Retried until Redis answers,
         * within a lease.
         */
        void leave(boolean retaken) {
            if (place != null) {
                machinery.watchdog.unregister(place);
            }
            if (registered || withdrawInDoubt) {
                boolean take = retaken && (signalled || endedUnsure) && failure == null;
                String[] args = {waiter, take ? "1" : "0", Long.toString(machinery.leaseMillis)};
                try {
                    Long reply = machinery.await(machinery.scripts.run(Script.COND_LEAVE,
                            keys.keysFor(Script.COND_LEAVE), args), "leave " + what);
                    if (endedUnsure && reply != null && reply == 2L) {
                        signalled = true;
                    }
                } catch (RuntimeException e) {
                    machinery.metrics.followUp(Recorder.FollowUp.LEAVE);
                    log.debug("{}: could not leave; retrying until its place's lease is over: {}", what, e.toString());
                    machinery.followUps.retryUntil(Script.COND_LEAVE, "leave " + what,
                            () -> machinery.scripts.run(Script.COND_LEAVE, keys.keysFor(Script.COND_LEAVE), args),
                            System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
                }
            }
            subscription.close();
        }
    }

    /* --------------- signal --------------- */

    @Override
    public void signal() {
        signal(1, "signal()");
    }

    @Override
    public void signalAll() {
        signal(0, "signalAll()");
    }

    /**
     * Signals {@code count} waiters (0: every waiter), for the thread that holds the lock. A signal
     * whose reply does not come is sent again with the same id until Redis answers, for at most
     * the command timeout after the first failure: Redis runs it at most once, and the caller still
     * holds the lock, so it cannot be left to run after an unlock() (the hold check would refuse it
     * there, and a waiter miss it).
     */
    private void signal(int count, String method) {
        long threadId = ClientContext.currentThreadId();
        Holds.Hold held = heldByCurrentThread(threadId, method);
        machinery.checkOpen();
        String id = machinery.newAttempt();
        String[] args = {held.owner, held.checkToken, id, Integer.toString(count),
                Long.toString(machinery.leaseMillis)};
        List<Object> reply;
        SynchronizerUnavailableException first = null;
        long deadline = 0;
        while (true) {
            try {
                reply = sendSignal(args);
                break;
            } catch (SynchronizerUnavailableException e) {
                if (first == null) {
                    first = e;
                    deadline = System.nanoTime() + machinery.timeout.toNanos();
                    machinery.metrics.followUp(Recorder.FollowUp.RETRY);
                }
                machinery.checkOpen();
                if (System.nanoTime() - deadline >= 0) {
                    if (e != first) {
                        e.addSuppressed(first);
                    }
                    throw machinery.unlessClosed(e);
                }
                // Refused at once while the connection is down: wait for it to come back.
                LockSupport.parkNanos(this, SIGNAL_RETRY_PAUSE_NANOS);
            }
        }
        long status = reply.isEmpty() || !(reply.get(0) instanceof Long value) ? -1 : value;
        if (status == 0L) {
            lock.backend.declareLost(held.lease, LostHold.Cause.GONE);
            throw lock.lost(LostHold.Cause.GONE, method);
        }
        if (status != 1L && status != 2L) {
            throw new UnexpectedReplyException(Script.COND_SIGNAL, reply, "{1, waiter...}, {2} or {0}");
        }
        // This client's waiters hear it at once rather than when the message comes back.
        for (Object woken : reply.subList(1, reply.size())) {
            machinery.wakeups.wake(keys.clientWakeups(machinery.clientId),
                    WakeupMessage.granted(String.valueOf(woken), "").encode());
        }
    }

    private List<Object> sendSignal(String[] args) {
        return machinery.await(machinery.scripts.run(Script.COND_SIGNAL, keys.keysFor(Script.COND_SIGNAL), args),
                "signal " + what);
    }

    /* --------------- helpers --------------- */

    /**
     * The current thread's live hold of the lock.
     *
     * @throws IllegalMonitorStateException if it does not hold it ({@link dev.synchronizers.LostHoldException}
     *     if its hold was lost)
     */
    private Holds.Hold heldByCurrentThread(long threadId, String method) {
        Holds.Hold held = lock.holds.get(threadId);
        if (held == null) {
            throw new IllegalMonitorStateException(what + ": " + method + " by a thread that does not hold the lock");
        }
        LostHold.Cause ended = held.lease.endedBecause();
        if (ended != null) {
            throw lock.lost(ended, method);
        }
        return held;
    }

    /** Shows the lock and the condition; makes no network call. */
    @Override
    public String toString() {
        return "RedisCondition[" + what + "]";
    }
}
