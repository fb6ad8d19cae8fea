package dev.synchronizers.examples.boot;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutorListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Logs a line each time a {@code @SchedulerLock} job is skipped on this instance because its lock is
 * held, which ShedLock itself logs at DEBUG only: with two instances, one logs its report runs and
 * the other these lines. ShedLock's Spring support picks up a {@link LockingTaskExecutorListener}
 * bean by itself.
 */
@Component
public class SkippedRunLogger implements LockingTaskExecutorListener {

    private static final Logger log = LoggerFactory.getLogger(SkippedRunLogger.class);

    /** Created by Spring. */
    public SkippedRunLogger() {
    }

    /** Logs the skipped run, by its lock's name. */
    @Override
    public void onLockNotAcquired(LockConfiguration configuration) {
        log.info("{} skipped on this instance: its lock is held by another instance, which runs it",
                configuration.getName());
    }
}
