package dev.synchronizers.redis.client;

import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

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
 * <p>With a local queue (the non-fair lock), waiters of this client line up in arrival order
 * ({@link LocalLine}), and only the first of them talks to Redis; a neighbour's unlock may hand it
 * the lock without its own round trip. Without a local queue (the fair lock), every
 * waiter keeps its own place in Redis's queue and is woken by name. Where Redis serves the queue
 * itself (the fair lock, the semaphore), the message that names the waiter says it has been
 * handed what it waited for ({@link Step#granted(String)}), and the waiter returns without another
 * try.
 *
 * <p>Uses {@link LockSupport#parkNanos}, never {@code synchronized}, so a waiting virtual thread
 * does not pin its carrier.
 */
public final class Acquirer {

    /** A timeout that means "wait until acquired". */
    public static final long FOREVER = Long.MAX_VALUE;

    /**
     * A caller's wait as the timeout {@link #acquire} takes: a negative one is none (one try), as
     * in {@code java.util.concurrent}; one too long to count in nanoseconds is as good as for ever,
     * yet still a timed wait.
     *
     * @throws NullPointerException if {@code wait} is null, naming it
     */
    public static long timeoutNanos(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            return 0;
        }
        try {
            return Math.min(wait.toNanos(), FOREVER - 1);
        } catch (ArithmeticException tooLong) {
            return FOREVER - 1;
        }
    }

    /** One waiter's acquire steps: one script call each, plus what to do around the wait. */
    public interface Step {
        /**
         * Tries once.
         *
         * @param subscribed whether the caller is subscribed to wake-ups, so that a failed try
         *     should record it as a waiter
         */
        Attempt attempt(boolean subscribed);

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
         * Called when a waiter whose failed first try registered it in Redis joins the local line
         * behind a neighbour who talks to Redis for this client: the client keeps one place in
         * Redis's line, the first waiter's, so this one takes its place out again.
         */
        default void leaveRedisLine() {
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
    /** The client: whether it is closed. */
    private final ClientContext context;
    private final String channel;
    private final long recheckNanos;
    /** This client's waiters in arrival order, the first talking to Redis; null without a local queue. */
    private final LocalLine line;
    /** Counts the hand-overs this synchronizer's waiters receive. */
    private final SynchronizerMeters meters;

    public Acquirer(ClientContext context, String channel, boolean localQueue, SynchronizerMeters meters) {
        this.context = context;
        this.wakeups = context.wakeups;
        this.meters = meters;
        this.channel = channel;
        this.recheckNanos = TimeUnit.MILLISECONDS.toNanos(context.leaseMillis);
        this.line = localQueue ? new LocalLine() : null;
    }

    /**
     * Acquires by repeating {@code step} until it succeeds, the timeout elapses or, if
     * {@code interruptible}, the thread is interrupted.
     *
     * @param step the acquire steps
     * @param participant what the local line asks of the waiter; null for {@link LocalLine#PLAIN}
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
    public Attempt acquire(Step step, LocalLine.Participant participant, String owner, long timeoutNanos,
            boolean interruptible) throws InterruptedException {
        // Counted while it may have a trace in Redis, so that close() lets it take it away first;
        // not while it waits in the local line (it has none there, and nothing wakes it on close).
        context.acquisitionStarted();
        try {
            return acquireCounted(step, participant, owner, timeoutNanos, interruptible);
        } finally {
            context.acquisitionEnded();
        }
    }

    private Attempt acquireCounted(Step step, LocalLine.Participant participant, String owner, long timeoutNanos,
            boolean interruptible) throws InterruptedException {
        if (participant == null) {
            participant = LocalLine.PLAIN;
        }
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        long start = System.nanoTime();
        // Barge once, unless local waiters line up: they would only find the lock taken by a
        // neighbour and sleep again, costing Redis an attempt for nothing.
        Attempt first = null;
        if (timeoutNanos <= 0 || line == null || line.isEmpty() || participant.mustTryFirst()) {
            try {
                first = step.attempt(false);
            } catch (RuntimeException e) {
                // A first try may register the waiter (a queue place) even when its reply is lost.
                step.done(false);
                throw context.unlessClosed(e);
            } catch (Error e) {
                step.done(false);
                throw e;
            }
            if (first.acquired() || timeoutNanos <= 0) {
                step.done(first.acquired());
                return first;
            }
        }
        boolean acquired = false;
        LocalLine.Node node = line == null ? null : line.join(participant);
        if (node != null && first != null && step.firstTryRegisters() && !line.isFirst(node)) {
            // Two threads tried at once: the one behind leaves Redis's line to the first.
            step.leaveRedisLine();
        }
        try {
            if (node != null) {
                Attempt handed;
                context.acquisitionEnded();
                try {
                    handed = waitInLine(step, node, start, timeoutNanos, interruptible);
                } finally {
                    context.acquisitionStarted();
                }
                if (handed != null) {
                    acquired = handed.acquired();
                    return handed;
                }
            }
            Attempt attempt = waitInRedis(step, node, owner, first, start, timeoutNanos, interruptible);
            acquired = attempt.acquired();
            return attempt;
        } catch (RuntimeException e) {
            // A neighbour may have reserved this waiter (e.g. while it subscribed): what it was
            // handed is held already, so take it rather than leave it held by nobody.
            if (node != null && !LocalLine.mayGiveUp(node)) {
                Attempt handed = claim(step, node.grant, true);
                acquired = handed.acquired();
                return handed;
            }
            throw context.unlessClosed(e);
        } finally {
            if (node != null) {
                line.leave(node);
            }
            step.done(acquired);
        }
    }

    /**
     * Waits until the node is first in line (returns null: go and ask Redis), or was handed the
     * lock (returns that attempt), or the time is up (returns a failed attempt).
     */
    private Attempt waitInLine(Step step, LocalLine.Node node, long start, long timeoutNanos, boolean interruptible)
            throws InterruptedException {
        boolean interrupted = false;
        try {
            while (true) {
                if (node.grant != null) {
                    return claim(step, node.grant, true);
                }
                if (line.isFirst(node)) {
                    return null;
                }
                long remaining = timeoutNanos == FOREVER ? FOREVER : timeoutNanos - (System.nanoTime() - start);
                boolean interruptNow = Thread.interrupted();
                if (interruptNow && !interruptible) {
                    interrupted = true;
                }
                if (remaining <= 0 || interruptNow && interruptible) {
                    if (LocalLine.mayGiveUp(node)) {
                        if (interruptNow) {
                            throw new InterruptedException();
                        }
                        return new Attempt(false, -1, -1, start);
                    }
                    if (interruptNow) {
                        Thread.currentThread().interrupt();
                    }
                    return claim(step, node.grant, true);
                }
                LockSupport.parkNanos(this, Math.min(remaining, recheckNanos));
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private Attempt waitInRedis(Step step, LocalLine.Node node, String owner, Attempt first, long start, long timeoutNanos,
            boolean interruptible) throws InterruptedException {
        boolean interrupted = false;
        context.checkOpen();
        boolean registered = first != null && step.firstTryRegisters();
        try (WakeupDispatcher.Subscription subscription = registered
                ? wakeups.subscribe(channel, owner, first.sentNanos())
                : wakeups.subscribe(channel, owner)) {
            if (node != null) {
                node.subscription = subscription;
            }
            step.waiting(subscription);
            // Subscribe, then check: unless the first try registered this waiter while the channel
            // was live already, so that every wake-up since has reached it (or woken it at once).
            Attempt attempt = registered && subscription.liveSinceFirstTry() ? first : null;
            while (true) {
                // A grant first: what was handed over is held already, so an interrupt that came
                // with it is left set for the caller, as ReentrantLock does when it wins that race.
                boolean local = node != null && node.grant != null;
                String grant = local ? node.grant : subscription.granted();
                if (grant != null) {
                    Attempt claimed = claim(step, grant, local);
                    if (claimed.acquired()) {
                        return claimed;
                    }
                    subscription.forgetGrant();
                    attempt = claimed;
                    continue;
                }
                if (Thread.interrupted()) {
                    if (interruptible) {
                        if (LocalLine.mayGiveUp(node)) {
                            throw new InterruptedException();
                        }
                        Thread.currentThread().interrupt();
                        continue;
                    }
                    interrupted = true;
                }
                if (attempt != null) {
                    long remaining = timeoutNanos == FOREVER ? FOREVER : timeoutNanos - (System.nanoTime() - start);
                    if (remaining <= 0) {
                        if (LocalLine.mayGiveUp(node)) {
                            return attempt;
                        }
                        continue;
                    }
                    subscription.await(Math.min(remaining, sleepFor(attempt)));
                    attempt = null;
                    continue;
                }
                // Forget wake-ups before the check, so any release after it wakes the sleep below.
                subscription.reset();
                if (node != null && node.participant.heldLocally()) {
                    // The holder is a neighbour: its unlock() hands the lock over or wakes this
                    // head (already in place, and its hold is dropped from the books only before
                    // that), so asking Redis now could only fail. Sleep until then, bounded as
                    // every sleep is.
                    long remaining = timeoutNanos == FOREVER ? FOREVER : timeoutNanos - (System.nanoTime() - start);
                    if (remaining <= 0) {
                        if (LocalLine.mayGiveUp(node)) {
                            return new Attempt(false, -1, -1, start);
                        }
                        continue;
                    }
                    subscription.await(Math.min(remaining, recheckNanos));
                    continue;
                }
                if (node != null && !node.busy()) {
                    // Reserved while idle: the hand-over's outcome first. If none came and the
                    // time ran out meanwhile, stop now rather than try past the deadline.
                    node.awaitSettled();
                    if (node.grant == null && timeoutNanos != FOREVER
                            && timeoutNanos - (System.nanoTime() - start) <= 0 && LocalLine.mayGiveUp(node)) {
                        return new Attempt(false, -1, -1, start);
                    }
                    continue;
                }
                try {
                    attempt = step.attempt(true);
                } finally {
                    if (node != null) {
                        node.idle();
                    }
                }
                if (attempt.acquired()) {
                    return attempt;
                }
            }
        } finally {
            if (node != null) {
                node.subscription = null;
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Books what the waiter was handed ({@link Step#granted}) and counts the hand-over if it
     * acquired.
     *
     * @param local whether a neighbour in this client handed it over, rather than Redis
     */
    private Attempt claim(Step step, String grant, boolean local) {
        Attempt claimed = step.granted(grant);
        if (claimed.acquired()) {
            meters.handedOver(local);
        }
        return claimed;
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
    public void wakeHead() {
        if (line != null) {
            line.wakeHead();
        }
    }

    /** The local line, for a hand-over ({@link LocalLine#reserveHead()}); null without one. */
    public LocalLine line() {
        return line;
    }

    /** Tells whether local threads wait in the local queue, for {@code toString()}. */
    public boolean hasWaiters() {
        return line != null && line.size() > 0;
    }

    /** How many threads of this client wait in the local queue; 0 without one. */
    public int localWaiters() {
        return line == null ? 0 : line.size();
    }
}
