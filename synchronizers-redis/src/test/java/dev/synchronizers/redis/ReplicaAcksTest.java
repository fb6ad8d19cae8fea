package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * {@code replicaAcks} on a master with one replica: acquisitions that wait for a replica that the
 * test stalls (SIGSTOP) must not hold up the renewals and releases of holds already taken, and a
 * wait whose tries fall short pauses between them.
 */
class ReplicaAcksTest {

    private final Opened opened = new Opened();
    private RedisServer master;
    private RedisServer replica;
    private String prefix;
    private String name;

    @BeforeEach
    void start(TestInfo test) throws Exception {
        prefix = "ra-" + UUID.randomUUID().toString().substring(0, 8);
        name = test.getTestMethod().orElseThrow().getName();
        master = opened.add(RedisServers.start(RedisServers.Options.defaults().managed()));
        replica = opened.add(RedisServers.start(RedisServers.Options.defaults().managed()
                .args("--replicaof", master.host(), Integer.toString(master.port()))));
        Await.until("the replica is in sync with the master", () -> replica.info("replication")
                .contains("master_link_status:up") && master.info("replication").contains("connected_slaves:1"));
    }

    @AfterEach
    void stop() throws Exception {
        if (replica != null && replica.isRunning()) {
            replica.resume();
        }
        opened.closeAll();
    }

