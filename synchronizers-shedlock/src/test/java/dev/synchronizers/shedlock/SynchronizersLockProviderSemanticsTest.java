package dev.synchronizers.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What {@link SynchronizersLockProvider} adds to ShedLock's suite: lockAtLeastFor kept by the
 * server's clock, no reentrancy, the fencing token of the running task, and the keep-alive modes.
 * A second client plays the other process; an admin connection reads and shortens TTLs, so no test
 * sleeps through a lease it could cut short.
 */
@Tag("redis")
class SynchronizersLockProviderSemanticsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static RedisClient adminClient;
    private static StatefulRedisConnection<String, String> adminConnection;
    private static RedisCommands<String, String> admin;

    private final String prefix = "shedlock-" + UUID.randomUUID();
    private final String name = "job-" + UUID.randomUUID();
    private final BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
    private final List<RedisSynchronizers> clients = new ArrayList<>();

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
        clients.forEach(RedisSynchronizers::close);
    }

    private RedisSynchronizers client(Duration lease) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lease(lease).lostHoldListener(lost::add).build();
        clients.add(client);
        return client;
    }

    private RedisSynchronizers client() {
        return client(Duration.ofSeconds(30));
    }

    /** The key of {@code lock(name)}, as synchronizers-redis names it (LockKeys). */
    private String lockKey() {
        return prefix + ":lock:{" + name + "}";
    }

    private LockConfiguration config(Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting until " + what);
            Thread.sleep(10);
        }
    }

    /* --------------- lock --------------- */

    /** "while it is held, every other lock of the name returns empty, from this provider, another provider or another process" */
    @Test
    void lock_whileHeld_isEmpty_fromThisProviderAndAnotherClient() {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client());
        SynchronizersLockProvider other = new SynchronizersLockProvider(client());
        SimpleLock lock = provider.lock(config(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();

        assertEquals(Optional.empty(), provider.lock(config(Duration.ofMinutes(5), Duration.ZERO)), "not reentrant");
        assertEquals(Optional.empty(), other.lock(config(Duration.ofMinutes(5), Duration.ZERO)));

        lock.unlock();
        other.lock(config(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow().unlock();
    }

    /** "a fixed lease of lockAtMostFor ... it ends by the store's clock" */
    @Test
    void lock_defaultLease_isLockAtMostFor_byTheServersClock() {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client());
        SimpleLock lock = provider.lock(config(Duration.ofMinutes(7), Duration.ZERO)).orElseThrow();

        long pttl = admin.pttl(lockKey());
        assertTrue(pttl > 360_000 && pttl <= 420_000, "lease of lockAtMostFor: " + pttl);
        lock.unlock();
    }

    /* --------------- unlock --------------- */

    /** "When a lock is unlocked, its name stays closed until lockAtLeastUntil by the store's clock" */
    @Test
    void unlock_beforeLockAtLeastUntil_keepsAnotherClientOut_untilItPasses() throws Exception {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client());
        SynchronizersLockProvider other = new SynchronizersLockProvider(client());
        SimpleLock lock = provider.lock(config(Duration.ofMinutes(10), Duration.ofMinutes(10))).orElseThrow();

        lock.unlock();

        long pttl = admin.pttl(lockKey());
        assertTrue(pttl > 300_000 && pttl <= 600_000, "kept closed for the rest of lockAtLeastFor: " + pttl);
        assertEquals(Optional.empty(), other.lock(config(Duration.ofMinutes(5), Duration.ZERO)));
        assertEquals(Optional.empty(), provider.lock(config(Duration.ofMinutes(5), Duration.ZERO)));
        assertThrows(IllegalStateException.class, lock::unlock, "unlocked already");

        // lockAtLeastUntil passing is what opens it: shorten the lease as the server's clock would run it out.
        admin.pexpire(lockKey(), 1);
        await("the server expired the lock", () -> admin.exists(lockKey()) == 0);
        other.lock(config(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow().unlock();
    }

    /** "or releases it now if that has passed" */
    @Test
    void unlock_afterLockAtLeastUntil_releasesAtOnce() {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client());
        LockConfiguration past = new LockConfiguration(
                ClockProvider.now().minusSeconds(60), name, Duration.ofMinutes(5), Duration.ofSeconds(30));
        SimpleLock lock = provider.lock(past).orElseThrow();

        lock.unlock();

        assertEquals(0, admin.exists(lockKey()));
        new SynchronizersLockProvider(client()).lock(config(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow().unlock();
    }

    /** "throws LostHoldException if the hold had ended before" */
    @Test
    void unlock_afterTheHoldWasForced_throwsLostHold() {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client());
        SimpleLock lock = provider.lock(config(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
        assertTrue(client().lock(name).forceUnlock());

        assertThrows(LostHoldException.class, lock::unlock);
    }

    /* --------------- extend --------------- */

    /** "a fixed lease of lockAtMostFor from now ... with the same fencing token" */
    @Test
    void extend_setsTheLeaseFromNow_keepsTheToken_andRetiresTheOldLock() {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client());
        FencedLock lock = (FencedLock) provider.lock(config(Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();

        FencedLock extended = (FencedLock) lock.extend(Duration.ofMinutes(9), Duration.ZERO).orElseThrow();

        long pttl = admin.pttl(lockKey());
        assertTrue(pttl > 480_000 && pttl <= 540_000, "lease of the new lockAtMostFor: " + pttl);
        assertEquals(lock.fencingToken(), extended.fencingToken());
        assertThrows(IllegalStateException.class, lock::unlock);
        assertThrows(IllegalStateException.class, () -> lock.extend(Duration.ofMinutes(1), Duration.ZERO));
        extended.unlock();
        assertEquals(0, admin.exists(lockKey()));
    }

    /* --------------- fencing tokens --------------- */

    /** "a @SchedulerLock method, or a LockingTaskExecutor task, reads its own lock's token" */
    @Test
    void currentFencingToken_inTasksRunByShedLock_isTheirLocksToken_andIncreases() throws Throwable {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client());
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        LockConfiguration configuration = config(Duration.ofMinutes(5), Duration.ZERO);

        // A thread of its own: other tests leave locks taken on the test thread and never unlocked there.
        CompletableFuture.runAsync(() -> {
            try {
                long first = executor.executeWithLock(SynchronizersLockProvider::currentFencingToken, configuration)
                        .getResult();
                long[] inside = new long[2];
                executor.executeWithLock((Runnable) () -> {
                    inside[0] = SynchronizersLockProvider.currentFencingToken();
                    LockExtender.extendActiveLock(Duration.ofMinutes(5), Duration.ZERO);
                    inside[1] = SynchronizersLockProvider.currentFencingToken();
                }, configuration);

                assertTrue(inside[0] > first, "greater than every earlier token: " + first + " then " + inside[0]);
                assertEquals(inside[0], inside[1], "an extension keeps the token");
                assertThrows(IllegalStateException.class, SynchronizersLockProvider::currentFencingToken,
                        "no task runs");
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
        }).get(30, TimeUnit.SECONDS);
    }

    /** "A lock taken on this thread and unlocked on another no longer counts"; the innermost lock wins. */
    @Test
    void currentFencingToken_nestedLocks_innermost_andAnUnlockElsewhereCounts() throws Exception {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client());
        CompletableFuture.runAsync(() -> {
            FencedLock outer = (FencedLock) provider.lock(config(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
            FencedLock inner = (FencedLock) provider.lock(
                    new LockConfiguration(ClockProvider.now(), name + "-inner", Duration.ofMinutes(5), Duration.ZERO))
                    .orElseThrow();
            assertEquals(inner.fencingToken(), SynchronizersLockProvider.currentFencingToken());

            CompletableFuture.runAsync(inner::unlock).join();

            assertEquals(outer.fencingToken(), SynchronizersLockProvider.currentFencingToken());
            outer.unlock();
            assertThrows(IllegalStateException.class, SynchronizersLockProvider::currentFencingToken);
        }).get(30, TimeUnit.SECONDS);
    }

    /* --------------- keep-alive --------------- */

    /** "renewed by the client's watchdog ... however long the task runs: lockAtMostFor is not used" */
    @Test
    void withKeepAlive_aHoldOutlivesLockAtMostFor_andNobodyElseGetsIt() throws Exception {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client(Duration.ofMillis(300))).withKeepAlive();
        SynchronizersLockProvider other = new SynchronizersLockProvider(client());
        SimpleLock lock = provider.lock(config(Duration.ofMillis(50), Duration.ZERO)).orElseThrow();

        // Time passing is what this test is about: several client leases, and lockAtMostFor many times over.
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_200);
        while (System.nanoTime() < until) {
            assertEquals(Optional.empty(), other.lock(config(Duration.ofMinutes(5), Duration.ZERO)));
            Thread.sleep(50);
        }
        assertTrue(lost.isEmpty(), "renewed, never lost: " + lost);

        lock.unlock();
        other.lock(config(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow().unlock();
    }

    /** "A hold ... that was forced, is reported to the client's lost-hold listener, and the lock's unlock() throws" */
    @Test
    void withKeepAlive_aForcedHold_reachesTheLostHoldListener() throws Exception {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client(Duration.ofMillis(300))).withKeepAlive();
        FencedLock lock = (FencedLock) provider.lock(config(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();

        assertTrue(client().lock(name).forceUnlock());

        LostHold reported = lost.poll(30, TimeUnit.SECONDS);
        assertTrue(reported != null, "the listener is told at the next renewal");
        assertEquals(lock.fencingToken(), reported.fencingToken());
        assertThrows(LostHoldException.class, lock::unlock);
    }

    /** "half way through it, the hold is given a fixed lease that ends lockAtMostFor after it was taken" */
    @Test
    void withKeepAliveUpTo_theHoldEndsAtLockAtMostFor() throws Exception {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client(Duration.ofSeconds(30)))
                .withKeepAliveUpTo();
        SimpleLock lock = provider.lock(config(Duration.ofMillis(600), Duration.ZERO)).orElseThrow();
        assertTrue(admin.pttl(lockKey()) > 20_000, "renewed with the client's lease at first");

        await("the cap gave it a fixed lease", () -> {
            long pttl = admin.pttl(lockKey());
            return pttl <= 600;
        });
        await("the capped lease ran out", () -> admin.exists(lockKey()) == 0);
        assertInstanceOf(IllegalMonitorStateException.class, assertThrows(LostHoldException.class, lock::unlock));
        assertFalse(admin.exists(lockKey()) > 0);
    }
}
