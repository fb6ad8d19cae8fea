package dev.synchronizers.shedlock.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.shedlock.spring.FencedJobApp.Settings;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * A {@code @Scheduled @SchedulerLock} job in two real Spring application contexts, each with its
 * own client, over {@code SynchronizersLockProvider.withKeepAlive()}: the job writes to a store
 * that refuses a fencing token below one it accepted, and counts runs in progress.
 */
@Tag("redis")
class SchedulerLockSpringTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    /** The lease of the clients whose runs must never overlap: far longer than a run. */
    private static final Duration RUN_LEASE = Duration.ofSeconds(10);

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final String prefix = "spring-" + UUID.randomUUID();

    /**
     * Two contexts run the job in turn: no run overlaps another while both run, and no write is
     * refused. Their clients' lease is far longer than a run (10 ms), so that a thread stalled on a
     * machine loaded past its two cores cannot outlast it: such a pause is reported, not prevented
     * (docs/semantics.md), and the frozen test below covers it.
     */
    @Test
    void twoContexts_neverOverlap_andNoWriteIsRefused() throws InterruptedException {
        BlockingQueue<String> first = new LinkedBlockingQueue<>();
        BlockingQueue<String> second = new LinkedBlockingQueue<>();
        try (FencedStore store = new FencedStore(redis.server().uri(), prefix)) {
            int wroteA;
            int wroteB;
            long overlaps;
            AnnotationConfigApplicationContext a = FencedJobApp.start(settings(RUN_LEASE, first::add));
            try {
                AnnotationConfigApplicationContext b = FencedJobApp.start(settings(RUN_LEASE, second::add));
                try {
                    wroteA = awaitWrites(first, 10);
                    wroteB = awaitWrites(second, 10);
                    // Read while both run: a context's close() does not wait for a run in progress,
                    // and closes the store under it, which can leave that run counted as active.
                    overlaps = store.get("overlaps");
                } finally {
                    b.close();
                }
            } finally {
                a.close();
            }
            assertEquals(0, overlaps, "runs of the job that overlapped another");
            assertEquals(0, store.get("refused"), "writes the store refused");
            assertTrue(store.get("written") >= wroteA + wroteB, "every reported write is in the store");
        }
    }

    /**
     * One application's JVM is stopped (SIGSTOP) inside a run, past its client's lease; the other
     * application takes the job over and writes. When the stopped JVM continues, its late write is
     * refused by the token, and its client reports the hold lost.
     */
    @Test
    void aContextFrozenPastItsLease_isToldOfTheLoss_andItsLateWriteIsRefused() throws InterruptedException {
        BlockingQueue<String> other = new LinkedBlockingQueue<>();
        try (FencedStore store = new FencedStore(redis.server().uri(), prefix)) {
            store.set("freeze");
            try (ChildJvm frozen = ChildJvm.start(FencedJobApp.class.getName(), Map.of(),
                    List.of(redis.server().uri(), prefix, "1000", "true"))) {
                long heldToken = Long.parseLong(frozen.awaitLine("HOLDING ", PATIENCE).substring(8));
                frozen.pause();
                AnnotationConfigApplicationContext taker = FencedJobApp.start(settings(Duration.ofSeconds(1), other::add));
                try {
                    long takerToken = tokenOfFirstWrite(other);
                    assertTrue(takerToken > heldToken, "the job taken over has a greater token");
                    store.clear("freeze");
                    frozen.resume();
                    // The late write (the job's thread) and the loss report (the watchdog's) race
                    // once the JVM continues: either may be printed first.
                    Map<String, String> after = frozen.awaitLines(PATIENCE, "REFUSED ", "LOST ");
                    assertEquals("REFUSED " + heldToken, after.get("REFUSED "), "the frozen run's late write");
                    assertEquals("LOST " + FencedJobApp.JOB, after.get("LOST "));
                } finally {
                    taker.close();
                }
            }
        }
    }

    private Settings settings(Duration lease, java.util.function.Consumer<String> reports) {
        return new Settings(redis.server().uri(), prefix, lease, false, reports);
    }

    /** Waits for {@code count} WROTE reports; fails on a REFUSED one. Returns {@code count}. */
    private static int awaitWrites(BlockingQueue<String> reports, int count) throws InterruptedException {
        for (int wrote = 0; wrote < count; ) {
            String report = reports.poll(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(report != null, "a context ran the job " + wrote + " times in " + PATIENCE);
            assertTrue(report.startsWith("WROTE "), report);
            wrote++;
        }
        return count;
    }

    private static long tokenOfFirstWrite(BlockingQueue<String> reports) throws InterruptedException {
        String report = reports.poll(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(report != null, "the other context ran the job within " + PATIENCE);
        assertTrue(report.startsWith("WROTE "), report);
        return Long.parseLong(report.substring(6));
    }
}
