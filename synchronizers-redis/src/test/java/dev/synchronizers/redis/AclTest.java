package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The library under a least-privilege Redis user, as careful operators and managed services set
 * them up: keys and channels under its prefix only, the read, write, scripting, Pub/Sub and
 * connection commands and {@code TIME}, and none in the {@code @dangerous} category (which holds
 * {@code INFO}, {@code KEYS}, {@code CONFIG} ...): the ACL that {@code docs/getting-started.md}
 * gives. Connecting, every synchronizer, wake-ups and the watchdog work for it, on one server and
 * on a Redlock of three. (Connecting asked {@code INFO} for the server's version before, and failed.)
 */
@Tag("redis")
class AclTest {

    /** The ACL user every test connects as (resetchannels: 6.2 starts a user with every channel). */
    private static final String USER = "user app on >app-secret resetchannels ~acl:* &acl:* +@read +@write +@scripting +@pubsub +@connection +time -@dangerous";
    private static final List<RedisServer> SERVERS = new ArrayList<>();

    private final Opened opened = new Opened();

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 3; i++) {
            SERVERS.add(RedisServers.start(RedisServers.Options.defaults().managed().configFile(USER + "\n")));
        }
    }

    @AfterAll
    static void stopServers() {
        SERVERS.forEach(RedisServer::close);
    }

    @AfterEach
    void close() throws Exception {
        opened.closeAll();
    }

    private static String asApp(RedisServer server) {
        return "redis://app:app-secret@" + server.host() + ":" + server.port();
    }

    /** Every synchronizer, with a waiter woken by a release, for a user that may not run INFO. */
    @Test
    void everySynchronizer_userWithoutDangerousCommands_works() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(asApp(SERVERS.get(0)))
                .keyPrefix("acl").lease(Duration.ofSeconds(30)).build());
        DistributedLock lock = client.lock("lock");
        lock.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            boolean got = client.lock("lock").tryLock(20, TimeUnit.SECONDS);
            client.lock("lock").unlock();
            return got;
        });
        dev.synchronizers.fixture.Await.until("the waiter is queued", lock::hasQueuedThreads);
        RedisInternals.renewNow(client);
        lock.unlock();
        assertTrue(waiter.get(), "the waiter was woken and took the lock");

        DistributedLock fair = client.fairLock("fair");
        assertTrue(fair.tryLock());
        fair.unlock();
        DistributedReadWriteLock rw = client.readWriteLock("rw");
        assertTrue(rw.readLock().tryLock());
        rw.readLock().unlock();
        assertTrue(rw.writeLock().tryLock());
        rw.writeLock().unlock();
        DistributedSemaphore semaphore = client.semaphore("semaphore");
        assertTrue(semaphore.trySetPermits(2));
        assertTrue(semaphore.tryAcquire(2));
        semaphore.release(2);
        assertEquals(2, semaphore.availablePermits());
        DistributedCountDownLatch latch = client.countDownLatch("latch");
        assertTrue(latch.trySetCount(1));
        latch.countDown();
        assertTrue(latch.await(5, TimeUnit.SECONDS));
    }

    /** A Redlock whose nodes each know the application only as that user. */
    @Test
    void redlock_userWithoutDangerousCommands_works() {
        Redlock redlock = opened.add(Redlock.builder()
                .nodes(SERVERS.stream().map(AclTest::asApp).toArray(String[]::new))
                .keyPrefix("acl").build());
        DistributedLock lock = redlock.lock("redlock");
        lock.lock();
        assertTrue(lock.fencingToken() > 0);
        RedisInternals.renewNow(redlock);
        assertTrue(lock.isHeldByCurrentThread());
        lock.unlock();
        assertFalse(lock.isLocked());
    }
}
