package dev.synchronizers.redis;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.SemaphoreSnapshot;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.SemaphoreAddReply;
import dev.synchronizers.redis.script.SemaphorePicture;
import dev.synchronizers.redis.script.SemaphoreReleaseReply;
import dev.synchronizers.redis.script.SemaphoreReply;
import dev.synchronizers.redis.script.SemaphoreReply.Outcome;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.Grants.Grant;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The counting semaphore behind {@link dev.synchronizers.Synchronizers#semaphore(String)}.
 *
 * <p>Permits are owned by the client (this {@code RedisSynchronizers}), not by a thread: any thread
 * of the client may release what any other acquired, and the client cannot release more than it
 * holds. Redis counts permits per <em>grant</em>, one per acquisition (named after the acquiring
 * attempt, {@code <client-id>:<thread-id>:<sequence>}), never pooled per client: each grant is
 * leased and renewed by the watchdog under its own name, and a release names the grants it ends.
 * So nothing done for one acquisition can renew, re-lease or release another's permits. A client
 * that dies returns its permits when their leases run out: every acquire, try and count purges
 * expired grants first.
 *
 * <p>A release takes permits from the calling thread's own grants first, then from the other
 * threads' grants of this client. A grant the watchdog reports lost (its lease ran out, or it
 * could not be renewed in time) is given up in Redis for good and stays in this client's books as
 * lost: the release that reaches it throws {@link LostHoldException} instead of consuming a live
 * grant, so a thread whose permit was lost cannot release another thread's permit. Lost grants are
 * reached before live ones of the same thread, and before other threads' live ones.
 *
 * <p>A {@link PermitHandle} owns one grant of its own, marked as the handle's in this client's
 * books: a release by the semaphore never takes from it nor counts it, and the handle's release
 * names only it (the grant, kept to 0). Its lease is the client's, like every grant's, so it
 * outlives the thread that acquired it. A handle's grant reported lost leaves the books at once:
 * the handle remembers it, and its release throws {@link LostHoldException}.
 *
 * <p>Waiters queue in Redis in arrival order, each with a leased place (see {@link QueuePlace}),
 * and are served first come, first served: a waiter asking for more permits than are free blocks
 * the waiters behind it, so {@code acquire(5)} is not starved by a stream of {@code acquire(1)}.
 * The line is served in Redis: every script that frees permits or changes the line (release,
 * growth, a waiter leaving, an acquire that purges a dead client) gives the free permits to the
 * waiters at its front as their grants and names each in a {@code granted:} message, on the waiter's
 * client's own channel ({@link SemaphoreKeys#clientWakeups}), so one grant wakes one client. A waiter that
 * reads its name has its permits without another round trip. A waiter that gives up races
 * nothing: leaving gives back a grant it has not claimed, atomically. A lost message costs time,
 * not permits: the waiter's next try claims the grant. {@code tryAcquire()} without a timeout
 * barges, as {@link java.util.concurrent.Semaphore#tryAcquire()} does even on a fair semaphore.
 * A waiter asking for more than the total waits out of line (it blocks nobody), woken by a growth
 * of the total ({@code released} from semaphore-add.lua, or semaphore-set.lua setting it above 0, on
 * the channel of each client the mark in Redis lists)
 * or after a lease at most, as {@code Semaphore} waits for permits it may never get; a handle's
 * acquisition waits the same way. A queued waiter that a shrink of the total left asking for more
 * than it leaves the line when it is first, so that it holds up nobody behind it, even dead.
 *
 * <p>Redis work: in the steady state a queued acquire is 7 commands and a release that serves the
 * next waiter 13, scripts included, and an acquire + release with nobody in line about 11; the
 * scripts keep in the holdings the counters and time bounds they would otherwise recompute (see
 * semaphore-acquire.lua and docs/benchmarks.md). A grant, and any wake-up for one waiter, goes to
 * the channel of that waiter's client alone ({@code <wakeups>:<client-id>}), so a release costs
 * one delivery however many clients wait.
 *
 * <p>Unknown outcomes: an acquiring call whose reply does not come in time may have run, or may
 * still run. Its caller gets {@link SynchronizerUnavailableException}, and the acquisition is given
 * up in Redis (semaphore-leave.lua: out of the line, its grant given back, and a mark that makes a
 * late run of the call change nothing), retried until Redis answers or a lease has passed. A
 * release whose reply does not come is booked here at once and retried; it sets what each grant
 * keeps rather than subtracting, so running twice releases once.
 */
final class RedisSemaphore implements DistributedSemaphore {

    private static final Logger log = LoggerFactory.getLogger(RedisSemaphore.class);
    private static final String KIND = "semaphore";
    private final String name;
    private final SemaphoreKeys keys;
    private final Machinery machinery;
    private final Acquirer acquirer;
    /** This client's pending async acquisitions of this semaphore, waited for one at a time. */
    private final AsyncLine asyncLine;
    private final SynchronizerMeters meters;
    /** This client's grants of this semaphore, live or lost, and the order a release takes them in. */
    private final Grants grants;

    RedisSemaphore(String name, Machinery machinery) {
        this.name = name;
        this.keys = SemaphoreKeys.of(machinery.keyPrefix, name);
        this.machinery = machinery;
        this.meters = machinery.metrics.synchronizer(KIND, name);
        // Waiters hear their grants on their client's own channel: a grant wakes one client, not all.
        this.acquirer = new Acquirer(machinery, keys.clientWakeups(machinery.clientId), false, meters);
        this.asyncLine = new AsyncLine(machinery, KIND + " '" + name + "'");
        this.grants = new Grants(what(""), new Grants.Keeper() {
            @Override
            public boolean stopRenewing(HoldLease lease) {
                // Every lease in the books is one this semaphore registered with the watchdog.
                return machinery.watchdog.unregister((Watchdog.Lease) lease);
            }

            @Override
            public void holdEnded(Object metric, boolean released) {
                meters.holdEnded(metric, released);
            }
        });
    }

    @Override
    public String name() {
        return name;
    }

    /* --------------- total --------------- */

    @Override
    public boolean trySetPermits(int permits) {
        // Negative is allowed, as Semaphore's constructor allows it: nobody acquires until it is raised.
        machinery.checkOpen();
        return machinery.<Long>await(machinery.scripts.run(Script.SEMAPHORE_SET, keys.forSet(),
                Integer.toString(permits)), what("set the permits of")) == 1L;
    }

    @Override
    public void addPermits(int delta) {
        machinery.checkOpen();
        List<Object> reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_ADD, keys.forQueue(),
                Integer.toString(delta)), what("add permits to"));
        SemaphoreAddReply added = SemaphoreAddReply.of(Script.SEMAPHORE_ADD, reply);
        if (!added.changed()) {
            throw new IllegalArgumentException("delta would make the total negative: " + added.total() + " + " + delta);
        }
    }

    /* --------------- acquire --------------- */

    @Override
    public void acquire() throws InterruptedException {
        acquire(1);
    }

    @Override
    public void acquire(int permits) throws InterruptedException {
        checkNotNegative("permits", permits);
        acquire(permits, Acquirer.FOREVER);
    }

    @Override
    public boolean tryAcquire() {
        return tryAcquire(1);
    }

    @Override
    public boolean tryAcquire(int permits) {
        checkNotNegative("permits", permits);
        machinery.checkOpen();
        if (permits == 0) {
            return true;
        }
        try {
            return meters.timed(() -> take(permits) > 0);
        } catch (InterruptedException e) {
            throw new AssertionError("a single try does not wait", e);
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        }
    }

    @Override
    public boolean tryAcquire(long timeout, TimeUnit unit) throws InterruptedException {
        return tryAcquire(1, timeout, unit);
    }

    @Override
    public boolean tryAcquire(int permits, long timeout, TimeUnit unit) throws InterruptedException {
        checkNotNegative("permits", permits);
        Objects.requireNonNull(unit, "unit");
        return acquire(permits, unit.toNanos(timeout));
    }

    @Override
    public int drainPermits() {
        machinery.checkOpen();
        return take(0);
    }

    private boolean acquire(int permits, long timeoutNanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (permits == 0) {
            return true;
        }
        machinery.checkOpen();
        try {
            return meters.timed(() -> waitForPermits(permits, timeoutNanos, false) != null);
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        }
    }

    /**
     * Waits for the permits as one acquisition, and, with replica acknowledgement, once more as a
     * new acquisition for each one fewer replicas acknowledged than asked (given back at once),
     * while the wait lasts.
     *
     * @param ofHandle whether the grant is booked as a handle's (see {@link Grant#ofHandle})
     * @return the grant booked for the acquisition that counts, or null if the wait ended without one
     */
    private Grant waitForPermits(int permits, long timeoutNanos, boolean ofHandle) throws InterruptedException {
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
                Script.SEMAPHORE_LEAVE, keys.forQueue(), what(""), leaseMillis);
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
                            what("acquire " + permits + " permits of"));
                } catch (SynchronizerUnavailableException e) {
                    // It may have run, or run later: queued this waiter, or given it permits.
                    giveUp(waiter);
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
                    throw new IllegalStateException(what("") + ": acquisition " + waiter + " was already given up");
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
        grants.removeUnreplicated(grantId);
        log.debug("{}: acquisition {} came from a master that was switched away from, or has fewer replicas than"
                + " asked; giving it back", what(""), grantId);
        try {
            machinery.<Long>await(machinery.scripts.run(Script.SEMAPHORE_LEAVE, keys.forQueue(), grantId,
                    Long.toString(machinery.leaseMillis)), what("give back permits of"));
            machinery.metrics.followUp(Recorder.FollowUp.GIVE_UP);
        } catch (SynchronizerUnavailableException e) {
            giveUp(grantId);
        }
    }

    /** One barging try; {@code permits == 0} drains. Returns the permits taken. */
    private int take(int permits) {
        String grant = machinery.newAttempt();
        long sent = System.nanoTime();
        List<Object> reply;
        try {
            reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_TRY, keys.forTry(),
                    grant, Integer.toString(permits), Long.toString(machinery.leaseMillis)),
                    what(permits == 0 ? "drain" : "try to acquire " + permits + " permits of"));
        } catch (SynchronizerUnavailableException e) {
            giveUp(grant);
            throw e;
        }
        SemaphoreReply decoded = SemaphoreReply.of(Script.SEMAPHORE_TRY, reply);
        if (decoded.outcome() == Outcome.EXCEEDS_TOTAL) {
            // As Semaphore.tryAcquire(n) with n above what it can ever have: false, not an exception.
            return 0;
        }
        if (decoded.outcome() == Outcome.GIVEN_UP) {
            throw new IllegalStateException(what("") + ": acquisition " + grant + " was already given up");
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
     * Gives up an acquisition whose outcome is unknown or whose permits are lost: takes it out of
     * the line, gives back its grant if Redis has one, and marks it so that a late run of its call
     * changes nothing. Idempotent; retried by the watchdog until Redis answers or a lease has
     * passed (then the grant and the place have expired anyway).
     */
    private void giveUp(String acquisition) {
        machinery.metrics.followUp(Recorder.FollowUp.GIVE_UP);
        machinery.followUps.send(Script.SEMAPHORE_LEAVE, "give up acquisition " + acquisition + " of " + what(""),
                () -> machinery.scripts.run(Script.SEMAPHORE_LEAVE, keys.forQueue(), acquisition,
                        Long.toString(machinery.leaseMillis)),
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
    }

    /**
     * Books a grant this client now holds, and keeps its lease renewed until released or lost.
     *
     * @param ofHandle whether a new handle will own it: then only the handle releases it
     */
    private Grant record(String id, int permits, long sentNanos, boolean ofHandle) {
        Grant grant = new Grant(id, ofHandle ? -1 : Machinery.currentThreadId(), permits, ofHandle,
                meters.holdStarted(), ofHandle ? new LossSignal(machinery.async, machinery.lossSignals,
                        () -> new LostHold(name, KIND, -1, -1, LostHold.Cause.ABANDONED)) : null);
        return grants.add(grant, booked -> machinery.watchdog.register(Renewal.ofClient(Script.SEMAPHORE_RENEW,
                keys.forRenew(), new String[] {id}, sentNanos, cause -> lost(booked, cause))));
    }

    /**
     * Told by the watchdog that a grant's lease is gone or could not be renewed in time: its
     * permits are back in the pool, or will be when the lease runs out. The grant is given up in
     * Redis for good, so no later call of this client can revive it, and kept here as lost for
     * the release that reaches it to report; a handle's grant leaves the books, since only its
     * handle, which keeps it, can reach it.
     */
    private void lost(Grant grant, LostHold.Cause cause) {
        grants.lost(grant, cause);
        giveUp(grant.id);
        LostHold report = new LostHold(name, KIND, grant.threadId, -1, cause);
        machinery.listeners.report(report);
        if (grant.loss != null) {
            grant.loss.lost(report);
        }
    }

    /* --------------- release --------------- */

    @Override
    public void release() {
        release(1);
    }

    @Override
    public void release(int permits) {
        checkNotNegative("permits", permits);
        if (permits == 0) {
            return;
        }
        machinery.checkOpen();
        Grants.Taken taken = grants.release(Machinery.currentThreadId(), permits);
        if (!taken.keep().isEmpty()) {
            sendRelease(taken.keep(), false);
        }
        if (taken.lostCause() != null) {
            throw new LostHoldException(name, taken.lostCause(), what("") + ": release of " + permits
                    + " permits failed: " + taken.lostPermits() + " of them were lost: "
                    + LostHoldListeners.describe(taken.lostCause()));
        }
    }

    /**
     * Sends a release that sets what each named grant keeps. Booked here already: if its reply does
     * not come it is retried (it is idempotent) until Redis answers or a lease has passed, and the
     * caller is told; a grant Redis no longer had was lost, and is reported so.
     *
     * @param ofHandle whether it releases a handle's grant (reported with thread id -1)
     */
    private void sendRelease(String keep, boolean ofHandle) {
        Supplier<CompletionStage<List<Object>>> release = () -> machinery.scripts.run(Script.SEMAPHORE_RELEASE,
                keys.forQueue(), keep);
        List<Object> reply;
        machinery.releasing(release);
        try {
            reply = machinery.await(release.get(), what("release permits of")
                    + " (dropped locally; the release is retried until Redis answers, and the permits expire with"
                    + " their lease at the latest)");
        } catch (SynchronizerUnavailableException e) {
            machinery.followUps.retryUntil(Script.SEMAPHORE_RELEASE, "release permits of " + what(""), release,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
            throw e;
        }
        List<String> missing = SemaphoreReleaseReply.of(Script.SEMAPHORE_RELEASE, reply).missing();
        if (!missing.isEmpty()) {
            for (String grant : missing) {
                machinery.listeners.report(new LostHold(name, KIND, ofHandle ? -1 : threadOf(grant), -1,
                        LostHold.Cause.GONE));
            }
            throw new LostHoldException(name, LostHold.Cause.GONE, what("") + ": release failed: Redis no longer"
                    + " had the permits of " + String.join(" ", missing) + ": "
                    + LostHoldListeners.describe(LostHold.Cause.GONE));
        }
    }

    /** The thread id inside a grant's name, {@code <client-id>:<thread-id>:<sequence>}. */
    private static long threadOf(String grant) {
        return Owner.parse(grant).threadId();
    }

    /* --------------- handles --------------- */

    @Override
    public PermitHandle acquirePermits(int permits) throws InterruptedException {
        checkAtLeastOne(permits);
        return acquireHandle(permits, Acquirer.FOREVER).orElseThrow();
    }

    @Override
    public Optional<PermitHandle> tryAcquirePermits(int permits, Duration wait) throws InterruptedException {
        checkAtLeastOne(permits);
        return acquireHandle(permits, Acquirer.timeoutNanos(wait));
    }

    /**
     * {@inheritDoc}
     *
     * <p>This client's async acquisitions of one semaphore object are waited for one at a time, in
     * the order they were made, by one thread of the client's however many are pending; each takes
     * its turn in the semaphore's queue as a blocking {@code acquirePermits} would.
     */
    @Override
    public CompletionStage<PermitHandle> acquirePermitsAsync(int permits) {
        checkAtLeastOne(permits);
        return asyncLine.<PermitHandle>submit(Acquirer.FOREVER, null,
                timeout -> acquireHandle(permits, Acquirer.FOREVER).orElseThrow(), PermitHandle::close);
    }

    /** Waits for the permits as {@code acquire(permits)} does, booked as one grant of a new handle. */
    private Optional<PermitHandle> acquireHandle(int permits, long timeoutNanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        machinery.checkOpen();
        Grant[] granted = new Grant[1];
        try {
            meters.timed(() -> (granted[0] = waitForPermits(permits, timeoutNanos, true)) != null);
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        }
        return Optional.ofNullable(granted[0]).map(Handle::new);
    }

    /**
     * Ends a handle's grant, whose handle has just been marked released: in Redis if it is live,
     * otherwise by throwing what it was lost for.
     */
    private void releaseHandle(Grant grant, String what) {
        LostHold.Cause lostCause = grants.releaseHandle(grant);
        if (lostCause != null) {
            throw new LostHoldException(name, lostCause, what("") + ": " + what + " of a handle's " + grant.permits
                    + " permits failed: they were lost: " + LostHoldListeners.describe(lostCause));
        }
        sendRelease(grant.id + "=0", true);
    }

    /** Permits that belong to this object: see {@link PermitHandle}. */
    private final class Handle implements PermitHandle {
        private final Grant grant;
        private final int permits;
        /** Set once, by release() or close(): from then on the handle holds nothing. */
        private final AtomicBoolean released = new AtomicBoolean();

        Handle(Grant grant) {
            this.grant = grant;
            this.permits = grant.permits;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public int permits() {
            return permits;
        }

        @Override
        public boolean isHeld() {
            // The watchdog ends the lease before it reports a loss.
            return !released.get() && grant.lease.endedBecause() == null && machinery.isOpen();
        }

        @Override
        public void release() {
            if (!tryClaimRelease()) {
                throw new IllegalStateException(describe() + ": release() of a handle already released");
            }
            end("release()");
        }

        @Override
        public CompletionStage<LostHold> lost() {
            return grant.loss.stage();
        }

        /** Releases the grant, once claimed, and settles {@link #lost()}: with the loss it finds, or cancelled. */
        private void end(String what) {
            try {
                releaseHandle(grant, what);
            } catch (LostHoldException e) {
                grant.loss.lost(new LostHold(name, KIND, -1, -1, e.lostCause()));
                throw e;
            } finally {
                grant.loss.released();
            }
        }

        @Override
        public CompletionStage<Void> releaseAsync() {
            return machinery.runAsync(this::release);
        }

        @Override
        public void close() {
            if (!released.get() && tryClaimRelease()) {
                end("close()");
            }
        }

        /**
         * Marks the handle released, once, after checking that the client is open, so that a
         * release refused by a closed client changes nothing.
         *
         * @return false if it was released before
         */
        private boolean tryClaimRelease() {
            if (released.get()) {
                return false;
            }
            machinery.checkOpen();
            return released.compareAndSet(false, true);
        }

        private String describe() {
            return KIND + " '" + name + "' handle of " + permits + " permits";
        }

        @Override
        public String toString() {
            return "PermitHandle[" + KIND + " " + name + ", " + permits + " permits, "
                    + (released.get() ? "released" : isHeld() ? "held" : "lost") + "]";
        }
    }

    /* --------------- queries --------------- */

    @Override
    public int availablePermits() {
        machinery.checkOpen();
        long available = machinery.<Long>await(machinery.scripts.run(Script.SEMAPHORE_AVAILABLE, keys.forTry()),
                what("count the permits of"));
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, available));
    }

    /**
     * One read-only script call; see {@link DistributedSemaphore#snapshot()}. Grants are summed
     * per client: the client id is the client part of the grant's name ({@link Owner#clientOf}).
     */
    @Override
    public SemaphoreSnapshot snapshot() {
        machinery.checkOpen();
        List<Object> reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_SNAPSHOT, keys.forSnapshot()),
                what("snapshot"));
        SemaphorePicture picture = SemaphorePicture.of(Script.SEMAPHORE_SNAPSHOT, reply);
        long total = picture.total();
        Map<String, long[]> perClient = new LinkedHashMap<>();   // client -> {permits, grants, shortest lease}
        long held = 0;
        for (SemaphorePicture.Grant live : picture.grants()) {
            String grant = live.grant();
            long permits = live.permits();
            long remaining = live.remainingMillis();
            String client = Owner.clientOf(grant);
            long[] sum = perClient.computeIfAbsent(client, c -> new long[] {0, 0, Long.MAX_VALUE});
            sum[0] += permits;
            sum[1]++;
            sum[2] = Math.min(sum[2], remaining);
            held += permits;
        }
        List<SemaphoreSnapshot.PermitHolder> holders = new ArrayList<>();
        perClient.forEach((client, sum) -> holders.add(new SemaphoreSnapshot.PermitHolder(client,
                (int) Math.min(Integer.MAX_VALUE, sum[0]), (int) sum[1], sum[2])));
        int totalPermits = (int) Math.min(Integer.MAX_VALUE, total);
        return new SemaphoreSnapshot(name, totalPermits, (int) Math.max(Integer.MIN_VALUE, total - held), holders,
                (int) picture.queued());
    }

    /** Shows the name and what this JVM knows; makes no network call. */
    @Override
    public String toString() {
        return "RedisSemaphore[" + name + ", " + grants.describe() + "]";
    }

    /* --------------- helpers --------------- */

    private String what(String verb) {
        return (verb.isEmpty() ? "" : verb + " ") + KIND + " '" + name + "'";
    }

    private static void checkAtLeastOne(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be >= 1: " + permits);
        }
    }

    private static void checkNotNegative(String argument, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(argument + " must be >= 0: " + value);
        }
    }
}
