package dev.synchronizers.redis.client;

import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What every synchronizer of one client shares, whichever entry point built it
 * ({@code RedisSynchronizers} or {@code Redlock}): the client's id and key prefix, its lease and
 * command timeout, its wake-ups, listeners and metrics, the owner strings of its threads, the
 * synchronizers its holds keep reachable, and whether it is open.
 *
 * <p>A client of one server (standalone, Sentinel, Cluster) extends it with its connection and
 * watchdog ({@link Machinery}); a Redlock client uses it as it is, its nodes being its backend's.
 */
public class ClientContext {

    public final String clientId;
    public final String keyPrefix;
    public final WakeupDispatcher wakeups;
    public final LostHoldListeners listeners;
    /** Where what happens is counted: {@link Recorder#NONE} without a meter registry. */
    public final Recorder metrics;
    public final long leaseMillis;
    public final Duration timeout;
    /** Where async stages complete: the user's executor, or {@link #ownPool}. */
    public final Executor async;
    /** The {@code lost()} stages of this client's handles still open; settled at close. */
    public final LossSignals lossSignals = new LossSignals();
    /**
     * The threads that wait for async acquisitions ({@link AsyncLine}): one per synchronizer object
     * with pending async acquisitions, created as needed and ended when idle.
     */
    final ExecutorService waiting;
    /** The client's own pool for async stages when the user gave none; shut down on close. */
    private final ExecutorService ownPool;
    /** The public type's name, for the messages of a closed client. */
    private final String clientName;
    private final AtomicBoolean closed;
    private final AtomicLong attempts = new AtomicLong();
    /**
     * Synchronizer objects with holds in this JVM, with how many, kept strongly reachable: the
     * factory's cache holds them weakly, and a hold must find the same object on unlock() however
     * it is reached.
     */
    private final Map<Object, Integer> pinned = new ConcurrentHashMap<>();
    /**
     * Acquisitions under way that may have left a trace in Redis (a place in a line) which they
     * take away when they end ({@link Acquirer}); {@code close()} waits for them
     * ({@link #awaitAcquisitionsEnded()}).
     */
    private final AtomicInteger acquiring = new AtomicInteger();
    private final ReentrantLock acquiringLock = new ReentrantLock();
    private final Condition acquisitionsEnded = acquiringLock.newCondition();

