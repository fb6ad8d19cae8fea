package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.child.LockHolderMain;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The lock's lease: the watchdog keeps a hold for as long as it lasts, and reports it lost (to
 * every listener, one that throws included) once Redis no longer has it or could have let it go;
 * a hold whose thread or process ends without {@code unlock()}, or whose fixed lease runs out,
 * ends within its lease, a local waiter is woken then, and nothing of it stays pinned.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockLeaseTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Far longer than any wait in these tests: a hold left behind would outlast them. */
    private static final Duration LONG_LEASE = Duration.ofSeconds(60);

    private final Opened opened;
    private final String prefix;
    private final String name;

    LockLeaseTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /* --------------- the watchdog keeps a hold --------------- */

    /** With no lease given, the watchdog keeps the hold past three times the lease. */
    @Test
    void lock_noLease_watchdogKeepsHoldPastThreeLeases() throws Exception {
        Duration lease = Duration.ofMillis(1000);
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        DistributedLock lock = client(redis.server().uri(), lease, lost).lock(name);
        DistributedLock other = client(redis.server().uri(), lease, new LinkedBlockingQueue<>()).lock(name);
        lock.lock();
        // The passage of time is what is tested here: more than 3 leases without a release.
        Thread.sleep(lease.toMillis() * 3 + lease.toMillis() / 2);
        assertTrue(lock.isHeldByCurrentThread());
        assertFalse(Background.start("other client", other::tryLock).get(), "still excludes other clients");
        assertTrue(lost.isEmpty(), "nothing reported lost: " + lost);
        lock.unlock();
        assertTrue(Background.start("other client", other::tryLock).get());
    }

    /* --------------- lost holds --------------- */

    /** A hold the watchdog finds gone is lost: listener told, isHeldByCurrentThread false, unlock throws. */
    @Test
    void lock_holdDeletedBehindItsBack_reportedLostAtNextRenewal() throws Exception {
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = client(redis.server().uri(), Duration.ofSeconds(30), lost);
        DistributedLock lock = client.lock(name);
        lock.lock();
        lock.lock();
        opened.commands(redis.server().uri()).del(prefix + ":lock:{" + name + "}");
        RedisInternals.renewNow(client);
        LostHold event = lost.poll(30, TimeUnit.SECONDS);
        assertNotNull(event);
        assertEquals(LostHold.Cause.GONE, event.cause());
        assertEquals(lock.fencingToken(), event.fencingToken());
        assertFalse(lock.isHeldByCurrentThread());
        assertThrows(LostHoldException.class, lock::lock, "cannot re-enter a lost hold");
        assertThrows(LostHoldException.class, lock::unlock);
        assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(0, lock.getHoldCount());
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
        assertEquals(0, RedisInternals.watchdogEntries(client));
    }

    /** Redis unreachable for a whole lease: the hold counts as lost (UNRENEWABLE), never as silently kept. */
    @Test
    void lock_redisPausedForALease_holdReportedUnrenewable() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(Duration.ofMillis(300)).commandTimeout(Duration.ofMillis(200))
                .lostHoldListener(lost::add).build();
        opened.add(client);
        DistributedLock lock = client.lock(name);
        lock.lock();
        server.pause();
        try {
            LostHold event = lost.poll(30, TimeUnit.SECONDS);
            assertNotNull(event);
            assertEquals(LostHold.Cause.UNRENEWABLE, event.cause());
            assertFalse(lock.isHeldByCurrentThread());
        } finally {
            server.resume();
        }
        LostHoldException thrown = assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(LostHold.Cause.UNRENEWABLE, thrown.lostCause());
    }

    /**
     * Redis stops answering a client that holds a lock, a read lock and permits (three renew
     * scripts, so three renewal calls per tick): each hold must be reported lost while Redis still
     * has it, never after Redis may have let another client in. Before, a tick awaited its calls
     * one command timeout each, three in a row, and the next tick came after the leases had run
     * out in Redis (the fault soak found the overlap).
     */
    @Test
    void watchdog_redisStopsAnsweringWithThreeRenewScripts_reportsEachLossWhileRedisStillHasTheHold()
            throws Exception {
        RedisServer server = ownServer();
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisCommands<String, String> observer = opened.commands(server.uri());
        String lockKey = LockKeys.of(prefix, name).lock();
        java.util.Map<String, Long> existsAtReport = new java.util.concurrent.ConcurrentHashMap<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .lease(Duration.ofMillis(1500)).commandTimeout(Duration.ofMillis(400))
                .lostHoldListener(hold -> {
                    if (hold.kind().equals("lock")) {
                        existsAtReport.put(hold.kind(), observer.exists(lockKey));
                    }
                }, Runnable::run).build());
        DistributedLock lock = client.lock(name);
        lock.lock();
        client.readWriteLock(name + "-rw").readLock().lock();
        DistributedSemaphore semaphore = client.semaphore(name + "-s");
        assertTrue(semaphore.trySetPermits(1));
        semaphore.acquire();

        proxy.delay(Duration.ofSeconds(60));
        Await.until("the lock's loss is reported", () -> existsAtReport.containsKey("lock"));

        assertEquals(1L, existsAtReport.get("lock"), "reported lost only after Redis had let it go");
    }

    /** A listener that throws is logged and does not stop the others. */
    @Test
    void lostHoldListener_throws_otherListenersStillRun() throws Exception {
        CountDownLatch second = new CountDownLatch(1);
        RedisSynchronizers client = RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lostHoldListener(hold -> {
                    throw new IllegalStateException("listener bug");
                })
                .lostHoldListener(hold -> second.countDown(), Runnable::run)
                .build();
        opened.add(client);
        DistributedLock lock = client.lock(name);
        lock.lock();
        assertTrue(lock.forceUnlock());
        assertTrue(second.await(30, TimeUnit.SECONDS));
        assertThrows(LostHoldException.class, lock::unlock);
    }

    /* --------------- holds that end without unlock() --------------- */

    /**
     * A thread that ends while holding the lock: the watchdog stops renewing the hold and reports it
     * (ABANDONED), so the lock frees itself within a lease instead of staying held for the life of
     * the process.
     */
    @Test
    void lock_holderThreadEndsWithoutUnlock_reportedAbandonedAndFreedAfterLease() throws Exception {
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = client(redis.server().uri(), Duration.ofSeconds(1), lost);
        DistributedLock lock = client.lock(name);
        Background<Long> holder = Background.start("holder that forgets to unlock", () -> {
            lock.lock();
            return lock.fencingToken();
        });
        long token = holder.get();
        holder.thread().join();
        RedisInternals.renewNow(client);
        LostHold event = lost.poll(30, TimeUnit.SECONDS);
        assertNotNull(event);
        assertEquals(LostHold.Cause.ABANDONED, event.cause());
        assertEquals(token, event.fencingToken());
        assertEquals(0, RedisInternals.watchdogEntries(client), "no longer renewed");
        DistributedLock other = client(redis.server().uri(), Duration.ofSeconds(30), new LinkedBlockingQueue<>()).lock(name);
        assertTrue(other.tryLock(30, TimeUnit.SECONDS), "free once the abandoned hold's lease ran out");
        assertTrue(other.fencingToken() > token);
        other.unlock();
    }

    /** A child JVM holding the lock is SIGKILLed: the lock frees itself when the lease runs out. */
    @Test
    void lock_holderProcessKilled_freesAfterLease() throws Exception {
        long leaseMillis = 1000;
        try (ChildJvm child = ChildJvm.start(LockHolderMain.class,
                redis.server().uri(), prefix, name, Long.toString(leaseMillis))) {
            String locked = child.awaitLine("LOCKED", Duration.ofSeconds(60));
            long childToken = Long.parseLong(locked.substring("LOCKED ".length()).trim());
            DistributedLock lock = client(redis.server().uri(), Duration.ofSeconds(30), new LinkedBlockingQueue<>())
                    .lock(name);
            assertFalse(lock.tryLock(), "held by the child");
            child.kill();
            assertTrue(lock.tryLock(60, TimeUnit.SECONDS), "free once the dead holder's lease ran out");
            assertTrue(lock.fencingToken() > childToken);
            lock.unlock();
        }
    }

    /**
     * A neighbour's fixed lease runs out while it never unlocks: the first local waiter is woken
     * then, not after the client's (much longer) lease.
     */
    @Test
    void lock_neighboursFixedLeaseRunsOut_localWaiterAcquires() throws Exception {
        DistributedLock lock = longLeased(redis.server().uri(), Duration.ofSeconds(5)).lock(name);
        CountDownLatch done = new CountDownLatch(1);
        Background<Void> holder = Background.start("holder that never unlocks", () -> {
            lock.lock(2, TimeUnit.SECONDS);
            done.await();
            return null;
        });
        Await.until("the neighbour holds", lock::isLocked);
        Background<Boolean> waiter = Background.start("waiter", () -> {
            lock.lock();
            lock.unlock();
            return true;
        });
        try {
            // Background.get() gives up after 30 s, half the client's lease that the waiter would sleep.
            assertTrue(waiter.get());
        } finally {
            done.countDown();
        }
        holder.get();
    }

    /**
     * A neighbour's hold is forced by another client and found gone by the watchdog: the first
     * local waiter is woken then.
     */
    @Test
    void lock_neighboursHoldForcedByAnotherClient_localWaiterAcquiresOnceFoundGone() throws Exception {
        RedisSynchronizers client = longLeased(redis.server().uri(), Duration.ofSeconds(5));
        DistributedLock lock = client.lock(name);
        CountDownLatch done = new CountDownLatch(1);
        Background<Void> holder = Background.start("holder", () -> {
            lock.lock();
            done.await();
            assertThrows(LostHoldException.class, lock::unlock);
            return null;
        });
        Await.until("the neighbour holds", lock::isLocked);
        Background<Boolean> waiter = Background.start("waiter", () -> {
            lock.lock();
            lock.unlock();
            return true;
        });
        Await.until("the waiter sleeps", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        assertTrue(longLeased(redis.server().uri(), Duration.ofSeconds(5)).lock(name).forceUnlock());
        RedisInternals.renewNow(client);

        // Background.get() gives up after 30 s, half the client's lease that the waiter would sleep.
        assertTrue(waiter.get());
        done.countDown();
        holder.get();
    }

    /* --------------- holds that ended pin nothing --------------- */

    /**
     * Fixed-lease holds on 200 names, never unlocked, and every reference dropped: once the leases
     * have ended, nothing is pinned or tracked, and the lock objects can be collected.
     */
    @Test
    void lockWithLease_neverUnlockedOn200Names_nothingPinnedOnceTheLeasesEnd() throws Exception {
        RedisSynchronizers client = longLeased(redis.server().uri(), Duration.ofSeconds(5));
        List<WeakReference<DistributedLock>> locks = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            DistributedLock lock = client.lock(name + "-" + i);
            lock.lock(500, TimeUnit.MILLISECONDS);
            locks.add(new WeakReference<>(lock));
        }

        Await.until("the watchdog has seen every lease end", () -> RedisInternals.watchdogEntries(client) == 0);
        assertEquals(0, RedisInternals.pinnedSynchronizers(client), "lock objects pinned");
        assertCollected(locks);
    }

    /**
     * Holds forced by another client and never unlocked: once the watchdog has found them gone,
     * nothing is pinned or tracked; the owner's unlock() through the same object still says lost.
     */
    @Test
    void lock_forcedByAnotherClientNeverUnlocked_nothingPinnedOnceFoundGone() throws Exception {
        RedisSynchronizers client = longLeased(redis.server().uri(), Duration.ofSeconds(5));
        RedisSynchronizers admin = longLeased(redis.server().uri(), Duration.ofSeconds(5));
        DistributedLock kept = client.lock(name + "-kept");
        kept.lock();
        List<WeakReference<DistributedLock>> locks = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            DistributedLock lock = client.lock(name + "-" + i);
            lock.lock();
            locks.add(new WeakReference<>(lock));
            assertTrue(admin.lock(name + "-" + i).forceUnlock());
        }
        assertTrue(admin.lock(name + "-kept").forceUnlock());
        RedisInternals.renewNow(client);

        Await.until("the watchdog has found every hold gone", () -> RedisInternals.watchdogEntries(client) == 0);
        assertEquals(0, RedisInternals.pinnedSynchronizers(client), "lock objects pinned");
        assertCollected(locks);
        assertThrows(LostHoldException.class, kept::unlock, "the record stays in the object that is still used");
        assertThrows(IllegalMonitorStateException.class, kept::unlock);
    }

    /* --------------- helpers --------------- */

    /**
     * A server of this test alone, since a pause stalls every client of it. Its script cache is
     * filled first: a command sent during a pause outlives its timeout, after which the client no
     * longer answers a NOSCRIPT by sending the script's text.
     */
    private RedisServer ownServer() {
        RedisServer server = opened.add(redis.startManaged());
        RedisCommands<String, String> admin = opened.commands(server.uri());
        for (Script script : Script.values()) {
            admin.scriptLoad(ScriptRegistry.text(script));
        }
        return server;
    }

    private RedisSynchronizers client(String uri, Duration lease, BlockingQueue<LostHold> lost) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).lease(lease)
                .lostHoldListener(lost::add).build();
        opened.add(client);
        return client;
    }

    /** A client whose lease (60 s) outlasts every wait here, with {@code commandTimeout}. */
    private RedisSynchronizers longLeased(String uri, Duration commandTimeout) {
        return opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).lease(LONG_LEASE)
                .commandTimeout(commandTimeout).build());
    }

    /** Fails unless every referent is collected within a bounded number of collections. */
    private static void assertCollected(List<? extends WeakReference<?>> references) throws InterruptedException {
        for (int round = 0; round < 50 && references.stream().anyMatch(r -> r.get() != null); round++) {
            System.gc();
            Thread.sleep(20);
        }
        long alive = references.stream().filter(r -> r.get() != null).count();
        assertEquals(0, alive, "lock objects still reachable");
    }
}
