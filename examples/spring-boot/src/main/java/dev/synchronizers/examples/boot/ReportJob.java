package dev.synchronizers.examples.boot;

import dev.synchronizers.shedlock.SynchronizersLockProvider;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A scheduled job that must not run on two instances at once: ShedLock takes the lock
 * {@code "example-report"} through the starter's {@code SynchronizersLockProvider} before each run,
 * and an instance that finds it taken skips the run ({@link SkippedRunLogger} logs a line then). Each
 * run reads its lock's fencing token, the number a downstream store would check to refuse a writer
 * whose lock ran out while it was paused.
 *
 * <p>The schedule is a cron expression, every 5 seconds on the clock by default, so every instance
 * tries at the same moment and all but one skip; {@code lockAtLeastFor} keeps the lock for a
 * second, so an instance whose clock is up to a second behind skips too.
 */
@Component
public class ReportJob {

    private static final Logger log = LoggerFactory.getLogger(ReportJob.class);

    private final AtomicLong runs = new AtomicLong();
    private volatile long lastToken = -1;
    private final CountDownLatch firstRun = new CountDownLatch(1);

    /** Created by Spring. */
    public ReportJob() {
    }

    /** One run: logs its fencing token; ShedLock runs it only while it holds the lock. */
    @Scheduled(cron = "${example.report.cron:*/5 * * * * *}")
    @SchedulerLock(name = "example-report", lockAtMostFor = "PT1M", lockAtLeastFor = "PT1S")
    public void run() {
        long token = SynchronizersLockProvider.currentFencingToken();
        lastToken = token;
        long count = runs.incrementAndGet();
        log.info("report run {} on this instance, fencing token {}", count, token);
        firstRun.countDown();
    }

    /**
     * Waits until this instance has made its first run.
     *
     * @param timeout how long to wait at most
     * @return true if it ran, false if the timeout elapsed first
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitFirstRun(Duration timeout) throws InterruptedException {
        return firstRun.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Returns how many runs this instance made.
     *
     * @return the count
     */
    public long runs() {
        return runs.get();
    }

    /**
     * Returns the fencing token of this instance's latest run.
     *
     * @return the token, or -1 before the first run
     */
    public long lastToken() {
        return lastToken;
    }
}