    /**
     * @param async where async stages complete; null for a pool of the client's own: at most
     *     {@value #ASYNC_THREADS} daemon threads, which end when idle and are shut down by
     *     {@link #closeAsync()}
     */
    public ClientContext(String clientName, String clientId, String keyPrefix, WakeupDispatcher wakeups,
            LostHoldListeners listeners, Recorder metrics, long leaseMillis, Duration timeout, AtomicBoolean closed,
            Executor async) {
        this.clientName = clientName;
        this.clientId = clientId;
        this.keyPrefix = keyPrefix;
        this.wakeups = wakeups;
        this.listeners = listeners;
        this.metrics = metrics;
        this.leaseMillis = leaseMillis;
        this.timeout = timeout;
        this.closed = closed;
        AtomicInteger waiters = new AtomicInteger();
        this.waiting = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                runnable -> {
                    Thread thread = new Thread(runnable, "synchronizers-" + clientId.substring(0, 8) + "-async-wait-"
                            + waiters.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        if (async == null) {
            AtomicInteger threads = new AtomicInteger();
            ThreadPoolExecutor pool = new ThreadPoolExecutor(ASYNC_THREADS, ASYNC_THREADS, 30, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(), runnable -> {
                        Thread thread = new Thread(runnable, "synchronizers-" + clientId.substring(0, 8) + "-async-"
                                + threads.incrementAndGet());
                        thread.setDaemon(true);
                        return thread;
                    });
            pool.allowCoreThreadTimeOut(true);
            this.ownPool = pool;
            this.async = pool;
        } else {
            this.ownPool = null;
            this.async = async;
        }
    }

    /**
     * Runs {@code task} on the async executor and returns its stage: completed as the task returns
     * or throws. A closed client, whose own pool refuses tasks, gets a stage failed with the closed
     * client's {@link IllegalStateException}, as the task itself would fail.
     */
    public final CompletableFuture<Void> runAsync(Runnable task) {
        try {
            return CompletableFuture.runAsync(task, async);
        } catch (RejectedExecutionException refused) {
            try {
                checkOpen();
            } catch (IllegalStateException closed) {
                return CompletableFuture.failedFuture(closed);
            }
            return CompletableFuture.failedFuture(refused);
        }
    }

    /** An acquisition that may leave a trace in Redis starts; {@link #acquisitionEnded()} must follow. */
    public final void acquisitionStarted() {
        acquiring.incrementAndGet();
    }

    /** An acquisition counted by {@link #acquisitionStarted()} ended, its trace in Redis taken away. */
    public final void acquisitionEnded() {
        if (acquiring.decrementAndGet() == 0 && closed.get()) {
            acquiringLock.lock();
            try {
                acquisitionsEnded.signalAll();
            } finally {
                acquiringLock.unlock();
            }
        }
    }

    /**
     * For {@code close()}, once the client is closed and its waiters woken: waits, at most the
     * command timeout, until the acquisitions under way have ended, so that those the closing
     * fails leave their lines in Redis over connections still open. Without it a waiter's place
     * would outlive its client by a lease, and a permit or a fair lock released meanwhile would be
     * handed to it and kept from everyone else until then.
     */
    public final void awaitAcquisitionsEnded() {
        long remaining = timeout.toNanos();
        acquiringLock.lock();
        try {
            while (acquiring.get() > 0 && remaining > 0) {
                remaining = acquisitionsEnded.awaitNanos(remaining);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();   // close() then goes on at once
        } finally {
            acquiringLock.unlock();
        }
    }

    /** The most threads of the client's own pool for async stages. */
    static final int ASYNC_THREADS = 2;

    /**
     * Shuts the client's own async pool down, if it has one, and the waiting threads' pool: stages
     * already queued still run, and waits under way end as the closed client's waiters do.
     */
    public final void closeAsync() {
        waiting.shutdown();
        if (ownPool != null) {
            ownPool.shutdown();
        }
    }

    /** Counts one more hold of {@code synchronizer}: it stays reachable until every hold is unpinned. */
    public final void pin(Object synchronizer) {
        pinned.merge(synchronizer, 1, Integer::sum);
    }

    /** Counts one hold of {@code synchronizer} less. */
    public final void unpin(Object synchronizer) {
        pinned.computeIfPresent(synchronizer, (key, count) -> count == 1 ? null : count - 1);
    }

    /** Returns how many synchronizer objects holds keep reachable, for leak checks. */
    public final int pinnedCount() {
        return pinned.size();
    }

    /** The owner string of the current thread: client id and thread id. */
    public final String currentOwner() {
        return Owner.ofThread(clientId, currentThreadId()).encode();
    }

    /**
     * A name for one acquisition attempt of the current thread, unique in this client: the owner
     * string and a sequence number. A grant recorded under it (a semaphore waiter's, a Redlock
     * attempt's) can never be taken or given back by another attempt of the thread.
     */
    public final String newAttempt() {
        return Owner.ofAttempt(clientId, currentThreadId(), attempts.incrementAndGet()).encode();
    }

    @SuppressWarnings("deprecation") // Thread.threadId() is JDK 19+; the id is the same.
    public static long currentThreadId() {
        return Thread.currentThread().getId();
    }

    /**
     * The servers this client talks to, as messages name them (the topology's description, e.g.
     * {@code redis://127.0.0.1:6379}); set once by the entry point, null where none is set.
     */
    public volatile String servers;

    /**
     * Waits for a reply within the command timeout; see {@link Replies#await}. A failure's message
     * names {@link #servers} after {@code what}.
     */
    public final <T> T await(CompletionStage<T> reply, String what) {
        String where = servers;
        return Replies.await(reply, timeout, where == null ? what : what + " on " + where);
    }

    /**
     * Returns what a call that failed, for want of Redis or because a waiter's step failed, throws:
     * {@link IllegalStateException} if the client was closed meanwhile (close() shuts the
     * connections under a call in flight, and the caller must learn that the client is closed, as
     * a waiter that sleeps does), with {@code failure} as its cause; otherwise {@code failure} itself.
     *
     * @param failure the call's failure
     * @return the exception to throw
     */
    public final RuntimeException unlessClosed(RuntimeException failure) {
        if (closed.get() && !(failure instanceof Closed)) {
            return new IllegalStateException("this " + clientName + " was closed while the call waited for Redis",
                    failure);
        }
        return failure;
    }

    /** Whether {@code close()} was called. */
    final boolean isClosed() {
        return closed.get();
    }

    /** Whether the client is still open; for a sleeper that must not ask Redis once it is closed. */
    public final boolean isOpen() {
        return !closed.get();
    }

    /**
     * Throws if the client is closed.
     *
     * @throws IllegalStateException if the client's {@code close()} was called
     */
    public final void checkOpen() {
        if (closed.get()) {
            throw new Closed("this " + clientName + " is closed");
        }
    }

    /** What {@link #checkOpen()} throws: to callers, an {@link IllegalStateException} like any other. */
    private static final class Closed extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        Closed(String message) {
            super(message);
        }
    }
}
