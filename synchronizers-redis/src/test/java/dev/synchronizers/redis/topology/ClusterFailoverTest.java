package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.FencedCounter;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.semaphore.SemaphoreKeys;
import dev.synchronizers.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The synchronizers through failovers of a Redis Cluster (3 masters, 3 replicas, started once for
 * the class): a master killed under a contended lock, and coordinated failovers under waiting
 * semaphore and latch waiters. What a user checks: no update is lost behind a fencing check,
 * every hold that was lost is reported, no error reaches the caller once the failover is over,
 * and waiters proceed.
 */
@Tag("topology")
class ClusterFailoverTest extends ClusterTestBase {

    /** Short, so that holds lost in the failover are found within a second. */
    private static final Duration LEASE = Duration.ofSeconds(3);

    /**
     * 3 clients x 4 threads increment a counter under one lock, the counter's store checking
     * fencing tokens; the lock's master is killed mid-run and its replica promoted. No update is
     * lost; every hold that {@code unlock()} found lost had been reported to the listener; once
     * the clients work again after the failover, no error reaches a caller.
     */
    @Test
    void lock_masterKilledMidRun_noUpdateLostAndEveryLostHoldReported() throws Exception {
        Queue<LostHold> reported = new ConcurrentLinkedQueue<>();
        List<DistributedLock> locks = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            locks.add(client(reported).lock(name));
        }
        FencedCounter counter = new FencedCounter();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean settled = new AtomicBoolean();
        Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        Queue<Throwable> afterSettling = new ConcurrentLinkedQueue<>();
        Set<Long> lostAtUnlock = ConcurrentHashMap.newKeySet();
        AtomicLong unavailable = new AtomicLong();
        List<Background<Void>> workers = new ArrayList<>();
        for (int t = 0; t < 12; t++) {
            DistributedLock lock = locks.get(t % 3);
            workers.add(Background.start("worker-" + t, () -> {
                while (!stop.get()) {
                    try {
                        lock.lock();
                    } catch (SynchronizerUnavailableException e) {
                        unavailable.incrementAndGet();
                        if (settled.get()) {
                            afterSettling.add(e);
                        }
                        continue;
                    }
                    long token = lock.fencingToken();
                    try {
                        long read = counter.read(token);
                        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));   // the work between read and write
                        counter.write(token, read + 1);
                    } finally {
                        try {
                            lock.unlock();
                        } catch (LostHoldException e) {
                            lostAtUnlock.add(token);
                        } catch (SynchronizerUnavailableException e) {
                            unavailable.incrementAndGet();
                            if (settled.get()) {
                                afterSettling.add(e);
                            }
                        } catch (RuntimeException | Error e) {
                            unexpected.add(e);
                        }
                    }
                }
                return null;
            }));
        }
        Await.until("200 increments before the failover", () -> counter.accepted() >= 200);
        RedisServer master = cluster.masterOf(LockKeys.of(prefix, name).lock());
        cluster.kill(master);
        cluster.awaitHealthy();
        Await.until("every client locks and unlocks again after the failover", () -> {
            for (DistributedLock lock : locks) {
                try {
                    if (!lock.tryLock(1, TimeUnit.SECONDS)) {
                        return false;
                    }
                    lock.unlock();
                } catch (SynchronizerUnavailableException | LostHoldException | InterruptedException e) {
                    return false;
                }
            }
            return true;
        });
        settled.set(true);
        long atSettling = counter.accepted();
        Await.until("200 increments after the failover", () -> counter.accepted() >= atSettling + 200);
        stop.set(true);
        for (Background<Void> worker : workers) {
            worker.get();
        }
        cluster.restart(master);

        assertEquals(List.of(), List.copyOf(unexpected), "unexpected errors");
        assertEquals(List.of(), List.copyOf(afterSettling), "errors after the failover was over");
        assertEquals(counter.accepted(), counter.value(), "an update was lost");
        Set<Long> reportedTokens = ConcurrentHashMap.newKeySet();
        reported.forEach(hold -> reportedTokens.add(hold.fencingToken()));
        assertTrue(reportedTokens.containsAll(lostAtUnlock),
                "unlock() threw LostHoldException for holds never reported: " + lostAtUnlock + " vs " + reportedTokens);
        System.out.printf("failover under the lock: %d increments, %d refused as stale, %d lost holds reported,"
                + " %d unavailable during the failover%n", counter.accepted(), counter.refused(), reported.size(),
                unavailable.get());
    }

    /**
     * A coordinated failover of the slot's master while a semaphore waiter and a latch waiter
     * wait: the release and the count-down after it reach them on the new master.
     */
    @Test
    void semaphoreAndLatch_slotMasterFailsOver_waitersProceed() throws Exception {
        RedisSynchronizers a = client(new ConcurrentLinkedQueue<>());
        RedisSynchronizers b = client(new ConcurrentLinkedQueue<>());
        DistributedSemaphore semaphore = a.semaphore(name);
        DistributedCountDownLatch latch = a.countDownLatch(name);
        assertTrue(semaphore.trySetPermits(1));
        assertTrue(latch.trySetCount(1));
        semaphore.acquire();
        Background<Boolean> permitWaiter = Background.start("permit-waiter",
                () -> b.semaphore(name).tryAcquire(30, TimeUnit.SECONDS));
        Background<Boolean> latchWaiter = Background.start("latch-waiter",
                () -> b.countDownLatch(name).await(30, TimeUnit.SECONDS));
        Await.until("both waiters sleep on their wake-ups", () -> RedisState.sleepsOnWakeup(permitWaiter.thread())
                && RedisState.sleepsOnWakeup(latchWaiter.thread()));

        RedisServer master = cluster.masterOf(SemaphoreKeys.of(prefix, name).total());
        cluster.failover(cluster.replicasOf(master).get(0));
        Await.until("the semaphore answers on the new master", () -> {
            try {
                semaphore.release();
                return true;
            } catch (SynchronizerUnavailableException e) {
                return false;
            }
        });
        latch.countDown();

        assertTrue(permitWaiter.get(), "the permit waiter got the permit");
        assertTrue(latchWaiter.get(), "the latch waiter saw zero");
        b.semaphore(name).release();
    }

    private RedisSynchronizers client(Queue<LostHold> reported) {
        return opened.add(RedisSynchronizers.builder().cluster(cluster.seedUris().toArray(String[]::new))
                .keyPrefix(prefix).lease(LEASE).commandTimeout(Duration.ofSeconds(2))
                .lostHoldListener(reported::add, Runnable::run).build());
    }
}
