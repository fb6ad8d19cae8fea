package dev.synchronizers.redis.topology;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The sentinel watch's own thread, {@code synchronizers-sentinel}: runs switches and resolutions,
 * one at a time, off the I/O threads, and retries sentinels. Once closed it runs nothing more, and
 * {@link #closed()} tells every part of the watch to stop. Thread-safe.
 */
final class WatchThread {

    /** How long to wait before trying again a sentinel that could not be reached, or a failed switch. */
    static final long RETRY_MILLIS = 500;

    /** Runs switches and resolutions, one at a time, off the I/O threads; retries sentinels. */
    private final ScheduledThreadPoolExecutor worker;
    private volatile Thread workerThread;
    private volatile boolean closed;

    /** Creates the thread's executor; the thread itself starts with the first task. */
    WatchThread() {
        this.worker = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "synchronizers-sentinel");
            thread.setDaemon(true);
            workerThread = thread;
            return thread;
        });
        worker.setRemoveOnCancelPolicy(true);
        worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Tells whether {@link #close} was called. */
    boolean closed() {
        return closed;
    }

    /** Runs {@code task} on the watch's thread after {@code delayMillis}; once closed, never. */
    void schedule(Runnable task, long delayMillis) {
        try {
            worker.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** Runs {@code task} on the watch's thread as soon as it is free; once closed, never. */
    void execute(Runnable task) {
        try {
            worker.execute(task);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * Stops the thread, after the switch in progress if any (unless called on that thread),
     * waiting up to {@code timeout}.
     */
    void close(Duration timeout) {
        closed = true;
        worker.shutdownNow();
        if (Thread.currentThread() != workerThread) {
            try {
                // A switch in progress ends before the connections it may have opened are closed.
                worker.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
