package dev.synchronizers.redis.client;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.RenewReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.watchdog.FollowUps;
import dev.synchronizers.redis.watchdog.Watchdog;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongPredicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client context of a client of one server (standalone, Sentinel, Cluster): besides what every
 * client has ({@link ClientContext}), its connection and scripts, the watchdog, the replica
 * acknowledgement and what a master switch needs.
 */
public final class Machinery extends ClientContext {

    private static final Logger log = LoggerFactory.getLogger(Machinery.class);
    public final RedisClusterAsyncCommands<String, String> redis;
    public final ScriptRegistry scripts;
    public final Watchdog watchdog;
    /** The watchdog's follow-ups: releases, leaves and give-backs sent again until Redis answers. */
    public final FollowUps followUps;
    /** The replica acknowledgement every acquisition needs, or null. */
    final ReplicaAcks acks;
    /** With {@link #acks}: the side connection that carries the WAITs, and its script registry; else null. */
    private final RedisClusterAsyncCommands<String, String> acksRedis;
    private final ScriptRegistry acksScripts;
    /**
     * Whether the reply to a command sent at the given {@link System#nanoTime()} came from the
     * current master as far as the client knows (false once a Sentinel announced a switch away from
     * the server it was sent to).
     */
    private final LongPredicate fromCurrentMaster;
    /**
     * Releases sent lately, newest last, kept only on a topology that switches masters (Sentinel):
     * a hold that the old master had replicated before the promotion and that was released on the
     * old master afterwards is still on the new master, where it would keep everyone else out
     * until its lease ran out. After a switch they are sent again to the new master; each is
     * token-checked or idempotent, so one that already took effect there changes nothing.
     */
    private final Deque<RecentRelease> recentReleases;
    /** How many {@link #recentReleases} holds (its size() would count them one by one). */
    private final AtomicInteger recentCount = new AtomicInteger();
    /** At most this many recent releases are kept; past it, the oldest are dropped (their holds then expire with their lease). */
    static final int RECENT_RELEASES = 4096;
    /** How often an acquisition paused by a switch in progress looks whether it is done. */
    private static final long SWITCH_PROBE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /**
     * Whether non-fair locks are cached between uses ({@code RedisSynchronizers.Builder.lockCaching};
     * docs/design/lock-caching.md).
     */
    public final boolean lockCaching;
    /**
     * How many fencing tokens a lock cache reserves at a time: {@link CachedLock#BLOCK}, smaller only
     * in tests ({@code RedisSynchronizers.cacheBlockForTests}), so that a block runs out after a few takes.
     */
    public volatile long cacheBlock = CachedLock.BLOCK;
    /**
     * Test hook ({@code RedisSynchronizers.onReservationAnsweredForTests}): run by a thread whose
     * block reservation Redis answered, before it settles it under the cache's guard; null normally.
     */
    public volatile Runnable reservationAnsweredForTests;
    /** This client's lock caches by lock key, for the asks that other clients send (lock-ask.lua). */
    private final Map<String, CachedLock> caches = new ConcurrentHashMap<>();
    /** Whether this client listens on its ask channel; set once the subscription is confirmed. */
    private final AtomicBoolean listeningForAsks = new AtomicBoolean();
    /** Orders the first subscription to the ask channel. */
    private final ReentrantLock membershipOfAsks = new ReentrantLock();
    /**
     * Lost-hold reports that wait for a reply (a give-back's), each done once its report was handed
     * to the listeners or found not to be owed; {@link #giveBackCaches} waits for them at close.
     */
    private final Set<ReportInFlight> reportsInFlight = ConcurrentHashMap.newKeySet();
    /** Threads in {@link #pauseAfterShortAcks}, woken by {@link #wakePauses}. */
    private final Set<Thread> pausing = ConcurrentHashMap.newKeySet();
    public Machinery(String clientId, String keyPrefix, RedisClusterAsyncCommands<String, String> redis,
            ScriptRegistry scripts, Watchdog watchdog, WakeupDispatcher wakeups,
            LostHoldListeners listeners, Recorder metrics, long leaseMillis, Duration timeout, ReplicaAcks acks,
            RedisClusterAsyncCommands<String, String> acksRedis, ScriptRegistry acksScripts,
            LongPredicate fromCurrentMaster, boolean switchesMasters, AtomicBoolean closed, Executor async,
            boolean lockCaching) {
        super("RedisSynchronizers", clientId, keyPrefix, wakeups, listeners, metrics, leaseMillis, timeout, closed,
                async);
        this.redis = redis;
        this.scripts = scripts;
        this.watchdog = watchdog;
        this.followUps = watchdog.followUps();
        this.acks = acks;
        this.acksRedis = acksRedis;
        this.acksScripts = acksScripts;
        this.fromCurrentMaster = fromCurrentMaster;
        this.recentReleases = switchesMasters ? new ConcurrentLinkedDeque<>() : null;
        this.lockCaching = lockCaching;
    }

