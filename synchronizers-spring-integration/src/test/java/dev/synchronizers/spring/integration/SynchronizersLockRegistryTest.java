package dev.synchronizers.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The behaviours that Spring Integration's own {@code RedisLockRegistryTests} check, on
 * {@link SynchronizersLockRegistry}, plus what it adds: the reentrant tryLock that asks the store,
 * lost holds, fixed and renewed leases, unavailability. A second client plays another process; an
 * admin connection reads and shortens TTLs, so no test sleeps through a lease it could cut short.
 */
@Tag("redis")
class SynchronizersLockRegistryTest {

    private static final long WAIT_SECONDS = 30;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static RedisClient adminClient;
    private static StatefulRedisConnection<String, String> adminConnection;
    private static RedisCommands<String, String> admin;

    private final String prefix = "si-" + UUID.randomUUID();
    private final BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
    private final List<RedisSynchronizers> clients = new ArrayList<>();
    private final ExecutorService executor = Executors.newCachedThreadPool();

    @BeforeAll
    static void connectAdmin() {
        adminClient = RedisClient.create(redis.server().uri());
        adminConnection = adminClient.connect();
        admin = adminConnection.sync();
    }

    @AfterAll
    static void closeAdmin() {
        adminConnection.close();
        adminClient.shutdown();
    }

    @AfterEach
    void closeClients() {
        executor.shutdownNow();
        clients.forEach(RedisSynchronizers::close);
    }

    private RedisSynchronizers client(RedisSynchronizers.Builder builder) {
        RedisSynchronizers client = builder.keyPrefix(prefix).lostHoldListener(lost::add).build();
        clients.add(client);
        return client;
    }

    private RedisSynchronizers client() {
        return client(RedisSynchronizers.builder().uri(redis.server().uri()));
    }

    private SynchronizersLockRegistry registry() {
        return new SynchronizersLockRegistry(client());
    }