    /**
     * A hold taken while the replica answered, then the replica stalls and four threads keep
     * retrying {@code tryLock()} on another name, each try falling short of the acknowledgement:
     * the hold's renewals do not wait behind those tries' {@code WAIT}s, so across nine watchdog
     * ticks (three leases) it is never reported lost, and its {@code unlock()} succeeds.
     */
    @Test
    @Tag("fault")
    void renewals_replicaStalledWhileFourThreadsRetryAcquisitions_healthyHoldKept() throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(master.uri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(3)).commandTimeout(Duration.ofSeconds(10))
                .replicaAcks(1, Duration.ofSeconds(1)).meterRegistry(registry)
                .lostHoldListener(lost::add, Runnable::run).build());
        DistributedLock held = client.lock(name + "-held");
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch retriesDone = new CountDownLatch(1);
        Background<Boolean> holder = Background.start("holder", () -> {
            held.lock();
            holding.countDown();
            retriesDone.await();
            held.unlock();
            return true;
        });
        assertTrue(holding.await(30, TimeUnit.SECONDS), "the holder took the lock while the replica answered");

        replica.pause();
        List<Background<Integer>> retriers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            DistributedLock contended = client.lock(name + "-" + t);
            retriers.add(Background.start("retrier-" + t, () -> {
                int tries = 0;
                while (!stop.get()) {
                    try {
                        if (contended.tryLock()) {
                            contended.unlock();
                        }
                    } catch (RuntimeException e) {
                        // Not the point here: a try that did not get its answer in time.
                    }
                    tries++;
                }
                return tries;
            }));
        }
        Await.until("a try fell short of the acknowledgement", () -> shortAcquisitions(registry) > 0);
        long ticksBefore = ticks(registry);
        try {
            Await.until("nine watchdog ticks passed, or the hold was reported lost",
                    () -> !lost.isEmpty() || ticks(registry) - ticksBefore >= 9);
            assertEquals(List.of(), List.copyOf(lost), "no hold reported lost");
        } finally {
            stop.set(true);
            for (Background<Integer> retrier : retriers) {
                retrier.get();
            }
            replica.resume();
            retriesDone.countDown();
        }
        assertTrue(holder.get(), "the holder's unlock() succeeded");
        assertEquals(List.of(), List.copyOf(lost), "no hold reported lost");
    }

    /**
     * Asking for two replicas of one: every try falls short. A timed wait does not try again at
     * once after each: it pauses the acknowledgement timeout after the first short try, twice that
     * after the second, and so on. Each try takes at least the timeout too, since {@code WAIT}
     * blocks that long on the server, so the tries that fit in a 3 s wait are at most five
     * (5 tries and 4 pauses take at least 0.5 + 1.5 s; a sixth would start after 0.5 + 3.1 s,
     * and a wait does not try again once its time is up). A slower machine fits fewer, never
     * more. Without the pauses, 15 fit on the machine this was written on.
     */
    @Test
    void timedWait_everyTryShortOfAcknowledgements_pausesLongerAfterEachTry() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(master.uri()).keyPrefix(prefix)
                .replicaAcks(2, Duration.ofMillis(100)).meterRegistry(registry).build());
        RedisSynchronizers plain = opened.add(RedisSynchronizers.builder().uri(master.uri()).keyPrefix(prefix)
                .build());

        assertFalse(client.lock(name).tryLock(3, TimeUnit.SECONDS));
        double lockTries = shortAcquisitions(registry);
        assertTrue(plain.semaphore(name).trySetPermits(1));
        assertFalse(client.semaphore(name).tryAcquire(3, TimeUnit.SECONDS));
        double semaphoreTries = shortAcquisitions(registry) - lockTries;

        assertTrue(lockTries >= 1 && lockTries <= 5, "lock tries in 3 s: " + lockTries);
        assertTrue(semaphoreTries >= 1 && semaphoreTries <= 5, "semaphore tries in 3 s: " + semaphoreTries);
        assertFalse(plain.lock(name).isLocked(), "every short hold was given back");
        assertEquals(1, plain.semaphore(name).availablePermits(), "every short grant was given back");
    }

    /**
     * close() while a timed tryLock() pauses between two tries that fell short: the caller fails at
     * once with the closed client's IllegalStateException, as a waiter that sleeps does, instead of
     * sleeping out the pause (here 50 s: the acknowledgement timeout after the first short try).
     * Every try falls short without waiting for the replica: its fixed lease (1 ms) has run out
     * before the hold is written again, since the proxy delays every packet by 5 ms. Before the
     * fix, the caller was still pausing 30 s after close().
     */
    @Test
    void close_whileATimedWaitPausesAfterAShortTry_failsTheCallerAtOnce() throws Exception {
        FaultProxy proxy = opened.add(FaultProxy.start(master.port()));
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(60)).replicaAcks(1, Duration.ofSeconds(50)).build());
        proxy.delay(Duration.ofMillis(5));
        DistributedLock lock = client.lock(name);
        Background<Boolean> caller = Background.start("caller", () -> lock.tryLock(600_000, 1, TimeUnit.MILLISECONDS));
        Await.until("the caller pauses after a short try",
                () -> LockSupport.getBlocker(caller.thread()) instanceof Machinery);

        client.close();

        Throwable failure = caller.failure();
        assertInstanceOf(IllegalStateException.class, failure, "the caller failed with " + failure);
        assertTrue(failure.getMessage().contains("closed"), "the client's own exception: " + failure);
    }

    /**
     * Five timed waits on five names at once, every try short of acknowledgements (two replicas
     * asked, one there): their checks queue on the one side connection, a 1 s WAIT each, so the
     * later ones get their answer after the 2 s command timeout although Redis answers everything.
     * That is a short try like any other: each wait returns false when its time is up. Before the
     * fix, the waits whose check was far enough back in the queue threw
     * SynchronizerUnavailableException, as if Redis could not be reached.
     */
    @Test
    void timedWaits_checksQueuedPastTheCommandTimeout_returnFalseInsteadOfUnavailable() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(master.uri()).keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(2)).replicaAcks(2, Duration.ofSeconds(1)).build());
        List<Background<Boolean>> waits = new ArrayList<>();
        for (int t = 0; t < 5; t++) {
            DistributedLock lock = client.lock(name + "-" + t);
            waits.add(Background.start("wait-" + t, () -> lock.tryLock(4, TimeUnit.SECONDS)));
        }
        List<Object> outcomes = new ArrayList<>();
        for (Background<Boolean> wait : waits) {
            try {
                outcomes.add(wait.get());
            } catch (java.util.concurrent.ExecutionException e) {
                outcomes.add(e.getCause());
            }
        }
        assertEquals(List.of(false, false, false, false, false), outcomes, "each wait's outcome");
    }

    private static long ticks(SimpleMeterRegistry registry) {
        Timer tick = registry.find("synchronizers.watchdog.tick").timer();
        return tick == null ? 0 : tick.count();
    }

    private static double shortAcquisitions(SimpleMeterRegistry registry) {
        Counter counter = registry.find("synchronizers.replica.acks.short").tag("call", "acquire").counter();
        return counter == null ? 0 : counter.count();
    }
}