    /**
     * Records {@code cache} as this client's cache of the lock {@code lockKey}, so that another
     * client's ask reaches it, and listens on the client's ask channel if it does not yet (one
     * round trip, once per client). If that subscription cannot be made now, asks reach the cache
     * through its renewal's answer, and the next cache tries again.
     */
    public void caching(String lockKey, CachedLock cache) {
        caches.put(lockKey, cache);
        if (listeningForAsks.get()) {
            return;
        }
        membershipOfAsks.lock();
        try {
            if (!listeningForAsks.get()) {
                wakeups.listen(askChannel(keyPrefix, clientId), this::askedBack, watchdog.executor());
                listeningForAsks.set(true);
            }
        } catch (SynchronizerUnavailableException e) {
            // The renewal's answer is the backstop; the next cache tries to listen again.
        } finally {
            membershipOfAsks.unlock();
        }
    }

    /**
     * Tracks a lost-hold report that waits for a reply, so that {@code close()} delivers it before
     * returning ({@link #giveBackCaches}).
     *
     * @param answered the reply the report waits for; {@code close()} completes it exceptionally
     *     (no answer) if it is not complete within the command timeout
     * @param report completes once the report ran or was found not owed
     */
    public void reportInFlight(CompletableFuture<?> answered, CompletionStage<?> report) {
        ReportInFlight tracked = new ReportInFlight(answered, report.toCompletableFuture());
        reportsInFlight.add(tracked);
        report.whenComplete((ignored, failure) -> reportsInFlight.remove(tracked));
    }

