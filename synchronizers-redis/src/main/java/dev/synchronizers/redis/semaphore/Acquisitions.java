package dev.synchronizers.redis.semaphore;

import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.Attempt;
import dev.synchronizers.redis.client.LossSignal;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.client.QueuePlace;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.SemaphoreReply.Outcome;
import dev.synchronizers.redis.script.SemaphoreReply;
import dev.synchronizers.redis.semaphore.Grants.Grant;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.watchdog.Renewal;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one semaphore's permits are acquired: the barging try ({@link #take}), and the wait in the
 * semaphore's line in Redis ({@link #waitForPermits}), one acquisition at a time, each named
 * {@code <client-id>:<thread-id>:<sequence>} and booked as one grant whose lease the watchdog
 * renews. With replica acknowledgement, an acquisition fewer replicas acknowledged than asked is
 * given back at once ({@link #returnUnreplicated}); one whose outcome is unknown is given up
 * ({@link GrantEnds#giveUp}).
 */
final class Acquisitions {

    /** The semaphore's logger, so that its lines read as they did before the split. */
    private static final Logger log = LoggerFactory.getLogger(RedisSemaphore.class);

    private final SemaphoreParts parts;
    private final SemaphoreKeys keys;
    private final Machinery machinery;
    private final GrantEnds ends;
    private final Acquirer acquirer;

    Acquisitions(SemaphoreParts parts, GrantEnds ends) {
        this.parts = parts;
        this.keys = parts.keys();
        this.machinery = parts.machinery();
        this.ends = ends;
        // Waiters hear their grants on their client's own channel: a grant wakes one client, not all.
        this.acquirer = new Acquirer(machinery, keys.clientWakeups(machinery.clientId), false, parts.meters());
    }

    /**
     * Waits for the permits as one acquisition, and, with replica acknowledgement, once more as a
     * new acquisition for each one fewer replicas acknowledged than asked (given back at once),
     * while the wait lasts.
     *
     * @param ofHandle whether the grant is booked as a handle's (see {@link Grant#ofHandle})
     * @return the grant booked for the acquisition that counts, or null if the wait ended without one
     */
    Grant waitForPermits(int permits, long timeoutNanos, boolean ofHandle) throws InterruptedException {
        Grant[] booked = new Grant[1];
        Attempt counted = machinery.acquireCounted(timeoutNanos, true, new Machinery.Countable() {
            private String waiter;

            @Override
            public Attempt acquire(long remainingNanos) throws InterruptedException {
                waiter = machinery.newAttempt();
                return acquireOnce(waiter, permits, remainingNanos, ofHandle, grant -> booked[0] = grant);
            }

            @Override
            public boolean counts(Attempt acquired) {
                // Not replicated(...): acquireCounted gives back a grant whose check fails.
                return machinery.replicated(acquired.sentNanos(), Script.SEMAPHORE_RENEW, keys.forRenew(),
                        Long.toString(machinery.leaseMillis), waiter);
            }

            @Override
            public void giveBack(Attempt acquired) {
                returnUnreplicated(waiter);
            }
        });
        return counted.acquired() ? booked[0] : null;
    }

    /**
     * One acquisition, named {@code waiter}: its tries, its place in the line and its wait.
     *
     * @param booked told of the grant once it is booked
     */
    private Attempt acquireOnce(String waiter, int permits, long timeoutNanos, boolean ofHandle,
            Consumer<Grant> booked) throws InterruptedException {
        String leaseMillis = Long.toString(machinery.leaseMillis);
        QueuePlace place = new QueuePlace(machinery, waiter, Script.SEMAPHORE_RENEW_PLACE, keys.forPlace(),
                Script.SEMAPHORE_LEAVE, keys.forQueue(), parts.what(""), leaseMillis);
        // Above the total, every acquisition waits, a handle's too, as Semaphore.acquire(n) waits.
        String[] args = {waiter, Integer.toString(permits), leaseMillis, leaseMillis, "wait"};
        return acquirer.acquire(new Acquirer.Step() {
            @Override
            public Attempt attempt(boolean subscribed) {
                machinery.checkOpen();
                long sent = System.nanoTime();
                List<Object> reply;
                try {
                    reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_ACQUIRE, keys.forQueue(), args),
                            parts.what("acquire " + permits + " permits of"));
                } catch (SynchronizerUnavailableException e) {
                    // It may have run, or run later: queued this waiter, or given it permits.
                    ends.giveUp(waiter);
                    throw e;
                }
                SemaphoreReply decoded = SemaphoreReply.of(Script.SEMAPHORE_ACQUIRE, reply);
                if (decoded.outcome() == Outcome.EXCEEDS_TOTAL) {
                    // More than the total: wait out of line, as Semaphore waits, until addPermits
                    // raises it (its script wakes such waiters), or a lease at most.
                    return new Attempt(false, -1, machinery.leaseMillis, sent);
                }
                if (decoded.outcome() == Outcome.ACQUIRED) {
                    booked.accept(record(waiter, permits, sent, ofHandle));
                    return new Attempt(true, -1, 0, sent);
                }
                if (decoded.outcome() == Outcome.GIVEN_UP) {
                    throw new IllegalStateException(parts.what("") + ": acquisition " + waiter
                            + " was already given up");
                }
                place.queued(sent);
                return new Attempt(false, -1, decoded.value(), sent);
            }

            @Override
            public Attempt granted(String detail) {
                // Served from the line after the waiter was last known queued: the lease runs from then at least.
                long since = place.queuedSinceAtLeast();
                booked.accept(record(waiter, permits, since, ofHandle));
                return new Attempt(true, -1, 0, since);
            }

            @Override
            public boolean firstTryRegisters() {
                return true;
            }

            @Override
            public void waiting(WakeupDispatcher.Subscription subscription) {
                place.waiting(subscription);
            }

            @Override
            public void done(boolean acquired) {
                place.done(acquired);
            }
        }, null, waiter, timeoutNanos, true);
    }

    /** One barging try; {@code permits == 0} drains. Returns the permits taken. */
    int take(int permits) {
        String grant = machinery.newAttempt();
        long sent = System.nanoTime();
        List<Object> reply;
        try {
            reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_TRY, keys.forTry(),
                    grant, Integer.toString(permits), Long.toString(machinery.leaseMillis)),
                    parts.what(permits == 0 ? "drain" : "try to acquire " + permits + " permits of"));
        } catch (SynchronizerUnavailableException e) {
            ends.giveUp(grant);
            throw e;
        }
        SemaphoreReply decoded = SemaphoreReply.of(Script.SEMAPHORE_TRY, reply);
        if (decoded.outcome() == Outcome.EXCEEDS_TOTAL) {
            // As Semaphore.tryAcquire(n) with n above what it can ever have: false, not an exception.
            return 0;
        }
        if (decoded.outcome() == Outcome.GIVEN_UP) {
            throw new IllegalStateException(parts.what("") + ": acquisition " + grant + " was already given up");
        }
        int taken = decoded.outcome() == Outcome.ACQUIRED ? (int) decoded.value() : 0;
        if (taken > 0) {
            record(grant, taken, sent, false);
            if (!replicated(sent, grant)) {
                returnUnreplicated(grant);
                return 0;
            }
        }
        return taken;
    }

    /**
     * Tells whether a grant just recorded is on enough replicas ({@link Machinery#replicated});
     * gives it back if the answer does not come, since it is then not known to be.
     */
    private boolean replicated(long sentNanos, String grantId) {
        try {
            return machinery.replicated(sentNanos, Script.SEMAPHORE_RENEW, keys.forRenew(),
                    Long.toString(machinery.leaseMillis), grantId);
        } catch (RuntimeException e) {
            returnUnreplicated(grantId);
            throw e;
        }
    }

    /**
     * Gives back, at once, a grant that fewer replicas acknowledged than the client asks: it was
     * never the caller's. Its permits return to the pool and serve the line.
     */
    private void returnUnreplicated(String grantId) {
        parts.grants().removeUnreplicated(grantId);
        log.debug("{}: acquisition {} came from a master that was switched away from, or has fewer replicas than"
                + " asked; giving it back", parts.what(""), grantId);
        try {
            machinery.<Long>await(machinery.scripts.run(Script.SEMAPHORE_LEAVE, keys.forQueue(), grantId,
                    Long.toString(machinery.leaseMillis)), parts.what("give back permits of"));
            machinery.metrics.followUp(Recorder.FollowUp.GIVE_UP);
        } catch (SynchronizerUnavailableException e) {
            ends.giveUp(grantId);
        }
    }

    /**
     * Books a grant this client now holds, and keeps its lease renewed until released or lost.
     *
     * @param ofHandle whether a new handle will own it: then only the handle releases it
     */
    private Grant record(String id, int permits, long sentNanos, boolean ofHandle) {
        Grant grant = new Grant(id, ofHandle ? -1 : Machinery.currentThreadId(), permits, ofHandle,
                parts.meters().holdStarted(), ofHandle ? new LossSignal(machinery.async, machinery.lossSignals,
                        () -> new LostHold(parts.name(), SemaphoreParts.KIND, -1, -1, LostHold.Cause.ABANDONED)) : null);
        return parts.grants().add(grant, booked -> machinery.watchdog.register(Renewal.ofClient(Script.SEMAPHORE_RENEW,
                keys.forRenew(), new String[] {id}, sentNanos, cause -> ends.lost(booked, cause))));
    }
}
