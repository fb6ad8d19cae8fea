package dev.synchronizers.redis.watchdog;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.RenewReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.support.EventThread;
import dev.synchronizers.redis.support.Replies;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongPredicate;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of a client's holds alive and finds the holds that are gone.
 *
 * <p>One daemon thread per client ticks every third of the default lease. A tick renews every
 * registered renewable lease: all leases that share a renew script and a batch group (one group
 * on a standalone server, one per hash slot on a cluster, since a script's keys must share a
 * slot) go to Redis as one batched script call (in chunks of {@value #BATCH} holds), and every
 * call of the tick is sent before any reply is awaited, so a tick costs about one round trip per
 * node whatever the number of holds. A call of several holds that a slot migration refuses with
 * {@code TRYAGAIN} (some of its names moved, some not) is sent again one hold per call at once,
 * since each alone is served. A lease ends as lost, and its owner's callback is told on the
 * watchdog thread, when Redis reports it gone ({@link LostHold.Cause#GONE}), when Redis could not
 * be reached and the lease may run out before the next tick could renew it
 * ({@link LostHold.Cause#UNRENEWABLE}), when its owning thread ended without releasing it
 * ({@link LostHold.Cause#ABANDONED}: it is no longer renewed and expires), or when a fixed lease ran
 * out ({@link LostHold.Cause#LEASE_EXPIRED}, noticed when it runs out rather than at the next tick,
 * so that whoever waits for the hold to end hears of it then).
 *
 * <p>Each tick first sends again the {@linkplain #followUps() follow-ups} still waiting for an
 * answer, then renews, then runs the housekeeping added with {@link #everyTick} (the wake-up sweep,
 * the Pub/Sub health check, connecting a Redlock node that was down).
 *
 * <p>Each lease ends exactly once: {@link #unregister} (its owner released it) and the watchdog's
 * verdict race on one atomic state, so a lease that is being released is never reported lost and a
 * lost one is never released as if held.
 */
public final class Watchdog implements AutoCloseable {

    /** Holds per script call: large enough for one round trip, small enough not to stall Redis. */
    static final int BATCH = 500;

    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    private final ScriptRegistry scripts;
    private final long leaseMillis;
    private final long tickMillis;
    /**
     * How much earlier than strictly needed a lease that cannot be renewed is reported lost, for
     * the scheduling jitter of ticks (a twentieth of the lease, at most 50 ms) and for the drift of
     * the servers' clocks where it is given.
     */
    private final long safetyNanos;
    /** The command timeout: how long close() waits for the reports queued. */
    private final Duration timeout;
    /**
     * How long a tick waits for its renewals' replies: the command timeout, or half a tick if that
     * is shorter (see {@link #replyDeadline}).
     */
    private final Duration replyTimeout;
    private final Recorder recorder;
    private final ToIntFunction<String> batchGroup;
    /** With replica acknowledgement, the check of each tick's renewals; null without. */
    private volatile RenewalAcks renewalAcks;
    private final Set<Lease> leases = ConcurrentHashMap.newKeySet();
    private final List<Runnable> chores = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final EventThread events;
    private final ScheduledExecutorService scheduler;
    private final FollowUps followUps;
    /**
     * Ticks in a row in which some renewal got no answer: only the first of a run is logged as a
     * warning, and the first tick that renews again says how long the run was, so that a server
     * that stays down (a Redlock node, a cluster master) does not log a warning every tick.
     */
    private final AtomicInteger failingTicks = new AtomicInteger();

    /**
     * The watchdog's timing and its thread's name.
     *
     * @param leaseMillis the lease every renewal sets; the tick is a third of it
     * @param timeout the command timeout; a tick waits for its replies this long, or half a tick
     *     if that is shorter
     * @param drift how much earlier than the local clock says a lease may run out in Redis: a lease
     *     that cannot be renewed is decided lost that much earlier. For leases whose end is judged
     *     against several servers' clocks (a Redlock's nodes), which may run faster than this one;
     *     {@link Duration#ZERO} for one server
     * @param threadName the watchdog thread's name
     */
    public record Options(long leaseMillis, Duration timeout, Duration drift, String threadName) {
    }

    /**
     * Starts the watchdog thread.
     *
     * @param scripts the registry that runs the renew scripts
     * @param recorder where ticks and retries are counted
     * @param batchGroup the group of a key: one renewal call takes items of one group only (one
     *     slot on a cluster)
     * @param options the lease, the command timeout, the drift and the thread's name
     */
    public Watchdog(ScriptRegistry scripts, Recorder recorder, ToIntFunction<String> batchGroup, Options options) {
        this.scripts = scripts;
        this.recorder = recorder;
        this.batchGroup = batchGroup;
        this.leaseMillis = options.leaseMillis();
        this.tickMillis = Math.max(1, leaseMillis / 3);
        this.safetyNanos = Math.min(TimeUnit.MILLISECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 20)
                + options.drift().toNanos();
        this.timeout = options.timeout();
        this.replyTimeout = replyDeadline(leaseMillis, timeout);
        this.events = new EventThread(options.threadName());
        this.scheduler = events.scheduler();
        this.followUps = new FollowUps(recorder, scheduler, System::nanoTime);
        scheduler.scheduleWithFixedDelay(this::tick, tickMillis, tickMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * How long a tick waits for its renewals' replies: the command timeout, but at most half a tick
     * (a sixth of the lease). A lease whose renewal gets no answer is then known lost at least half
     * a tick before it could run out (the tick that finds it unanswered, or the one after it,
     * decides; see {@link #unanswered}): before Redis can let it go, whatever the command timeout.
     * Waiting a whole command timeout instead would decide it only after the lease could have run
     * out when the timeout is longer than about a third of the lease.
     *
     * @param leaseMillis the lease every renewal sets
     * @param timeout the command timeout
     * @return the reply deadline of a tick's renewals, at least 1 ms
     */
    static Duration replyDeadline(long leaseMillis, Duration timeout) {
        Duration halfTick = Duration.ofMillis(Math.max(1, leaseMillis / 6));
        return timeout.compareTo(halfTick) < 0 ? timeout : halfTick;
    }

    /**
     * Starts keeping a hold's lease: a renewable one is renewed every tick, a fixed one only
     * tracked, so that its end and its owning thread's end are noticed. The lease ends once: by
     * {@link #unregister}, or as lost, when {@code renewal.onLost()} is told.
     *
     * @param renewal the hold's lease and how to renew it
     * @return the registered lease
     */
    public Lease register(Renewal renewal) {
        Lease lease = new Lease(renewal);
        leases.add(lease);
        if (lease.fixed()) {
            long left = TimeUnit.MILLISECONDS.toNanos(renewal.fixedLeaseMillis()) - (System.nanoTime() - renewal.startNanos());
            try {
                lease.expiry = scheduler.schedule(() -> {
                    if (lease.endedBecause() == LostHold.Cause.LEASE_EXPIRED) {
                        lose(lease, LostHold.Cause.LEASE_EXPIRED);
                    }
                }, Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // Closed: nothing is tracked any more, and the lease simply runs out in Redis.
                log.debug("watchdog closed; not tracking the end of a fixed lease");
            }
        }
        return lease;
    }

    /**
     * Ends a lease because its owner released it; the watchdog stops tracking it.
     *
     * @param lease the lease
     * @return true if the lease was still active; false if it had already ended as lost
     */
    public boolean unregister(Lease lease) {
        boolean active = lease.state.compareAndSet(null, Lease.RELEASED);
        leases.remove(lease);
        lease.cancelExpiry();
        return active;
    }

    /**
     * Declares a lease lost now, for example after a local {@code forceUnlock()}: as if a tick had
     * found it gone. Does nothing if it has ended already.
     *
     * @param lease the lease
     * @param cause why it is lost
     */
    public void declareLost(Lease lease, LostHold.Cause cause) {
        lose(lease, cause);
    }

    /**
     * Checks after every tick that renewed something how many replicas have its renewals, and
     * reports a tick whose answer does not meet {@code met}: the renewals stand, but a failover now
     * could forget them. The check goes over a connection other than the renewals' own, so that its
     * {@code WAIT}, which blocks the connection it is sent on, holds up no renewal and no release:
     * it writes one lease the tick renewed once more there ({@code sideScripts}, token-checked like
     * every renewal), then sends {@code wait} there, which counts that write and so, the
     * replication stream being ordered, every renewal of the tick before it. It runs in the
     * background; the tick does not wait for it, and while one check is under way no other starts.
     *
     * @param sideScripts runs the renew script on the other connection
     * @param wait sends the WAIT on that connection
     * @param met whether its answer is enough
     */
    public void acknowledgeRenewals(ScriptRegistry sideScripts, Supplier<CompletionStage<Long>> wait,
            LongPredicate met) {
        this.renewalAcks = new RenewalAcks(sideScripts, wait, met, recorder);
    }

    /**
     * Returns the watchdog thread as an executor: the default home of lost-hold listeners and of
     * the reports that replies settle. It never drops a task: one given to it after {@link #close()}
     * runs at once on the caller's thread, so that a report learned while or after the client
     * closes is still delivered.
     *
     * @return an executor that runs tasks on the watchdog thread, after the current tick, or on
     *     the caller's thread once the watchdog is closed
     */
    public Executor executor() {
        return events.reports();
    }

    /**
     * Returns the number of tracked leases, for leak checks.
     *
     * @return how many holds the watchdog tracks
     */
    public int registered() {
        return leases.size();
    }

    /**
     * Returns the follow-ups that this watchdog's ticks send again until Redis answers.
     *
     * @return the follow-ups, sent from this watchdog's thread
     */
    public FollowUps followUps() {
        return followUps;
    }

    /**
     * Runs a tick now, on the watchdog thread, instead of waiting for the next one: called when
     * the client has moved to a new master (a Sentinel switch), so that every hold is renewed there
     * at once and a hold the new master does not have is reported lost ({@link LostHold.Cause#GONE})
     * right then, and so that pending retries go to the new master. The regular ticks go on as
     * scheduled.
     */
    public void renewNow() {
        try {
            scheduler.execute(this::tick);
        } catch (RejectedExecutionException e) {
            // Closed meanwhile: nothing is renewed any more.
        }
    }

    /**
     * Adds housekeeping to run at every tick, after the renewals (e.g. unsubscribing idle
     * channels). It must be quick and must not block.
     *
     * @param chore the task
     */
    public void everyTick(Runnable chore) {
        chores.add(chore);
    }

    /** Runs one renewal tick now, on the caller's thread. For tests and for the scheduler. */
    public void tick() {
        long start = System.nanoTime();
        try {
            followUps.retryPending();
            int[] renewedAndFailed = renewAll();
            chores.forEach(Runnable::run);
            recorder.tick(System.nanoTime() - start, renewedAndFailed[0], renewedAndFailed[1]);
        } catch (RuntimeException | Error e) {
            log.error("watchdog tick failed; it runs again in {} ms", tickMillis, e);
        }
    }

    /** Renews every renewable lease; returns how many were renewed and how many Redis did not answer for. */
    private int[] renewAll() {
        long now = System.nanoTime();
        Map<BatchKey, List<Lease>> due = new LinkedHashMap<>();
        for (Lease lease : leases) {
            Thread owner = lease.renewal.owner();
            if (owner != null && !owner.isAlive()) {
                lose(lease, LostHold.Cause.ABANDONED);
            } else if (lease.fixed()) {
                if (lease.endedBecause() == LostHold.Cause.LEASE_EXPIRED) {
                    lose(lease, LostHold.Cause.LEASE_EXPIRED);
                }
            } else {
                due.computeIfAbsent(new BatchKey(lease.renewal.script(), batchGroup.applyAsInt(lease.renewal.keys()[0])),
                        key -> new ArrayList<>()).add(lease);
            }
        }
        List<RenewalBatch> batches = new ArrayList<>();
        // Every call of the tick is sent before any reply is awaited: the calls to one node share
        // its connection's round trip, so a tick costs about one round trip per node.
        due.forEach((key, list) -> {
            for (int from = 0; from < list.size(); from += BATCH) {
                List<Lease> chunk = list.subList(from, Math.min(list.size(), from + BATCH));
                batches.add(RenewalBatch.send(scripts, key.script(), chunk, leaseMillis));
            }
        });
        // One deadline for every reply of the tick, all sent by now: a tick in which Redis does not
        // answer lasts one reply deadline, not one per call, so the next tick comes in time.
        long deadline = System.nanoTime() + replyTimeout.toNanos();
        int[] renewedAndFailed = new int[2];
        String failure = null;
        Lease lastRenewed = null;
        for (RenewalBatch batch : batches) {
            String why = settle(batch, now, renewedAndFailed, deadline);
            failure = failure == null ? why : failure;
            for (Lease lease : batch.leases()) {
                if (lease.renewedNanos == now) {
                    lastRenewed = lease;
                }
            }
        }
        logOutcome(renewedAndFailed, failure);
        RenewalAcks acks = renewalAcks;
        if (acks != null && lastRenewed != null) {
            Script script = lastRenewed.renewal.script();
            acks.check(script, RenewalBatch.Call.of(script, List.of(lastRenewed), leaseMillis), renewedAndFailed[0]);
        }
        return renewedAndFailed;
    }

    /** Warns at the first tick of a run in which renewals get no answer; says when they get one again. */
    private void logOutcome(int[] renewedAndFailed, String failure) {
        if (renewedAndFailed[1] > 0) {
            int before = failingTicks.getAndIncrement();
            if (before == 0) {
                log.warn("watchdog could not renew {} leases; each counts as lost once its lease may run out (further"
                        + " ticks that fail are logged at DEBUG until one renews again): {}", renewedAndFailed[1], failure);
            } else {
                log.debug("watchdog could not renew {} leases, {} ticks in a row: {}", renewedAndFailed[1], before + 1,
                        failure);
            }
        } else {
            int run = failingTicks.getAndSet(0);
            if (run > 0 && renewedAndFailed[0] > 0) {
                log.info("watchdog renews again, after {} ticks in which some renewals got no answer", run);
            }
        }
    }

    private static Duration untilDeadline(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    /** Settles one batch's renewals; returns why Redis did not answer for some, or null if it did for all. */
    private String settle(RenewalBatch batch, long tickStart, int[] renewedAndFailed, long deadline) {
        List<Lease> leases = batch.leases();
        List<Object> renewed;
        try {
            renewed = Replies.await(batch.answer(), untilDeadline(deadline), "renew " + leases.size() + " leases");
        } catch (RuntimeException e) {
            for (Lease lease : leases) {
                unanswered(lease);
            }
            renewedAndFailed[1] += leases.size();
            return e.getMessage();
        }
        String failure = null;
        for (int i = 0; i < leases.size(); i++) {
            Lease lease = leases.get(i);
            if (renewed.get(i) instanceof RenewalBatch.ItemFailure itemFailure) {
                // Sent one by one after a slot migration refused the batch, and this one failed.
                unanswered(lease);
                renewedAndFailed[1]++;
                failure = failure == null ? String.valueOf(itemFailure.failure().getMessage()) : failure;
                continue;
            }
            // Taken back where it was gone (redlock-renew.lua) counts only if the owner agrees that
            // its hold lasted meanwhile.
            Object outcome = renewed.get(i);
            if (outcome == RenewReply.Outcome.RENEWED || outcome == RenewReply.Outcome.TAKEN_BACK
                    && (lease.renewal.takeBack() == null || lease.renewal.takeBack().getAsBoolean())) {
                lease.renewedNanos = tickStart;
                renewedAndFailed[0]++;
            } else if (outcome == RenewReply.Outcome.ASKED_BACK || outcome == RenewReply.Outcome.SIGNALLED) {
                // A lock cache that another client waits for (lock-cache-renew.lua), a condition
                // waiter signalled (cond-renew-place.lua): renewed, and its owner is told, the
                // backstop of an ask-back or wake-up message that was lost.
                lease.renewedNanos = tickStart;
                renewedAndFailed[0]++;
                notice(lease);
            } else {
                lose(lease, LostHold.Cause.GONE);
            }
        }
        return failure;
    }

    /**
     * A lease whose renewal got no answer this tick: lost as soon as it could run out before the
     * next tick had a chance to renew it. Never report a hold as held past the moment Redis may
     * have let it go. The next tick starts a tick period after this one ends, which is no earlier
     * than now, and its renewal's reply may take a reply deadline more; one reply deadline more
     * again is the owner's margin, so that a hold acquired just before a tick whose renewals fail is
     * not decided lost only an instant before the lease can run out, but at least that long before
     * (time for {@code callLocked} to stop its work).
     */
    private void unanswered(Lease lease) {
        long nextChance = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(tickMillis) + 2 * replyTimeout.toNanos()
                + safetyNanos;
        if (nextChance - lease.renewedNanos >= TimeUnit.MILLISECONDS.toNanos(leaseMillis)) {
            lose(lease, LostHold.Cause.UNRENEWABLE);
        }
    }

    private static void notice(Lease lease) {
        Runnable notice = lease.renewal.notice();
        if (notice == null) {
            return;
        }
        try {
            notice.run();
        } catch (RuntimeException e) {
            log.warn("watchdog: telling {} what its renewal found failed", lease.renewal.script().file, e);
        }
    }

    private void lose(Lease lease, LostHold.Cause cause) {
        if (lease.state.compareAndSet(null, cause)) {
            leases.remove(lease);
            lease.cancelExpiry();
            lease.renewal.onLost().accept(cause);
        }
    }

    /**
     * Stops the watchdog thread. Tracked leases are no longer renewed and expire in Redis with
     * their lease. Tasks already queued to run now (lost-hold reports and listeners) still run,
     * and this waits for them and for a tick in progress, at most the command timeout: a listener
     * on the watchdog thread slower than that delays nothing further, and the tasks behind it run
     * after this returns. Pending follow-ups are dropped, and those whose answer a caller awaits
     * ({@link FollowUps#sendUntilAnswered}) are told on this thread that none will come. Does not
     * wait when called from the watchdog thread itself (for example by a listener).
     */
    @Override
    public void close() {
        events.close(timeout);
        leases.clear();
        followUps.clear();
    }

    /** One registered hold's lease. Identity is object identity. */
    public static final class Lease implements HoldLease {
        private static final Object RELEASED = new Object();

        final Renewal renewal;
        /** null while active; then RELEASED, or the cause it was lost for. */
        final AtomicReference<Object> state = new AtomicReference<>();
        volatile long renewedNanos;
        /** For a fixed lease, the task that reports its end when it runs out; null until scheduled. */
        volatile ScheduledFuture<?> expiry;

        Lease(Renewal renewal) {
            this.renewal = renewal;
            this.renewedNanos = renewal.startNanos();
        }

        /** Cancels the task waiting for a fixed lease to run out: the lease ended otherwise. */
        void cancelExpiry() {
            ScheduledFuture<?> task = expiry;
            if (task != null) {
                task.cancel(false);
            }
        }

        @Override
        public long renewedNanos() {
            return renewedNanos;
        }

        @Override
        public long fixedMillis() {
            return renewal.fixedLeaseMillis();
        }

        @Override
        public boolean fixed() {
            return renewal.fixed();
        }

        @Override
        public LostHold.Cause endedBecause() {
            if (state.get() instanceof LostHold.Cause cause) {
                return cause;
            }
            if (fixed() && System.nanoTime() - renewal.startNanos() >= TimeUnit.MILLISECONDS.toNanos(fixedMillis())) {
                return LostHold.Cause.LEASE_EXPIRED;
            }
            return null;
        }
    }

    /** The leases one renewal call may take: those of one renew script and one batch group. */
    private record BatchKey(Script script, int group) {
    }
}
