package dev.synchronizers.redis;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.watchdog.Watchdog;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What every synchronizer of one client shares: its id, its connection and scripts, the watchdog,
 * the wake-up dispatcher, the listeners and the configured durations.
 */
final class Machinery {

    final String clientId;
    final String keyPrefix;
    final RedisClusterAsyncCommands<String, String> redis;
    final ScriptRegistry scripts;
    final Watchdog watchdog;
    final WakeupDispatcher wakeups;
    final LostHoldListeners listeners;
    /** Where what happens is counted: {@link Recorder#NONE} without a meter registry. */
    final Recorder metrics;
    final long leaseMillis;
    final Duration timeout;
    /** The replica acknowledgement every acquisition needs, or null. */
    final ReplicaAcks acks;
    /** With {@link #acks}: the side connection that carries the WAITs, and its script registry; else null. */
    private final RedisClusterAsyncCommands<String, String> acksRedis;
    private final ScriptRegistry acksScripts;
    private final AtomicBoolean closed;
    private final AtomicLong attempts = new AtomicLong();
    /** Threads in {@link #pauseAfterShortAcks}, woken by {@link #wakePauses}. */
    private final Set<Thread> pausing = ConcurrentHashMap.newKeySet();
    /**
     * Synchronizer objects with holds in this JVM, with how many, kept strongly reachable: the
     * factory's cache holds them weakly, and a hold must find the same object on unlock() however
     * it is reached.
     */
    private final Map<Object, Integer> pinned = new ConcurrentHashMap<>();

    Machinery(String clientId, String keyPrefix, RedisClusterAsyncCommands<String, String> redis,
            ScriptRegistry scripts, Watchdog watchdog, WakeupDispatcher wakeups,
            LostHoldListeners listeners, Recorder metrics, long leaseMillis, Duration timeout, ReplicaAcks acks,
            RedisClusterAsyncCommands<String, String> acksRedis, ScriptRegistry acksScripts, AtomicBoolean closed) {
        this.clientId = clientId;
        this.keyPrefix = keyPrefix;
        this.redis = redis;
        this.scripts = scripts;
        this.watchdog = watchdog;
        this.wakeups = wakeups;
        this.listeners = listeners;
        this.metrics = metrics;
        this.leaseMillis = leaseMillis;
        this.timeout = timeout;
        this.acks = acks;
        this.acksRedis = acksRedis;
        this.acksScripts = acksScripts;
        this.closed = closed;
    }

    /** Counts one more hold of {@code synchronizer}: it stays reachable until every hold is unpinned. */
    void pin(Object synchronizer) {
        pinned.merge(synchronizer, 1, Integer::sum);
    }

    /** Counts one hold of {@code synchronizer} less. */
    void unpin(Object synchronizer) {
        pinned.computeIfPresent(synchronizer, (key, count) -> count == 1 ? null : count - 1);
    }

    /** Returns how many synchronizer objects holds keep reachable, for leak checks. */
    int pinnedCount() {
        return pinned.size();
    }

    /** The owner string of the current thread: client id and thread id. */
    String currentOwner() {
        return clientId + ":" + currentThreadId();
    }

    /**
     * A name for one acquisition attempt of the current thread, unique in this client: the owner
     * string and a sequence number. A semaphore waiter's grant is recorded under it, so no later
     * attempt of the thread can take a grant meant for an earlier one.
     */
    String newAttempt() {
        return currentOwner() + ":" + attempts.incrementAndGet();
    }

    @SuppressWarnings("deprecation") // Thread.threadId() is JDK 19+; the id is the same.
    static long currentThreadId() {
        return Thread.currentThread().getId();
    }

    /**
     * Tells whether a hold just acquired is on enough replicas: true without replica
     * acknowledgement. Otherwise the hold is written once more (its renewal, {@code renew} with
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
     *
     * @param renew the hold's batched renew script, sent with one item
     * @param keys the item's keys
     * @param args the lease and then the item's arguments
     * @throws IllegalStateException if the client was closed meanwhile
     */
    boolean replicated(Script renew, String[] keys, String... args) {
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
        boolean met = (Long) both.reply().get(0) == 1L && acks.met(both.followUp());
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
     * Pauses a wait that just gave back an acquisition short of replica acknowledgements, before
     * its next try, so that a replica that stopped acknowledging does not turn the wait into a loop
     * of acquisitions and give-backs: the replica acknowledgement's timeout after the first short
     * one, doubling with each one after it up to a third of the lease, and never past the wait's
     * end.
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
    void wakePauses() {
        pausing.forEach(LockSupport::unpark);
    }

    /** Waits for a reply within the command timeout; see {@link Replies#await}. */
    <T> T await(CompletionStage<T> reply, String what) {
        return Replies.await(reply, timeout, what);
    }

    /**
     * Returns what a call that failed for want of Redis throws: {@link IllegalStateException} if
     * the client was closed meanwhile (close() shuts the connections under a call in flight, and
     * the caller must learn that the client is closed, as a waiter that sleeps does), with
     * {@code failure} as its cause; otherwise {@code failure} itself.
     *
     * @param failure the call's failure
     * @return the exception to throw
     */
    RuntimeException unlessClosed(SynchronizerUnavailableException failure) {
        if (closed.get()) {
            return new IllegalStateException("this RedisSynchronizers was closed while the call waited for Redis",
                    failure);
        }
        return failure;
    }

    /**
     * Throws if the client is closed.
     *
     * @throws IllegalStateException if {@link RedisSynchronizers#close()} was called
     */
    void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this RedisSynchronizers is closed");
        }
    }
}