    /**
     * Gives back every idle cache of this client, for {@code close()}: all sent at once; then waits,
     * within one command timeout, for every lost-hold report that hangs on a reply in flight (these
     * give-backs', and those an ask or an unlock() sent before). A reply that has not come by then
     * is taken as none: its report is made as for a cache that could not be renewed
     * ({@code UNRENEWABLE}). Then waits for the reports queued on the watchdog's thread to run, so
     * that every one is delivered before the watchdog stops. A give-back that got no answer
     * expires with its lease in Redis.
     */
    public void giveBackCaches() {
        for (CachedLock cache : caches.values()) {
            cache.giveBackOnClose();
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        for (ReportInFlight tracked : List.copyOf(reportsInFlight)) {
            try {
                tracked.report.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                tracked.answered.completeExceptionally(new java.util.concurrent.TimeoutException(
                        "no answer before the client closed"));
            } catch (java.util.concurrent.ExecutionException e) {
                log.debug("a lost-hold report at close failed: {}", e.getCause().toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                tracked.answered.completeExceptionally(new java.util.concurrent.TimeoutException(
                        "no answer before the client closed"));
            }
        }
        // Reports queued on the watchdog's thread run before this task, and so before it stops.
        try {
            await(CompletableFuture.runAsync(() -> { }, watchdog.executor()),
                    "deliver the lost-hold reports queued before close");
        } catch (RuntimeException e) {
            log.debug("lost-hold reports queued before close run after it: {}", e.toString());
        }
    }

    /** A lost-hold report that waits for {@code answered}; {@code report} completes once it is made. */
    private record ReportInFlight(CompletableFuture<?> answered, CompletableFuture<?> report) {
    }

    /** How many locks this client caches now (being taken, idle or held), for leak checks. */
    public int cachedLocks() {
        return caches.size();
    }

    /** How many locks this client caches with no thread inside, for leak checks. */
    public int idleCaches() {
        return (int) caches.values().stream().filter(CachedLock::idle).count();
    }

    /**
     * Finds takes of this client's lock caches whose thread ended inside them (a watchdog chore,
     * as the watchdog finds a hold's thread ended): each is reported abandoned and its cache given back.
     */
    public void checkAbandonedCaches() {
        for (CachedLock cache : caches.values()) {
            cache.checkAbandoned();
        }
    }

    /** Forgets {@code cache} as the cache of {@code lockKey}, unless another one took its place. */
    public void notCaching(String lockKey, CachedLock cache) {
        caches.remove(lockKey, cache);
    }

    /** Another client asks for the lock {@code lockKey} (a message on this client's ask channel). */
    private void askedBack(String lockKey) {
        CachedLock cache = caches.get(lockKey);
        if (cache != null) {
            cache.askedBack();
        }
    }

    /**
     * The channel on which other clients ask the client {@code clientId} to give back a lock it
     * caches ({@code lock-ask.lua}; docs/design/lock-caching.md): one per client, under the client
     * id's hash tag.
     */
    public static String askChannel(String prefix, String clientId) {
        return HashTag.base(prefix, "client", clientId) + ":asks";
    }

    /**
     * Tells the client {@code cacherId}, which caches the lock {@code lockKey}, that this client
     * wants it: one script call, not awaited (a lost ask is made good by the cacher's next renewal,
     * which sees the waiting mark the try left).
     *
     * @return whether an ask was sent: false if {@code cacherId} is empty (nobody caches the lock)
     */
    public boolean askBack(String cacherId, String lockKey) {
        if (cacherId.isEmpty()) {
            return false;
        }
        scripts.run(Script.LOCK_ASK, new String[] {askChannel(keyPrefix, cacherId)}, lockKey)
                .whenComplete((reply, failure) -> {
                    if (failure != null) {
                        log.debug("could not ask client {} to give back '{}': {}", cacherId, lockKey, failure.toString());
                    }
                });
        return true;
    }

    /** A release sent at {@code sentNanos}, and how to send it again. */
    private record RecentRelease(long sentNanos, Supplier<? extends CompletionStage<?>> release) {
    }

    /**
     * Remembers a release about to be sent (a lock's release or hand-over, a semaphore's release),
     * so that it can be sent again to a new master after a switch; does nothing on topologies that
     * do not switch masters. Kept for one lease (a hold replicated before then has run out on any
     * new master since), at most {@value #RECENT_RELEASES}.
     *
     * @param release sends the release; token-checked or idempotent
     */
    public void releasing(Supplier<? extends CompletionStage<?>> release) {
        if (recentReleases == null) {
            return;
        }
        long now = System.nanoTime();
        recentReleases.addLast(new RecentRelease(now, release));
        recentCount.incrementAndGet();
        long oldest = now - TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        for (RecentRelease first = recentReleases.peekFirst(); first != null
                && (first.sentNanos() - oldest < 0 || recentCount.get() > RECENT_RELEASES);
                first = recentReleases.peekFirst()) {
            if (recentReleases.removeFirstOccurrence(first)) {
                recentCount.decrementAndGet();
            }
        }
    }

    /**
     * Sends every release of the last lease again, to the master the client has just moved to,
     * without waiting for the replies: one whose hold the new master still has (replicated before
     * the promotion, released on the old master after it) ends it there; the others change
     * nothing. Run after a switch.
     */
    public void resendRecentReleases() {
        if (recentReleases == null) {
            return;
        }
        long oldest = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        for (RecentRelease recent : recentReleases) {
            if (recent.sentNanos() - oldest >= 0) {
                recent.release().get();
            }
        }
    }

    /**
     * Tells whether a hold just acquired counts. False if the client has learnt since the
     * acquiring command was sent that the server it went to is no longer the master (a Sentinel
     * switch), since the grant may come from the old master. Otherwise true without replica
     * acknowledgement; with it, the hold is written once more (its renewal, {@code renew} with
     * {@code args}) on the client's side connection, followed there by {@code WAIT} in the same
     * round trip. {@code WAIT} counts only the writes of the connection it is sent on, and the
     * replication stream is ordered: the renewal, sent after the acquiring call was answered, comes
     * after it in the stream, so replicas that have the renewal have the acquisition too, whoever
     * wrote it (this client's call, another client's hand-over). The acquiring call itself goes over
     * the shared connection without a {@code WAIT}, so that renewals and releases, which use that
     * connection, never queue behind one. A renewal that finds the hold gone wrote nothing, and its
     * {@code WAIT} proves nothing: that counts as short. So does a check whose replies do not come
     * within the command timeout: the side connection's {@code WAIT}s queue behind each other, so
     * with fewer replicas reachable than asked, checks far back in the queue time out while Redis
     * answers everything; the hold is then not known to be on the replicas, like one too few
     * acknowledged, and the caller's wait goes on (an unreachable Redis fails its acquiring call).
     * A hold that does not count is given back by the caller, as for any acquisition whose outcome
     * it cannot use.
     *
     * @param sentNanos {@link System#nanoTime()} just before the acquiring command was sent (for a
     *     grant served from the queue, when the waiter was last known queued)
     * @param renew the hold's batched renew script, sent with one item
     * @param keys the item's keys
     * @param args the lease and then the item's arguments
     * @throws IllegalStateException if the client was closed meanwhile
     */
    public boolean replicated(long sentNanos, Script renew, String[] keys, String... args) {
        if (!fromCurrentMaster.test(sentNanos)) {
            settleSwitch();
            return false;
        }
        if (acks == null) {
            return true;
        }
        ScriptRegistry.Followed<List<Object>> both;
        try {
            both = await(acksScripts.<List<Object>>runFollowedBy(renew, keys, args, this::waitForReplicas),
                    "write the hold again and wait for " + acks.replicas() + " replicas");
        } catch (SynchronizerUnavailableException e) {
            checkOpen();
            metrics.replicaAcksShort("acquire");
            return false;
        }
        if (!fromCurrentMaster.test(sentNanos)) {
            return false;   // switched while WAIT ran: the answer may be the old master's
        }
        // A cache's renewal that finds someone waiting (ASKED_BACK) has extended it all the same: a
        // write; so has a condition waiter's that finds it signalled (SIGNALLED).
        RenewReply.Outcome written = RenewReply.of(renew, both.reply(), 1).outcome(0);
        boolean met = (written == RenewReply.Outcome.RENEWED || written == RenewReply.Outcome.ASKED_BACK
                || written == RenewReply.Outcome.SIGNALLED) && acks.met(both.followUp());
        if (!met) {
            metrics.replicaAcksShort("acquire");
        }
        return met;
    }

    /** Sends {@code WAIT} for the configured replica acknowledgement on the side connection. */
    private CompletionStage<Long> waitForReplicas() {
        return acksRedis.waitForReplication(acks.replicas(), acks.timeout().toMillis());
    }

    /**
     * Called once a hold that {@link #replicated} accepted is registered with the watchdog: if the
     * client moved to a new master in between, the switch's immediate renewal may have missed it,
     * so the watchdog renews again now (a hold the new master lacks is then reported lost at once,
     * not at the next tick).
     *
     * @param sentNanos when the acquiring command was sent, as given to {@link #replicated}
     */
    public void registeredAfterCheck(long sentNanos) {
        if (!fromCurrentMaster.test(sentNanos)) {
            watchdog.renewNow();
        }
    }

    /**
     * Pauses an acquisition that has just given back a grant of an old master while the client is
     * still moving to the new one, so that it does not spin against the old master meanwhile;
     * returns at once once the move is done.
     */
    private void settleSwitch() {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!fromCurrentMaster.test(System.nanoTime()) && deadline - System.nanoTime() > 0
                && !Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(this, SWITCH_PROBE_NANOS);
        }
    }

    /** One acquisition that may not count once acquired (see {@link #acquireCounted}). */
    public interface Countable {
        /**
         * Waits for the synchronizer once, for at most {@code timeoutNanos} ({@link Acquirer#FOREVER},
         * or zero or less for one try).
         */
        Attempt acquire(long timeoutNanos) throws InterruptedException;

        /** Whether what {@code acquired} got counts: see {@link #replicated}. */
        boolean counts(Attempt acquired);

        /** Gives back at once what {@code acquired} got that does not count: it was never the caller's. */
        void giveBack(Attempt acquired);
    }

    /**
     * Acquires until an acquisition counts or the wait ends: an acquisition granted by a server the
     * client now knows is no longer the master, or that fewer replicas have than asked (a failover
     * now could forget it), is given back, and the wait goes on, after a pause if replicas fell
     * short ({@link #pauseAfterShortAcks}). One whose check fails is given back too, and the
     * failure thrown.
     *
     * @param timeoutNanos {@link Acquirer#FOREVER}, or how long to wait (zero or less: one try)
     * @param interruptible whether an interrupt during a pause throws {@link InterruptedException}
     * @return the acquisition that counts, or a failed attempt once the wait is over
     * @throws InterruptedException if interrupted while waiting, as {@code acquisition} says
     */
    public Attempt acquireCounted(long timeoutNanos, boolean interruptible, Countable acquisition)
            throws InterruptedException {
        long start = System.nanoTime();
        boolean forever = timeoutNanos == Acquirer.FOREVER;
        int shortRounds = 0;
        while (true) {
            long remaining = forever || timeoutNanos <= 0
                    ? timeoutNanos
                    : Math.max(1, timeoutNanos - (System.nanoTime() - start));
            Attempt attempt = acquisition.acquire(remaining);
            if (!attempt.acquired()) {
                return attempt;
            }
            boolean counts;
            try {
                counts = acquisition.counts(attempt);
            } catch (RuntimeException e) {
                acquisition.giveBack(attempt);
                throw e;
            }
            if (counts) {
                return attempt;
            }
            acquisition.giveBack(attempt);
            Attempt over = new Attempt(false, -1, -1, start);
            if (!forever && (timeoutNanos <= 0 || System.nanoTime() - start >= timeoutNanos)) {
                return over;
            }
            pauseAfterShortAcks(++shortRounds, start + timeoutNanos, forever, interruptible);
            if (!forever && System.nanoTime() - start >= timeoutNanos) {
                return over;
            }
        }
    }

    /**
     * Pauses a wait that just gave back an acquisition short of replica acknowledgements, before
     * its next try, so that a replica that stopped acknowledging does not turn the wait into a loop
     * of acquisitions and give-backs: the replica acknowledgement's timeout after the first short
     * one, doubling with each one after it up to a third of the lease, and never past the wait's
     * end. Returns at once without replica acknowledgement (a grant given back because the client
     * moved to a new master meanwhile: {@link #replicated} has already waited for the move).
     *
     * @param shortRounds how many acquisitions of this wait fell short so far, at least 1
     * @param deadlineNanos the wait's end by {@link System#nanoTime()}; ignored if {@code forever}
     * @param forever whether the wait has no end
     * @param interruptible whether an interrupt ends the pause with {@link InterruptedException};
     *     otherwise it is kept for the caller to see afterwards
     * @throws InterruptedException if interruptible and interrupted
     * @throws IllegalStateException if the client is closed before or during the pause
     */
    void pauseAfterShortAcks(int shortRounds, long deadlineNanos, boolean forever, boolean interruptible)
            throws InterruptedException {
        if (acks == null) {
            return;
        }
        long cap = Math.max(acks.timeout().toNanos(), TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 3);
        long pause = acks.timeout().toNanos();
        for (int round = 1; round < shortRounds && pause < cap; round++) {
            pause *= 2;
        }
        pause = Math.min(cap, pause);
        long end = System.nanoTime() + pause;
        if (!forever && deadlineNanos - end < 0) {
            end = deadlineNanos;
        }
        boolean interrupted = false;
        Thread current = Thread.currentThread();
        // Known before closed is checked, so that close() (closed set, then pauses woken) cannot
        // come between the check and the park unseen.
        pausing.add(current);
        try {
            for (long left = end - System.nanoTime(); left > 0; left = end - System.nanoTime()) {
                checkOpen();
                LockSupport.parkNanos(this, left);
                if (Thread.interrupted()) {
                    if (interruptible) {
                        throw new InterruptedException();
                    }
                    interrupted = true;
                }
            }
            checkOpen();
        } finally {
            pausing.remove(current);
            if (interrupted) {
                current.interrupt();
            }
        }
    }

    /**
     * Wakes every thread in {@link #pauseAfterShortAcks}; called by close() once the client is
     * closed, so that they fail at once as the client's sleeping waiters do.
     */
    public void wakePauses() {
        pausing.forEach(LockSupport::unpark);
    }
}
