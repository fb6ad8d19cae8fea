package dev.synchronizers.redis;

import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Turns one-shot acquire steps into the blocking semantics of {@code java.util.concurrent}: the
 * deadline, interrupts, sleeping on a wake-up or the holder's lease, and the local queue.
 *
 * <p>One acquirer serves one synchronizer name in one client. Its waiters queue locally, in
 * arrival order, behind a fair gate, so that only the head of the local queue talks to Redis: it
 * subscribes to the name's wake-up channel, tries again (a release published before the
 * subscription was active is seen by this second try), and then sleeps until a wake-up arrives or
 * the holder's remaining lease is up, whichever is first. It never polls Redis in a loop: every
 * attempt follows a wake-up, an expired lease, or a reconnect.
 *
 * <p>Uses {@link java.util.concurrent.locks.LockSupport#parkNanos} and a {@link Semaphore}, never {@code synchronized}, so a
 * waiting virtual thread does not pin its carrier.
 */
final class Acquirer {

    /** A timeout that means "wait until acquired". */
    static final long FOREVER = Long.MAX_VALUE;

    /** One acquire step: one script call. */
    @FunctionalInterface
    interface Step {
        /**
         * Tries once.
         *
         * @param subscribed whether the caller is subscribed to wake-ups, so that a failed step
         *     should record it as a waiter (and the release publish)
         */
        Attempt attempt(boolean subscribed);
    }

    private final WakeupDispatcher wakeups;
    private final String channel;
    private final long recheckNanos;
    /** Admits one local waiter at a time to Redis, in arrival order. */
    private final Semaphore gate = new Semaphore(1, true);
    /** The subscription of the local waiter that talks to Redis now, for a local release to wake it at once. */
    private volatile WakeupDispatcher.Subscription head;

    Acquirer(WakeupDispatcher wakeups, String channel, long recheckMillis) {
        this.wakeups = wakeups;
        this.channel = channel;
        this.recheckNanos = TimeUnit.MILLISECONDS.toNanos(recheckMillis);
    }

    /**
     * Acquires by repeating {@code step} until it succeeds, the timeout elapses or, if
     * {@code interruptible}, the thread is interrupted.
     *
     * @param step the acquire step
     * @param timeoutNanos how long to wait: {@link #FOREVER}, or a duration; zero or less makes one
     *     attempt without queueing
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}; if
     *     not, the interrupt status is set again on return
     * @return the last attempt: acquired, or not when the timeout elapsed
     * @throws InterruptedException if interruptible and interrupted on entry or while waiting; the
     *     status is cleared and nothing is held (a step in flight is waited for first, and a
     *     successful one returned rather than abandoned)
     */
    Attempt acquire(Step step, long timeoutNanos, boolean interruptible) throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        long start = System.nanoTime();
        // Barge once, unless local waiters queue: they would only find the lock taken by a
        // neighbour and sleep again, costing Redis an attempt for nothing.
        if (timeoutNanos <= 0 || !gate.hasQueuedThreads() && gate.availablePermits() > 0) {
            Attempt first = step.attempt(false);
            if (first.acquired() || timeoutNanos <= 0) {
                return first;
            }
        }
        if (!enterQueue(start, timeoutNanos, interruptible)) {
            return new Attempt(false, -1, -1, start);
        }
        boolean interrupted = false;
        try (WakeupDispatcher.Subscription subscription = wakeups.subscribe(channel)) {
            head = subscription;
            while (true) {
                // Forget wake-ups before the check, so any release after it wakes the sleep below.
                subscription.reset();
                Attempt attempt = step.attempt(true);
                if (attempt.acquired()) {
                    return attempt;
                }
                long remaining = timeoutNanos == FOREVER ? FOREVER : timeoutNanos - (System.nanoTime() - start);
                if (remaining <= 0) {
                    return attempt;
                }
                long holderNanos = attempt.holderTtlMillis() > 0
                        ? TimeUnit.MILLISECONDS.toNanos(attempt.holderTtlMillis())
                        : recheckNanos;
                subscription.await(Math.min(remaining, holderNanos));
                if (Thread.interrupted()) {
                    if (interruptible) {
                        throw new InterruptedException();
                    }
                    interrupted = true;
                }
            }
        } finally {
            head = null;
            gate.release();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Wakes the local waiter that talks to Redis, if any: a local release need not wait for Pub/Sub. */
    void wakeHead() {
        WakeupDispatcher.Subscription waiter = head;
        if (waiter != null) {
            waiter.wake();
        }
    }

    /** Tells whether local threads wait, for {@code toString()}. */
    boolean hasWaiters() {
        return head != null || gate.hasQueuedThreads();
    }

    private boolean enterQueue(long start, long timeoutNanos, boolean interruptible) throws InterruptedException {
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
