package dev.synchronizers.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.LostHoldException;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.testkit.RedisExtension;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * {@link SynchronizersLockRegistry} over a {@link Redlock} of three standalone servers
 * ({@code new SynchronizersLockRegistry(redlock::lock)}): two clients exclude each other, the
 * reentrant tryLock finds a forced hold lost, and a fixed ttl is a lease on the quorum.
 */
@Tag("topology")
class SynchronizersLockRegistryRedlockTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String PREFIX = "si-redlock-" + UUID.randomUUID();
    private static Redlock one;
    private static Redlock two;
    private static Redlock admin;
    private static final ExecutorService executor = Executors.newCachedThreadPool();

    @BeforeAll
    static void connect() {
        String[] uris = Stream.generate(redis::startManaged).limit(3).map(server -> server.uri())
                .toArray(String[]::new);
        one = Redlock.builder().nodes(uris).keyPrefix(PREFIX).build();
        two = Redlock.builder().nodes(uris).keyPrefix(PREFIX).build();
        admin = Redlock.builder().nodes(uris).keyPrefix(PREFIX).build();
    }

    @AfterAll
    static void disconnect() {
        executor.shutdownNow();
        one.close();
        two.close();
        admin.close();
    }

    @Test
    void twoClients_excludeEachOther_andHandOver() throws Exception {
        Lock mine = new SynchronizersLockRegistry(one::lock).obtain("foo");
        Lock theirs = new SynchronizersLockRegistry(two::lock).obtain("foo");
        mine.lock();
        assertTrue(admin.lock("foo").isLocked());
        CountDownLatch asking = new CountDownLatch(1);
        Future<Boolean> other = executor.submit(() -> {
            assertFalse(theirs.tryLock());
            asking.countDown();
            theirs.lock();
            theirs.unlock();
            return true;
        });
        assertTrue(asking.await(30, TimeUnit.SECONDS));
        mine.unlock();
        assertTrue(other.get(30, TimeUnit.SECONDS));
        assertFalse(admin.lock("foo").isLocked());
    }

    @Test
    void reentrantTryLock_findsAForcedHoldLost() throws Exception {
        Lock lock = new SynchronizersLockRegistry(one::lock).obtain("bar");
        lock.lock();
        assertTrue(lock.tryLock(), "held on the quorum");
        lock.unlock();
        assertTrue(admin.lock("bar").forceUnlock());
        assertFalse(lock.tryLock(), "lost");
        ConcurrentModificationException e = assertThrows(ConcurrentModificationException.class, lock::unlock);
        assertInstanceOf(LostHoldException.class, e.getCause());
    }

    @Test
    void ttl_isAFixedLeaseOnTheQuorum_andRenewLockRestartsIt() throws InterruptedException {
        SynchronizersLockRegistry registry = new SynchronizersLockRegistry(one::lock);
        DistributedLock lock = registry.obtain("baz");
        assertTrue(lock.tryLock(Duration.ZERO, Duration.ofMinutes(5)));
        long lease = admin.lock("baz").snapshot().holders().get(0).leaseRemainingMillis();
        assertTrue(lease > 240_000 && lease <= 300_000, "lease of 5 min: " + lease);
        registry.renewLock("baz", Duration.ofMinutes(10));
        lease = admin.lock("baz").snapshot().holders().get(0).leaseRemainingMillis();
        assertTrue(lease > 540_000, "renewed to 10 min: " + lease);
        lock.unlock();
        assertEquals(0, admin.lock("baz").snapshot().holders().size());
    }
}