    /** The key of {@code lock(name)}, as synchronizers-redis names it (LockKeys). */
    private String key(String name) {
        return prefix + ":lock:{" + name + "}";
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting until " + what);
            Thread.sleep(5);
        }
    }

    private <T> T onOtherThread(java.util.concurrent.Callable<T> task) throws Exception {
        return executor.submit(task).get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /* --------------- obtain, lock, unlock --------------- */

    @Test
    void lock_holdsInTheStore_untilUnlocked() {
        SynchronizersLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        lock.lock();
        try {
            assertEquals(1, admin.exists(key("foo")));
        } finally {
            lock.unlock();
        }
        assertEquals(0, admin.exists(key("foo")));
    }

    /** "one lock object per (registry, key)" */
    @Test
    void obtain_returnsOneObjectPerKey() {
        SynchronizersLockRegistry registry = registry();
        SynchronizersLockRegistry other = registry();
        assertSame(registry.obtain("foo"), registry.obtain("foo"));
        assertNotSame(registry.obtain("foo"), other.obtain("foo"));
        assertNotEquals(registry.obtain("foo"), other.obtain("foo"));
        assertThrows(NullPointerException.class, () -> registry.obtain(null));
        assertThrows(IllegalArgumentException.class, () -> registry.obtain(""));
    }

    /**
     * "A key is a {@code String}": a key of another type is refused with IllegalArgumentException
     * naming the argument, as Spring's RedisLockRegistry refuses it, by every method that takes a
     * key, and no lock object is made for it.
     */
    @Test
    void obtain_keyThatIsNotAString_throwsIllegalArgumentNamingIt() {
        SynchronizersLockRegistry registry = registry();
        for (Executable call : List.<Executable>of(() -> registry.obtain(42), () -> registry.renewLock(42),
                () -> registry.renewLock(42, Duration.ofSeconds(5)), () -> registry.fencingToken(42),
                () -> registry.executeLocked(42, () -> { }))) {
            IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class, call);
            assertTrue(thrown.getMessage().contains("lockKey") && thrown.getMessage().contains("42")
                    && thrown.getMessage().contains("java.lang.Integer"), thrown.getMessage());
        }
        assertEquals("SynchronizersLockRegistry[non-fair, 0 locks]", registry.toString());
    }

    /** RedisLockRegistryTests.testReentrantLock: the store sees the first lock and the last unlock. */
    @Test
    void reentrantLock_countsLocally_andReleasesOnTheLastUnlock() {
        Lock lock = registry().obtain("foo");
        lock.lock();
        lock.lock();
        lock.lock();
        lock.unlock();
        lock.unlock();
        assertEquals(1, admin.exists(key("foo")), "still held after two of three unlocks");
        lock.unlock();
        assertEquals(0, admin.exists(key("foo")));
        assertThrows(IllegalStateException.class, lock::unlock, "no holds left");
    }

    /** RedisLockRegistryTests.testReentrantLockInterruptibly */
    @Test
    void reentrantLockInterruptibly() throws InterruptedException {
        Lock lock = registry().obtain("foo");
        lock.lockInterruptibly();
        lock.lockInterruptibly();
        lock.unlock();
        assertEquals(1, admin.exists(key("foo")));
        lock.unlock();
        assertEquals(0, admin.exists(key("foo")));
    }

    /** RedisLockRegistryTests.testTwoLocks */
    @Test
    void twoKeys_areIndependent() throws Exception {
        SynchronizersLockRegistry registry = registry();
        Lock foo = registry.obtain("foo");
        Lock bar = registry.obtain("bar");
        foo.lock();
        assertTrue(onOtherThread(() -> {
            boolean got = bar.tryLock();
            if (got) {
                bar.unlock();
            }
            return got;
        }));
        foo.unlock();
    }

    /** RedisLockRegistryTests.testEquals: registries exclude each other, even on one thread. */
    @Test
    void anotherRegistry_sameName_isExcluded_evenOnTheSameThread() throws InterruptedException {
        RedisSynchronizers client = client();
        SynchronizersLockRegistry one = new SynchronizersLockRegistry(client);
        SynchronizersLockRegistry two = new SynchronizersLockRegistry(client);
        Lock first = one.obtain("foo");
        Lock second = two.obtain("foo");
        first.lock();
        assertFalse(second.tryLock());
        assertFalse(second.tryLock(50, TimeUnit.MILLISECONDS));
        first.unlock();
        assertTrue(second.tryLock());
        second.unlock();
    }

    /** RedisLockRegistryTests.testTwoThreadsSecondFailsToGetLock and testTwoThreadsWrongOneUnlocks */
    @Test
    void secondThread_failsToTryLock_andCannotUnlock() throws Exception {
        Lock lock = registry().obtain("foo");
        lock.lockInterruptibly();
        assertFalse(onOtherThread(() -> lock.tryLock(200, TimeUnit.MILLISECONDS)));
        IllegalStateException notOwner = onOtherThread(() -> assertThrows(IllegalStateException.class, lock::unlock));
        assertTrue(notOwner.getMessage().contains("does not own"), notOwner.getMessage());
        assertEquals(1, admin.exists(key("foo")), "the owner's hold is unchanged");
        lock.unlock();
    }

    /** RedisLockRegistryTests.testTwoThreads: the second thread gets the lock once the first unlocks. */
    @Test
    void secondThread_getsTheLock_whenTheFirstUnlocks() throws Exception {
        Lock lock = registry().obtain("foo");
        lock.lock();
        CountDownLatch asking = new CountDownLatch(1);
        Future<Boolean> second = executor.submit(() -> {
            asking.countDown();
            lock.lockInterruptibly();
            try {
                return admin.exists(key("foo")) == 1;
            } finally {
                lock.unlock();
            }
        });
        assertTrue(asking.await(WAIT_SECONDS, TimeUnit.SECONDS));
        lock.unlock();
        assertTrue(second.get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    /** RedisLockRegistryTests.testTwoThreadsDifferentRegistries, and twoRedisLockRegistryTest: two clients. */
    @Test
    void twoClients_mutualExclusion_andHandOver() throws Exception {
        Lock mine = registry().obtain("foo");
        Lock theirs = registry().obtain("foo");
        mine.lock();
        CountDownLatch asking = new CountDownLatch(1);
        Future<Boolean> other = executor.submit(() -> {
            assertFalse(theirs.tryLock());
            asking.countDown();
            theirs.lock();
            theirs.unlock();
            return true;
        });
        assertTrue(asking.await(WAIT_SECONDS, TimeUnit.SECONDS));
        mine.unlock();
        assertTrue(other.get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    /** RedisLockRegistryTests.testLockInterruptibly: an interrupted waiter gives up, holding nothing. */
    @Test
    void lockInterruptibly_interruptedWhileWaiting_holdsNothing() throws Exception {
        SynchronizersLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        Lock fromAnotherClient = registry().obtain("foo");
        fromAnotherClient.lock();
        CountDownLatch waiting = new CountDownLatch(1);
        Future<Throwable> waiter = executor.submit(() -> {
            waiting.countDown();
            try {
                lock.lockInterruptibly();
                lock.unlock();
                return null;
            } catch (InterruptedException e) {
                return e;
            }
        });
        assertTrue(waiting.await(WAIT_SECONDS, TimeUnit.SECONDS));
        waiter.cancel(true);   // interrupts the waiter
        fromAnotherClient.unlock();
        // Nothing was left held by the interrupted waiter: this thread takes the lock at once.
        await("the interrupted waiter left", () -> {
            boolean got = lock.tryLock();
            if (got) {
                lock.unlock();
            }
            return got;
        });
    }

    /** "lock() waits uninterruptibly": an interrupt on entry is kept and the lock is taken. */
    @Test
    void lock_whenInterrupted_stillTakesTheLock_andKeepsTheInterruptStatus() throws Exception {
        Lock lock = registry().obtain("foo");
        boolean[] outcome = onOtherThread(() -> {
            Thread.currentThread().interrupt();
            lock.lock();
            boolean interrupted = Thread.interrupted();
            boolean stored = admin.exists(key("foo")) == 1;
            lock.unlock();
            return new boolean[] {interrupted, stored};
        });
        assertTrue(outcome[0], "interrupt status kept");
        assertTrue(outcome[1], "held in the store");
    }

    /* --------------- leases --------------- */

    /** RedisLockRegistryTests.testLockWithCustomTtl: lock(ttl) is a fixed lease of ttl, by the server's clock. */
    @Test
    void lockWithTtl_isAFixedLease() {
        DistributedLock lock = registry().obtain("foo");
        lock.lock(Duration.ofMinutes(7));
        long pttl = admin.pttl(key("foo"));
        assertTrue(pttl > 360_000 && pttl <= 420_000, "lease of 7 min: " + pttl);
        lock.unlock();
    }

    /** "Re-entering a held lock leaves its lease as it is" */
    @Test
    void reentering_withATtl_leavesTheLeaseAsItIs() throws InterruptedException {
        DistributedLock lock = registry().obtain("foo");
        lock.lock(Duration.ofMinutes(7));
        lock.lock(Duration.ofSeconds(5));
        assertTrue(lock.tryLock(Duration.ZERO, Duration.ofSeconds(5)));
        long pttl = admin.pttl(key("foo"));
        assertTrue(pttl > 360_000, "still the first lease: " + pttl);
        lock.unlock();
        lock.unlock();
        lock.unlock();
        assertEquals(0, admin.exists(key("foo")));
    }

    /** RedisLockRegistryTests.testTryLockWithCustomTtl */
    @Test
    void tryLockWithTtl_isAFixedLease() throws InterruptedException {
        DistributedLock lock = registry().obtain("foo");
        assertTrue(lock.tryLock(Duration.ZERO, Duration.ofMinutes(3)));
        long pttl = admin.pttl(key("foo"));
        assertTrue(pttl > 120_000 && pttl <= 180_000, "lease of 3 min: " + pttl);
        lock.unlock();
    }

    /** RedisLockRegistryTests.testRenewalOnExpire: a plain lock outlives several client leases. */
    @Test
    void plainLock_isRenewedByTheWatchdog_pastItsLease() throws InterruptedException {
        RedisSynchronizers client = client(RedisSynchronizers.builder().uri(redis.server().uri())
                .lease(Duration.ofMillis(300)));
        Lock lock = new SynchronizersLockRegistry(client).obtain("foo");
        assertTrue(lock.tryLock());
        long[] lowest = {Long.MAX_VALUE};
        int[] renewals = {0};
        // Renewed: the TTL goes back up, again and again, well past the first lease.
        await("the watchdog renewed the hold three times", () -> {
            long pttl = admin.pttl(key("foo"));
            assertTrue(pttl > 0, "the hold expired: " + pttl);
            if (pttl > lowest[0] + 50) {
                renewals[0]++;
            }
            lowest[0] = pttl;
            return renewals[0] >= 3;
        });
        lock.unlock();
        assertTrue(lost.isEmpty(), "nothing lost: " + lost);
    }

    /** RedisLockRegistryTests.testUnlockAfterLockStatusHasBeenExpired / testExceptionOnExpire */
    @Test
    void unlock_afterTheTtlRanOut_throwsConcurrentModification_withTheLostHold() throws Exception {
        DistributedLock lock = registry().obtain("foo");
        lock.lock(Duration.ofMinutes(5));
        admin.pexpire(key("foo"), 1);   // the lease runs out, as the server's clock would end it
        await("the key expired", () -> admin.exists(key("foo")) == 0);

        ConcurrentModificationException e = assertThrows(ConcurrentModificationException.class, lock::unlock);
        assertInstanceOf(LostHoldException.class, e.getCause());
        assertThrows(IllegalStateException.class, lock::unlock, "nothing left to unlock");
        assertTrue(lock.tryLock(), "the lock can be taken again");
        lock.unlock();
    }

    /** RedisLockRegistryTests.testExpireTwoRegistries */
    @Test
    void expiredHold_letsTheOtherRegistryIn_andItsOwnerNoLongerHoldsIt() throws Exception {
        DistributedLock one = registry().obtain("foo");
        DistributedLock two = registry().obtain("foo");
        assertTrue(one.tryLock(Duration.ZERO, Duration.ofMinutes(5)));
        assertFalse(two.tryLock());
        admin.pexpire(key("foo"), 1);
        await("the key expired", () -> admin.exists(key("foo")) == 0);
        assertTrue(two.tryLock());
        assertFalse(one.tryLock(), "the reentrant tryLock finds its hold gone");
        assertThrows(ConcurrentModificationException.class, one::unlock);
        two.unlock();
    }

    /* --------------- renewLock --------------- */

    /** RedisLockRegistryTests.testLockRenew / testLockRenewLockNotOwned */
    @Test
    void renewLock_needsTheCurrentThreadsHold() throws Exception {
        SynchronizersLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        assertThrows(IllegalStateException.class, () -> registry.renewLock("foo"), "not held");
        assertThrows(IllegalStateException.class, () -> registry.renewLock("never-obtained"));
        assertTrue(lock.tryLock());
        registry.renewLock("foo");   // a watchdog hold: a check that the store still has it
        onOtherThread(() -> assertThrows(IllegalStateException.class, () -> registry.renewLock("foo")));
        lock.unlock();
    }

    /** RedisLockRegistryTests.testLockRenewWithCustomTtl, without sleeping through the short ttl. */
    @Test
    void renewLockWithTtl_restartsTheLease() throws InterruptedException {
        SynchronizersLockRegistry registry = registry();
        DistributedLock lock = registry.obtain("foo");
        assertTrue(lock.tryLock(Duration.ofMillis(100), Duration.ofMillis(500)));
        registry.renewLock("foo", Duration.ofMinutes(2));
        long pttl = admin.pttl(key("foo"));
        assertTrue(pttl > 60_000 && pttl <= 120_000, "renewed to 2 min: " + pttl);

        registry.renewLock("foo");   // the ttl it was last given
        pttl = admin.pttl(key("foo"));
        assertTrue(pttl > 60_000 && pttl <= 120_000, "renewed to 2 min again: " + pttl);
        lock.unlock();
    }

    /** "a hold that the watchdog renewed is no longer renewed" after renewLock(key, ttl) */
    @Test
    void renewLockWithTtl_ofAWatchdogHold_makesItAFixedLease() throws InterruptedException {
        SynchronizersLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        lock.lock();
        registry.renewLock("foo", Duration.ofMinutes(3));
        long pttl = admin.pttl(key("foo"));
        assertTrue(pttl > 120_000 && pttl <= 180_000, "fixed lease of 3 min: " + pttl);
        admin.pexpire(key("foo"), 1);
        await("the key expired", () -> admin.exists(key("foo")) == 0);
        assertThrows(IllegalStateException.class, () -> registry.renewLock("foo"), "lost");
        assertThrows(ConcurrentModificationException.class, lock::unlock);
    }

    /* --------------- the reentrant tryLock asks the store --------------- */

    @Test
    void reentrantTryLock_ofALostHold_isFalseAtOnce_andTheOwedUnlocksThrow() throws Exception {
        SynchronizersLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        Lock theirs = registry().obtain("foo");
        lock.lock();
        lock.lock();
        assertTrue(lock.tryLock(), "held: the store has it");
        lock.unlock();

        assertTrue(client().lock("foo").forceUnlock(), "a third client forces it");
        assertTrue(theirs.tryLock(), "another client takes it");

        assertFalse(lock.tryLock(10, TimeUnit.SECONDS), "lost: false, without waiting for the new holder");
        LostHold reported = lost.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals("foo", reported.name(), "the listener was told");

        // The thread may take the lock again while it still owes its two unlocks; the new hold pairs as usual.
        theirs.unlock();
        assertTrue(lock.tryLock());
        assertEquals(1, admin.exists(key("foo")));
        lock.unlock();
        assertEquals(0, admin.exists(key("foo")), "the new hold released");
        for (int i = 0; i < 2; i++) {
            ConcurrentModificationException e = assertThrows(ConcurrentModificationException.class, lock::unlock);
            assertInstanceOf(LostHoldException.class, e.getCause());
        }
        assertThrows(IllegalStateException.class, lock::unlock, "nothing owed any more");
    }

    @Test
    void reentrantLock_ofAHoldKnownLost_takesANewHold() throws Exception {
        SynchronizersLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        lock.lock();
        long first = registry.fencingToken("foo");
        assertTrue(client().lock("foo").forceUnlock());
        assertFalse(lock.tryLock(), "now known lost");
        lock.lock();
        assertTrue(registry.fencingToken("foo") > first, "a new hold, a new token");
        lock.unlock();
        assertThrows(ConcurrentModificationException.class, lock::unlock, "the lost one");
    }

    @Test
    void fencingToken_growsWithEachHold_andNeedsTheHold() throws Exception {
        SynchronizersLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        assertThrows(IllegalStateException.class, () -> registry.fencingToken("foo"));
        lock.lock();
        long first = registry.fencingToken("foo");
        lock.lock();
        assertEquals(first, registry.fencingToken("foo"), "re-entering keeps the token");
        onOtherThread(() -> assertThrows(IllegalStateException.class, () -> registry.fencingToken("foo")));
        lock.unlock();
        lock.unlock();
        lock.lock();
        assertTrue(registry.fencingToken("foo") > first);
        lock.unlock();
    }

    /* --------------- expireUnusedOlderThan --------------- */

    /** RedisLockRegistryTests.testThreadLocalListLeaks, noSecondLockOnEviction */
    @Test
    void expireUnused_dropsOnlyUnheldLocks_andADroppedObjectStillExcludes() throws Exception {
        SynchronizersLockRegistry registry = registry();
        Lock held = registry.obtain("held");
        Lock unused = registry.obtain("unused");
        held.lock();
        registry.expireUnusedOlderThan(-1000);
        assertSame(held, registry.obtain("held"), "a held lock is never dropped");
        assertNotSame(unused, registry.obtain("unused"), "an unused one is");

        held.unlock();
        registry.expireUnusedOlderThan(60_000);
        assertSame(held, registry.obtain("held"), "used less than a minute ago");
        registry.expireUnusedOlderThan(-1000);
        Lock fresh = registry.obtain("held");
        assertNotSame(held, fresh);

        // A thread that kept the dropped object still excludes users of the new one (in the store).
        held.lock();
        assertFalse(onOtherThread(() -> fresh.tryLock()));
        held.unlock();
        assertTrue(onOtherThread(() -> {
            boolean got = fresh.tryLock();
            fresh.unlock();
            return got;
        }));
    }

    /* --------------- failures and bad input --------------- */

    @Test
    void storeUnavailable_duringAcquire_isCannotAcquireLockException() throws Exception {
        RedisServer server = redis.startManaged();
        RedisSynchronizers client = client(RedisSynchronizers.builder().uri(server.uri())
                .commandTimeout(Duration.ofMillis(300)));
        DistributedLock lock = new SynchronizersLockRegistry(client).obtain("foo");
        server.pause();
        try {
            CannotAcquireLockException e = assertThrows(CannotAcquireLockException.class, lock::lock);
            assertInstanceOf(SynchronizerUnavailableException.class, e.getCause());
            assertThrows(CannotAcquireLockException.class, lock::tryLock);
            assertThrows(CannotAcquireLockException.class, () -> lock.tryLock(Duration.ZERO, Duration.ofSeconds(5)));
        } finally {
            server.resume();
        }
        // Nothing was left held locally: another thread takes it once the store answers.
        assertTrue(onOtherThread(() -> {
            boolean got = lock.tryLock(WAIT_SECONDS, TimeUnit.SECONDS);
            lock.unlock();
            return got;
        }));
    }

    @Test
    void storeUnavailable_duringAReentrantTryLock_isCannotAcquireLockException_andKeepsTheHolds() throws Exception {
        RedisServer server = redis.startManaged();
        RedisSynchronizers client = client(RedisSynchronizers.builder().uri(server.uri())
                .commandTimeout(Duration.ofMillis(300)));
        Lock lock = new SynchronizersLockRegistry(client).obtain("foo");
        lock.lock();
        server.pause();
        try {
            assertThrows(CannotAcquireLockException.class, lock::tryLock);
        } finally {
            server.resume();
        }
        lock.unlock();   // the one hold it had
        assertThrows(IllegalStateException.class, lock::unlock);
    }

    @Test
    void badTtl_isRefused_andNothingIsHeld() throws Exception {
        DistributedLock lock = registry().obtain("foo");
        assertThrows(IllegalArgumentException.class, () -> lock.lock(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> lock.tryLock(Duration.ZERO, Duration.ofMillis(-1)));
        assertThrows(NullPointerException.class, () -> lock.lock(null));
        assertThrows(NullPointerException.class, () -> lock.tryLock(null, Duration.ofSeconds(1)));
        assertEquals(0, admin.exists(key("foo")));
        assertTrue(onOtherThread(() -> {
            boolean got = lock.tryLock();
            lock.unlock();
            return got;
        }), "nothing held locally either");
        assertThrows(UnsupportedOperationException.class, lock::newCondition);

        lock.lock();
        assertThrows(IllegalArgumentException.class, () -> lock.lock(Duration.ZERO), "also when re-entering");
        assertThrows(IllegalArgumentException.class, () -> lock.tryLock(Duration.ZERO, Duration.ZERO));
        lock.unlock();
        assertThrows(IllegalStateException.class, lock::unlock, "the refused calls counted no hold");
    }

    /* --------------- destroy --------------- */

    @Test
    void destroy_releasesTheHoldsInTheStore_andTheOwnersUnlockOnlyLocally() throws Exception {
        SynchronizersLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        Lock other = registry.obtain("bar");
        Lock theirs = registry().obtain("foo");
        lock.lock();
        CountDownLatch destroyed = new CountDownLatch(1);
        CountDownLatch holding = new CountDownLatch(1);
        Future<Boolean> owner = executor.submit(() -> {
            other.lock();
            holding.countDown();
            destroyed.await();
            other.unlock();   // only in this JVM: the store's hold was let go
            return true;
        });
        // Once lock() returned, not once the key exists: the store has the hold a moment before
        // lock() returns, and a destroy() in between finds no hold to let go (the owner keeps it).
        assertTrue(holding.await(WAIT_SECONDS, TimeUnit.SECONDS), "the other thread holds bar");
        assertEquals(1, admin.exists(key("bar")));

        registry.destroy();
        assertEquals(0, admin.exists(key("foo")));
        assertEquals(0, admin.exists(key("bar")));
        assertTrue(theirs.tryLock(), "another process need not wait for a lease");
        destroyed.countDown();
        assertTrue(owner.get(WAIT_SECONDS, TimeUnit.SECONDS));

        lock.unlock();
        assertThrows(IllegalStateException.class, lock::unlock);
        assertEquals(1, admin.exists(key("foo")), "their hold is untouched");
        theirs.unlock();
        assertTrue(lock.tryLock(), "the registry stays usable");
        lock.unlock();
    }

    /* --------------- executeLocked, fair registry --------------- */

    @Test
    void executeLocked_runsUnderTheLock() throws Exception {
        SynchronizersLockRegistry registry = registry();
        long stored = registry.executeLocked("foo", () -> admin.exists(key("foo")));
        assertEquals(1, stored);
        assertEquals(0, admin.exists(key("foo")));
    }

    @Test
    void fairRegistry_usesFairLocks_andExcludesAcrossClients() throws Exception {
        SynchronizersLockRegistry fair = SynchronizersLockRegistry.fair(client());
        SynchronizersLockRegistry otherFair = SynchronizersLockRegistry.fair(client());
        Lock lock = fair.obtain("foo");
        Lock theirs = otherFair.obtain("foo");
        lock.lock();
        assertEquals(1, admin.exists(prefix + ":fairlock:{foo}"));
        assertFalse(onOtherThread(() -> theirs.tryLock(100, TimeUnit.MILLISECONDS)));
        CountDownLatch asking = new CountDownLatch(1);
        Future<Long> waiter = executor.submit(() -> {
            asking.countDown();
            theirs.lock();
            try {
                return otherFair.fencingToken("foo");
            } finally {
                theirs.unlock();
            }
        });
        assertTrue(asking.await(WAIT_SECONDS, TimeUnit.SECONDS));
        long mine = fair.fencingToken("foo");
        lock.unlock();
        assertTrue(waiter.get(WAIT_SECONDS, TimeUnit.SECONDS) > mine);
        assertTrue(fair.toString().contains("fair"));
    }
}
