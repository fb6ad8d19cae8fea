package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every synchronizer works on Redis 6.2 configured with {@code lua-replicate-commands no}, where a
 * script that calls {@code TIME} and then writes fails unless it switched to effects replication
 * first. Runs on the bundled 6.2 binary.
 */
@Tag("redis")
class ScriptsOnRedis62Test {

    private static RedisServer server;
    private final Opened opened = new Opened();

    @BeforeAll
    static void start() {
        server = RedisServers.start(RedisServers.Options.defaults().bundled().managed()
                .args("--lua-replicate-commands", "no"));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void close() throws Exception {
        opened.closeAll();
    }

    /** One operation of every kind, and a watchdog tick over a hold of each. */
    @Test
    void everySynchronizer_luaReplicateCommandsOff_works() throws Exception {
        assumeTrue(server.version().startsWith("6.2"), "the bundled binary is Redis 6.2 here: " + server.version());
        List<LostHold> lost = new CopyOnWriteArrayList<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix("r62")
                .lease(Duration.ofSeconds(30)).lostHoldListener(lost::add).build());
        DistributedLock lock = client.lock("lock");
        DistributedLock fair = client.fairLock("fair");
        DistributedReadWriteLock readWrite = client.readWriteLock("rw");
        DistributedSemaphore semaphore = client.semaphore("semaphore");
        DistributedCountDownLatch latch = client.countDownLatch("latch");

        lock.lock();
        fair.lock();
        readWrite.readLock().lock();
        assertTrue(semaphore.trySetPermits(2));
        semaphore.acquire();
        assertTrue(semaphore.tryAcquire());
        RedisInternals.renewNow(client);
        assertEquals(List.of(), lost, "every hold renewed");
        semaphore.release(2);
        readWrite.readLock().unlock();
        assertTrue(readWrite.writeLock().tryLock(5, TimeUnit.SECONDS));
        readWrite.writeLock().unlock();
        fair.unlock();
        lock.unlock();
        assertTrue(latch.trySetCount(1));
        latch.countDown();
        assertTrue(latch.await(5, TimeUnit.SECONDS));
        assertEquals(2, semaphore.availablePermits());
    }

    /**
     * A condition on 6.2 (classic Pub/Sub, effects replication switched on by each script): a
     * waiter in one client registered, renewed by a watchdog tick, signalled from another, and back
     * with the lock.
     */
    @Test
    void condition_luaReplicateCommandsOff_signalReachesTheWaiter() throws Exception {
        assumeTrue(server.version().startsWith("6.2"), "the bundled binary is Redis 6.2 here: " + server.version());
        RedisSynchronizers waiting = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix("r62c")
                .lease(Duration.ofSeconds(30)).build());
        RedisSynchronizers signalling = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix("r62c")
                .lease(Duration.ofSeconds(30)).build());
        DistributedLock lock = waiting.lock("cond");
        Condition condition = lock.newCondition();
        DistributedLock other = signalling.lock("cond");
        Condition otherCondition = other.newCondition();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        Background<Boolean> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                condition.await();
                return lock.isHeldByCurrentThread();
            } finally {
                lock.unlock();
            }
        });
        Await.until("it waits", () -> admin.zcard("r62c:lock:{cond}:cond:0:queue") == 1);
        RedisInternals.renewNow(waiting);
        other.lock();
        try {
            otherCondition.signal();
        } finally {
            other.unlock();
        }
        assertTrue(waiter.get());
    }
}
