package dev.synchronizers.redis;

import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.watchdog.Watchdog;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

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
    private final AtomicBoolean closed;
    private final AtomicLong attempts = new AtomicLong();
    /**
     * Synchronizer objects with holds in this JVM, with how many, kept strongly reachable: the
     * factory's cache holds them weakly, and a hold must find the same object on unlock() however
     * it is reached.
     */
    private final Map<Object, Integer> pinned = new ConcurrentHashMap<>();

    Machinery(String clientId, String keyPrefix, RedisClusterAsyncCommands<String, String> redis,
            ScriptRegistry scripts, Watchdog watchdog, WakeupDispatcher wakeups,
            LostHoldListeners listeners, Recorder metrics, long leaseMillis, Duration timeout, ReplicaAcks acks,
            AtomicBoolean closed) {
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

    /** Sends {@code WAIT} for the configured replica acknowledgement; only when {@link #acks} is set. */
    CompletionStage<Long> waitForReplicas() {
        return redis.waitForReplication(acks.replicas(), acks.timeout().toMillis());
    }

    /**
     * Tells whether a hold just acquired is on enough replicas: true without replica
     * acknowledgement; otherwise {@code acked} if the acquiring call's own {@code WAIT} answered
     * ({@code >= 0}). A hold another client's call wrote (a hand-over, a grant served from the
     * queue) is not covered by a {@code WAIT} of this connection, which waits for this client's own
     * writes only: {@code touch} then writes it once more (a renewal), and the {@code WAIT} that
     * follows in the same round trip covers that write and, the replication stream being ordered,
     * the grant before it.
     *
     * @param acked the acquiring call's {@code WAIT} answer, or {@code -1}
     * @param touch sends a write of the hold (its renewal), used when {@code acked} is {@code -1}
     */
    boolean replicated(long acked, Supplier<CompletionStage<?>> touch) {
        if (acks == null) {
            return true;
        }
        long count = acked;
        if (count < 0) {
            touch.get();
            count = await(waitForReplicas(), "wait for " + acks.replicas() + " replicas");
        }
        boolean met = acks.met(count);
        if (!met) {
            metrics.replicaAcksShort("acquire");
        }
        return met;
    }

    /**
     * Runs a script that may create a hold and waits for its reply; with replica acknowledgement,
     * {@code WAIT} follows it in the same round trip and its answer is stored in {@code acked[0]}
     * ({@code -1} without).
     */
    <T> T runAcquiring(Script script, String[] keys, String[] args, String what, long[] acked) {
        if (acks == null) {
            acked[0] = -1;
            return await(scripts.<T>run(script, keys, args), what);
        }
        ScriptRegistry.Followed<T> both = await(scripts.<T>runFollowedBy(script, keys, args, this::waitForReplicas),
                what + " and wait for " + acks.replicas() + " replicas");
        acked[0] = both.followUp();
        return both.reply();
    }

    /** Waits for a reply within the command timeout; see {@link Replies#await}. */
    <T> T await(CompletionStage<T> reply, String what) {
        return Replies.await(reply, timeout, what);
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
