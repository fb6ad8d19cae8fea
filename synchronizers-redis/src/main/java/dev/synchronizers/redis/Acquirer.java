package dev.synchronizers.redis;

import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Turns one-shot acquire steps into the blocking semantics of {@code java.util.concurrent}: the
 * deadline, interrupts, sleeping on a wake-up or the holder's lease, and the local queue.
 *
 * <p>One acquirer serves one synchronizer name in one client. A waiter tries once; if that fails
 * it subscribes to the name's wake-up channel, tries again (a release published before the
 * subscription was active is seen by this second try), and then sleeps until a wake-up arrives or
 * until the time the failed try said the lock could change hands without one (the holder's
 * remaining lease), whichever is first. It never polls Redis in a loop: every try follows a
 * wake-up, an expired lease, or a reconnect.
 *
 * <p>With a local queue (the non-fair lock), waiters of this client queue in arrival order behind a
 * fair gate, so that only the first of them talks to Redis. Without one (the fair lock), every
 * waiter keeps its own place in Redis's queue and is woken by name. Where Redis serves the queue
 * itself (the fair lock, the semaphore), the message that names the waiter says it has been
 * handed what it waited for ({@link Step#granted(String)}), and the waiter returns without another
 * try.
 *
 * <p>Uses {@link java.util.concurrent.locks.LockSupport#parkNanos} and a {@link Semaphore}, never
 * {@code synchronized}, so a waiting virtual thread does not pin its carrier.
 */
final class Acquirer {

    /** A timeout that means "wait until acquired". */
    static final long FOREVER = Long.MAX_VALUE;

    /** One waiter's acquire steps: one script call each, plus what to do around the wait. */
    interface Step {
        /**
         * Tries once.
         *
         * @param subscribed whether the caller is subscribed to wake-ups, so that a failed try
         *     should record it as a waiter
         */
        Attempt attempt(boolean subscribed);

        /**
         * Tells whether a thread of this client holds what the waiter waits for, so that its
         * release will wake the local queue's head directly: the head then need not ask Redis
         * until woken. Only consulted with a local queue.
         */
        default boolean heldLocally() {
            return false;
        }

        /**
         * Tells whether a failed first try already registered the waiter in Redis (a queue place,
         * a waiting mark), so that a release after it wakes this waiter: then, if the channel was
         * live before that try, the waiter may sleep without a second try after subscribing.
         */
        default boolean firstTryRegisters() {
            return false;
        }

        /**
         * Books what Redis handed this waiter while it waited ({@link
         * WakeupDispatcher.Subscription#granted()}), without asking Redis again where it can. Only
         * steps whose scripts serve a line by granting are ever called.
         *
         * @param detail what the grant message said of the grant, e.g. a fencing token; "" if nothing
         * @return the attempt: acquired, unless a try made instead found nothing handed over
         */
        default Attempt granted(String detail) {
            throw new IllegalStateException("this synchronizer does not grant by message");
        }

        /**
         * Returns the owner string a neighbour may hand the lock to while this waiter sleeps at the
         * head of the local queue ({@link #reserveHead()}), or null if it cannot take a hand-over.
         */
        default String handoverOwner() {
            return null;
        }

        /** Called once the waiter is subscribed and about to wait, e.g. to keep its queue place leased. */
        default void waiting(WakeupDispatcher.Subscription subscription) {
        }

        /**
         * Called once when the waiter stops: acquired, timed out, interrupted or failed. A waiter
         * that did not acquire must leave no trace (e.g. leave the queue at once).
         */
        default void done(boolean acquired) {
        }
    }

    private final WakeupDispatcher wakeups;
    /** Throws IllegalStateException once the client is closed. */
    private final Runnable checkOpen;
    private final String channel;
    private final long recheckNanos;
    /** Admits one local waiter at a time to Redis, in arrival order; null without a local queue. */
    private final Semaphore gate;
    /** The subscription of the local waiter that talks to Redis now, for a local release to wake it at once. */
    private volatile WakeupDispatcher.Subscription head;
    /** The steps of {@link #head}'s waiter. */
    private volatile Step headStep;

    Acquirer(WakeupDispatcher wakeups, String channel, long recheckMillis, boolean localQueue, Runnable checkOpen) {
        this.wakeups = wakeups;
        this.checkOpen = checkOpen;
        this.channel = channel;
        this.recheckNanos = TimeUnit.MILLISECONDS.toNanos(recheckMillis);
        this.gate = localQueue ? new Semaphore(1, true) : null;
    }

    /**
     * Acquires by repeating {@code step} until it succeeds, the timeout elapses or, if
     * {@code interruptible}, the thread is interrupted.
     *
     * @param step the acquire steps
     * @param owner the waiter's owner string, which a wake-up may name
     * @param timeoutNanos how long to wait: {@link #FOREVER}, or a duration; zero or less makes one
     *     attempt
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}; if
     *     not, the interrupt status is set again on return
     * @return the last attempt: acquired, or not when the timeout elapsed
     * @throws InterruptedException if interruptible and interrupted on entry or while waiting; the
     *     status is cleared and nothing is held (a step in flight is waited for first, and a
     *     successful one returned rather than abandoned)
     */
    Attempt acquire(Step step, String owner, long timeoutNanos, boolean interruptible) throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        long start = System.nanoTime();
        // Barge once, unless local waiters queue: they would only find the lock taken by a
        // neighbour and sleep again, costing Redis an attempt for nothing.
        Attempt first = null;
        if (timeoutNanos <= 0 || gate == null || !gate.hasQueuedThreads() && gate.availablePermits() > 0) {
            first = step.attempt(false);
            if (first.acquired() || timeoutNanos <= 0) {
                step.done(first.acquired());
                return first;
            }
        }
        boolean acquired = false;
        try {
            if (!enterLocalQueue(start, timeoutNanos, interruptible)) {
                return new Attempt(false, -1, -1, start);
            }
            try {
                Attempt attempt = waitInRedis(step, owner, first, start, timeoutNanos, interruptible);
                acquired = attempt.acquired();
                return attempt;
            } finally {
                if (gate != null) {
                    gate.release();
                }
            }
        } finally {
            step.done(acquired);
        }
    }

    private Attempt waitInRedis(Step step, String owner, Attempt first, long start, long timeoutNanos,
            boolean interruptible) throws InterruptedException {
        boolean interrupted = false;
        checkOpen.run();
        boolean registered = first != null && step.firstTryRegisters();
        try (WakeupDispatcher.Subscription subscription = registered
                ? wakeups.subscribe(channel, owner, first.sentNanos())
                : wakeups.subscribe(channel, owner)) {
            if (gate != null) {
                headStep = step;
                head = subscription;
            }
            step.waiting(subscription);
            // Subscribe, then check: unless the first try registered this waiter while the channel
            // was live already, so that every wake-up since has reached it (or woken it at once).
            Attempt attempt = registered && subscription.liveSinceFirstTry() ? first : null;
            while (true) {
                // A grant first: what was handed over is held already, so an interrupt that came
                // with it is left set for the caller, as ReentrantLock does when it wins that race.
                String grant = subscription.granted();
                if (grant != null) {
                    Attempt claimed = step.granted(grant);
                    if (claimed.acquired()) {
                        return claimed;
                    }
                    subscription.forgetGrant();
                    attempt = claimed;
                    continue;
                }
                if (Thread.interrupted()) {
                    if (interruptible) {
                        throw new InterruptedException();
                    }
                    interrupted = true;
                }
                if (attempt != null) {
                    long remaining = timeoutNanos == FOREVER ? FOREVER : timeoutNanos - (System.nanoTime() - start);
                    if (remaining <= 0) {
                        return attempt;
                    }
                    subscription.sleep(Math.min(remaining, sleepFor(attempt)));
                    attempt = null;
                    continue;
                }
                // Forget wake-ups before the check, so any release after it wakes the sleep below.
                subscription.reset();
                if (gate != null && step.heldLocally()) {
                    // The holder is a neighbour: its unlock() wakes this head (already in place, and
                    // its hold is dropped from the books only before that wake), so asking Redis
                    // now could only fail. Sleep until then, bounded as every sleep is.
                    long remaining = timeoutNanos == FOREVER ? FOREVER : timeoutNanos - (System.nanoTime() - start);
                    if (remaining <= 0) {
                        return new Attempt(false, -1, -1, start);
                    }
                    subscription.sleep(Math.min(remaining, recheckNanos));
                    continue;
                }
                attempt = step.attempt(true);
                if (attempt.acquired()) {
                    return attempt;
                }
            }
        } finally {
            if (gate != null) {
                head = null;
                headStep = null;
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * How long a failed attempt allows to sleep: until the lock can change hands without a
     * wake-up. A lease with under a millisecond left is one millisecond; no lease at all (a key
     * someone else wrote) is re-checked after the client's lease.
     */
    private long sleepFor(Attempt attempt) {
        return attempt.holderTtlMillis() >= 0
                ? TimeUnit.MILLISECONDS.toNanos(Math.max(1, attempt.holderTtlMillis()))
                : recheckNanos;
    }

    /** Wakes the local waiter that talks to Redis, if any: a local release need not wait for Pub/Sub. */
    void wakeHead() {
        WakeupDispatcher.Subscription waiter = head;
        if (waiter != null) {
            waiter.wake();
        }
    }

    /**
     * Reserves the local queue's head for a hand-over, if it sleeps and can take one: it then
     * neither wakes, tries nor gives up until the caller {@linkplain
     * WakeupDispatcher.Subscription#settle settles} the reservation, which the caller must do.
     *
     * @return the head's subscription and owner string, or null if there is none to hand over to
     */
    Handover reserveHead() {
        WakeupDispatcher.Subscription waiter = head;
        Step steps = headStep;
        String owner = steps == null ? null : steps.handoverOwner();
        if (waiter == null || owner == null || head != waiter || !waiter.reserve()) {
            return null;
        }
        return new Handover(waiter, owner);
    }

    /** A reserved head: {@link #subscription} must be settled. */
    record Handover(WakeupDispatcher.Subscription subscription, String owner) {
    }

    /** Tells whether local threads wait in the local queue, for {@code toString()}. */
    boolean hasWaiters() {
        return head != null || gate != null && gate.hasQueuedThreads();
    }

    private boolean enterLocalQueue(long start, long timeoutNanos, boolean interruptible) throws InterruptedException {
        if (gate == null) {
            return true;
        }
        if (timeoutNanos == FOREVER) {
            if (interruptible) {
                gate.acquire();
            } else {
                gate.acquireUninterruptibly();
            }
            return true;
        }
        return gate.tryAcquire(Math.max(0, timeoutNanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
    }
}
