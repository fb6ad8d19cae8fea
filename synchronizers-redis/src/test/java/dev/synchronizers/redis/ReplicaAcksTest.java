package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.MasterReplica;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code replicaAcks} on a master with one replica: a wait whose tries fall short of the
 * acknowledgements pauses longer after each, fails at once when the client is closed meanwhile, and
 * ends as a short try, not as Redis unreachable, when its checks queue past the command timeout.
 * With the replica stalled: {@code fault.ReplicaStallTest}.
 */
@ExtendWith(SynchronizersExtension.class)
class ReplicaAcksTest {

    private final Opened opened;
    private final String prefix;
    private final String name;
    private RedisServer master;

    ReplicaAcksTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    @BeforeEach
    void start() {
        master = MasterReplica.start(opened).master();
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

    /**
     * With lock caching, the take of the lock in Redis as the client's cache is acknowledged like
     * any acquisition: one WAIT (after the cache's renewal, on the side connection); the cached
     * re-takes after it write nothing and send no WAIT.
     */
    @Test
    void lockCaching_cacheTakeAcknowledgedOnceAndReTakesSendNoWait() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(master.uri()).keyPrefix(prefix)
                .replicaAcks(1, Duration.ofSeconds(1)).lockCaching(true).build());
        DistributedLock lock = client.lock(name);
        lock.lock();   // loads the scripts, so that the counts below are one cache's
        lock.unlock();
        client.lock(name + "-warm").lock(1, TimeUnit.MINUTES);
        client.lock(name + "-warm").unlock();
        var admin = opened.commands(master.uri());
        admin.configResetstat();

        DistributedLock second = client.lock(name + "-second");
        second.lock();
        long first = second.fencingToken();
        second.unlock();
        for (int i = 0; i < 10; i++) {
            second.lock();
            assertTrue(second.fencingToken() > first);
            first = second.fencingToken();
            second.unlock();
        }

        String stats = admin.info("commandstats");
        assertEquals(1, RedisState.calls(stats, "wait"), () -> "one WAIT, for the cache's take: " + stats);
    }

    /**
     * With lock caching and more replicas asked than exist, the cache taken in Redis falls short:
     * it is given back at once, the lock is not acquired, and nothing stays held. Before the fix,
     * the cache take was never checked, and tryLock() returned true.
     */
    @Test
    void lockCaching_moreReplicasThanExist_cacheGivenBackAndNotAcquired() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(master.uri()).keyPrefix(prefix)
                .replicaAcks(2, Duration.ofMillis(100)).lockCaching(true).build());
        RedisSynchronizers plain = opened.add(RedisSynchronizers.builder().uri(master.uri()).keyPrefix(prefix)
                .build());
        DistributedLock lock = client.lock(name);

        assertFalse(lock.tryLock(), "acquired although one replica of the two asked has it");
        assertFalse(lock.tryLock(300, TimeUnit.MILLISECONDS));
        assertFalse(lock.isHeldByCurrentThread());
        assertFalse(plain.lock(name).isLocked(), "the unacknowledged cache was given back");
        assertTrue(plain.lock(name).tryLock(), "another client without the requirement takes the lock");
        plain.lock(name).unlock();
    }

    private static double shortAcquisitions(SimpleMeterRegistry registry) {
        Counter counter = registry.find("synchronizers.replica.acks.short").tag("call", "acquire").counter();
        return counter == null ? 0 : counter.count();
    }
}
