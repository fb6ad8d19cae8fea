package dev.synchronizers.redis.support;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread that runs a client's periodic work (ticks) and the reports it learns
 * (lost-hold listeners): the watchdog's, and a Redlock's events thread. Closing it drops no report:
 * tasks already due still run, and a task given to {@link #reports()} afterwards runs on the
 * caller's thread. Ticks and timers not yet due are cancelled.
 *
 * <p>Thread-safe.
 */
public final class EventThread {

    private final ScheduledThreadPoolExecutor scheduler;
    private final Executor reports;
    private volatile Thread thread;

    /**
     * Starts nothing yet: the thread is made when the first task is scheduled.
     *
     * @param name the thread's name
     */
    public EventThread(String name) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread created = new Thread(runnable, name);
            created.setDaemon(true);
            thread = created;
            return created;
        });
        executor.setRemoveOnCancelPolicy(true);
        // At close, tasks already due (reports, listeners) still run; ticks and timers do not.
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.scheduler = executor;
        this.reports = task -> {
            try {
                scheduler.execute(task);
            } catch (RejectedExecutionException e) {
                // Closed: run here rather than drop what the client learned (a lost-hold report).
                task.run();
            }
        };
    }

    /**
     * Returns the thread as a scheduler, for ticks and timers; it rejects tasks once closed.
     *
     * @return the scheduler
     */
    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    /**
     * Returns the thread as an executor that never drops a task: one given after {@link #close}
     * runs at once on the caller's thread.
     *
     * @return the executor
     */
    public Executor reports() {
        return reports;
    }

    /**
     * Returns whether the caller runs on this thread.
     *
     * @return true on this thread
     */
    public boolean isCurrent() {
        return Thread.currentThread() == thread;
    }

    /**
     * Stops the thread once the tasks already due have run, and waits for that at most {@code wait}
     * (not at all when called from this thread); tasks still queued then run after this returns.
     * Cancels the ticks and timers not yet due.
     *
     * @param wait how long to wait
     */
    public void close(Duration wait) {
        scheduler.shutdown();
        if (!isCurrent()) {
            try {
                scheduler.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
