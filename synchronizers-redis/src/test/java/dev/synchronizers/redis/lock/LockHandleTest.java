package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.quorum.RedlockHandleTest;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link LockHandle}: holds that belong to an object rather than a thread, on one standalone
 * server. The handle contract on every kind and topology is in {@code DistributedLockContractTest};
 * a quorum whose nodes do not answer or lost the hold, in {@code RedlockHandleTest}.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockHandleTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;
    private final BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();

    LockHandleTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    private RedisSynchronizers client() {
        return opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lostHoldListener(lost::add).build());
    }

    /* --------------- ownership --------------- */

    @Test
    void acquire_onOneThread_releasedOnAnother_thenAnotherClientTakesIt() throws Exception {
        DistributedLock lock = client().lock(name);
        LockHandle handle = CompletableFuture.supplyAsync(() -> {
            try {
                return lock.acquire();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }).get(30, TimeUnit.SECONDS);
        DistributedLock other = client().lock(name);
        assertFalse(other.tryLock(), "held by the handle");

        handle.release();

        assertTrue(other.tryLock(), "free once the handle released it, from another thread");
        other.unlock();
        assertFalse(handle.isHeld());
    }

    @Test
    void tryAcquire_zero_whileAHandleHoldsIt_isEmpty_fromAnyThread() throws Exception {
        DistributedLock lock = client().lock(name);
        LockHandle first = lock.tryAcquire(Duration.ZERO).orElseThrow();

        assertEquals(Optional.empty(), lock.tryAcquire(Duration.ZERO), "not reentrant on this thread");
        Optional<LockHandle> elsewhere = CompletableFuture.supplyAsync(() -> {
            try {
                return lock.tryAcquire(Duration.ZERO);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }).get(30, TimeUnit.SECONDS);
        assertEquals(Optional.empty(), elsewhere);
        assertFalse(lock.tryLock(), "a thread hold waits for the handle too");
        first.release();
    }

    @Test
    void handleAndThreadHolds_excludeEachOther_andTheirTokensIncrease() throws Exception {
        DistributedLock lock = client().lock(name);
        lock.lock();
        long threadToken = lock.fencingToken();
        assertEquals(Optional.empty(), lock.tryAcquire(Duration.ZERO), "the thread's own hold excludes a handle");
        assertThrows(IllegalMonitorStateException.class, lock::acquire, "would wait for itself");
        lock.unlock();

        LockHandle handle = lock.acquire();
        assertTrue(handle.fencingToken() > threadToken);
        assertFalse(lock.tryLock(), "a handle's hold excludes the thread that took it");
        handle.release();

        lock.lock();
        assertTrue(lock.fencingToken() > handle.fencingToken());
        lock.unlock();
    }

    @Test
    void tryAcquire_timed_waitsForARelease_thenHolds() throws Exception {
        DistributedLock lock = client().lock(name);
        LockHandle first = lock.acquire();
        CompletableFuture<Optional<LockHandle>> second = CompletableFuture.supplyAsync(() -> {
            try {
                return lock.tryAcquire(Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        first.release();

        LockHandle handle = second.get(30, TimeUnit.SECONDS).orElseThrow();
        assertTrue(handle.isHeld());
        handle.close();
    }

    /* --------------- verify, extend, releaseAfter --------------- */

    @Test
    void verify_afterAnotherClientForcedIt_isFalse_andReportsItLostAtOnce() throws Exception {
        DistributedLock lock = client().lock(name);
        LockHandle handle = acquire(lock);
        assertTrue(handle.verify());

        assertTrue(client().lock(name).forceUnlock());

        assertFalse(handle.verify());
        assertFalse(handle.isHeld());
        // Told at once (not at the next renewal), on the listener's executor: not necessarily yet.
        LostHold reported = lost.poll(30, TimeUnit.SECONDS);
        assertTrue(reported != null, "the listener is told");
        assertSame(handle, reported.handle());
        assertEquals(-1, reported.threadId());
        assertEquals(handle.fencingToken(), reported.fencingToken());
        assertThrows(LostHoldException.class, handle::release);
    }

    @Test
    void verifyHeld_currentThreadsHold_oneRoundTrip() {
        DistributedLock lock = client().lock(name);
        assertFalse(lock.verifyHeld(), "not held");
        lock.lock();
        assertTrue(lock.verifyHeld());
        client().lock(name).forceUnlock();
        assertFalse(lock.verifyHeld());
        assertFalse(lock.isHeldByCurrentThread());
        assertThrows(LostHoldException.class, lock::unlock);
    }

    @Test
    void extend_setsAFixedLeaseFromNow_andStopsRenewal() {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        DistributedLock lock = client().lock(name);
        LockHandle handle = acquire(lock);
        String key = LockKeys.of(prefix, name).lock();

        assertTrue(handle.extend(Duration.ofSeconds(600)));

        long pttl = admin.pttl(key);
        assertTrue(pttl > 300_000 && pttl <= 600_000, "lease set to 600 s: " + pttl);
        assertTrue(handle.isHeld());
        handle.release();
        assertEquals(0, admin.exists(key));
    }

    @Test
    void extend_afterTheHoldWasForced_isFalse() {
        DistributedLock lock = client().lock(name);
        LockHandle handle = acquire(lock);
        client().lock(name).forceUnlock();

        assertFalse(handle.extend(Duration.ofSeconds(10)));
        assertFalse(handle.isHeld());
    }

    @Test
    void releaseAfter_keepsEveryoneOutForTheRest_andTheLockFreesItselfAfter() throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        DistributedLock lock = client().lock(name);
        LockHandle handle = acquire(lock);
        String key = LockKeys.of(prefix, name).lock();

        handle.releaseAfter(Duration.ofSeconds(600));

        assertFalse(handle.isHeld());
        long pttl = admin.pttl(key);
        assertTrue(pttl > 300_000 && pttl <= 600_000, "kept closed for 600 s: " + pttl);
        DistributedLock other = client().lock(name);
        assertFalse(other.tryLock(), "closed to everyone");
        assertThrows(IllegalStateException.class, handle::release, "released already");
        handle.close();   // idempotent once released

        // The lease ending is what opens it: shorten it, as the server's clock would run it out.
        // Until the key is gone, an attempt would find it and sleep for the rest of its 600 s.
        admin.pexpire(key, 1);
        Await.until("the server expired " + key, () -> admin.exists(key) == 0);
        assertTrue(other.tryLock(30, TimeUnit.SECONDS), "free once the kept lease ran out");
        other.unlock();
    }

    @Test
    void releaseAfter_zero_releasesAtOnce() {
        DistributedLock lock = client().lock(name);
        LockHandle handle = acquire(lock);

        handle.releaseAfter(Duration.ZERO);

        assertTrue(client().lock(name).tryLock());
    }

    /* --------------- release, close, leases --------------- */

    @Test
    void close_ofAHandleLostMeanwhile_throwsLostHold() {
        DistributedLock lock = client().lock(name);
        LockHandle handle = acquire(lock);
        client().lock(name).forceUnlock();
        handle.verify();

        assertThrows(LostHoldException.class, handle::close);
    }

    @Test
    void release_twice_throwsIllegalState() {
        LockHandle handle = acquire(client().lock(name));
        handle.release();

        assertThrows(IllegalStateException.class, handle::release);
        handle.close();   // does nothing
    }

    @Test
    void releaseAsync_releases_onTheClientsExecutor() throws Exception {
        RedisServer server = redis.startManaged();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lostHoldListener(lost::add).build());
        LockHandle handle = acquire(client.lock(name));
        Thread[] ranOn = new Thread[1];

        // The server answers nothing until the dependent action is attached: a stage completed
        // before that would run it on this thread, which would tell nothing.
        server.pause();
        CompletableFuture<Void> released;
        try {
            released = handle.releaseAsync().thenRun(() -> ranOn[0] = Thread.currentThread()).toCompletableFuture();
        } finally {
            server.resume();
        }
        released.get(30, TimeUnit.SECONDS);

        assertTrue(ranOn[0].getName().contains("-async-"), "completed on the client's pool: " + ranOn[0]);
        assertTrue(client.lock(name).tryLock());
        client.lock(name).unlock();
    }

    @Test
    void releaseAsync_ofALostHandle_completesExceptionallyWithLostHold() {
        LockHandle handle = acquire(client().lock(name));
        client().lock(name).forceUnlock();
        handle.verify();

        ExecutionException thrown = assertThrows(ExecutionException.class,
                () -> handle.releaseAsync().toCompletableFuture().get(30, TimeUnit.SECONDS));
        assertTrue(thrown.getCause() instanceof LostHoldException, thrown.getCause().toString());
    }

    @Test
    void acquire_fixedLease_isNotRenewed_andEndsWithIt() throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        DistributedLock lock = client().lock(name);
        LockHandle handle = lock.acquire(Duration.ofSeconds(600));
        String key = LockKeys.of(prefix, name).lock();
        assertTrue(admin.pttl(key) <= 600_000);

        admin.pexpire(key, 1);   // the server's clock runs it out
        Await.until("the server expired " + key, () -> admin.exists(key) == 0);
        DistributedLock other = client().lock(name);
        assertTrue(other.tryLock(30, TimeUnit.SECONDS));
        other.unlock();
        assertNull(lost.poll(), "a fixed lease that ran out is not reported");
        assertTrue(assertThrows(LostHoldException.class, handle::release).getMessage().contains(name));
    }

    @Test
    void handleOutlivesTheThreadThatTookIt_renewedByTheWatchdog() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(redis.server().uri())
                .keyPrefix(prefix).lease(Duration.ofMillis(300)).lostHoldListener(lost::add).build());
        DistributedLock lock = client.lock(name);
        LockHandle[] taken = new LockHandle[1];
        Thread taker = new Thread(() -> taken[0] = acquire(lock));
        taker.start();
        taker.join();

        for (int tick = 0; tick < 3; tick++) {
            RedisInternals.renewNow(client);   // the thread that took it is gone: the hold is the client's
        }

        assertTrue(taken[0].verify(), "not abandoned with its thread");
        assertNull(lost.poll());
        taken[0].release();
    }

    /* --------------- virtual threads --------------- */

    /**
     * 10,000 virtual threads take one name through acquire(), each increments a plain counter under
     * its handle and releases it: all complete, no update is lost, and the tokens follow the order
     * of the increments. Runs on JDK 21 and later (the build targets 17, so the virtual thread
     * factory is looked up reflectively); .ci/run runs it on the newest JDK installed.
     */
    @Test
    void acquire_10000VirtualThreadsOnOneName_noLostUpdate() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+");
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        ThreadFactory factory = (ThreadFactory) Class.forName("java.lang.Thread$Builder").getMethod("factory")
                .invoke(builder);
        DistributedLock lock = client().lock(name);
        int threads = 10_000;
        int[] counter = new int[1];   // plain: read and written in two steps, only the lock orders them
        long[] tokens = new long[threads];
        CountDownLatch done = new CountDownLatch(threads);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            factory.newThread(() -> {
                try {
                    LockHandle handle = lock.acquire();
                    try {
                        int seen = counter[0];
                        tokens[seen] = handle.fencingToken();
                        counter[0] = seen + 1;
                    } finally {
                        handle.release();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                } finally {
                    done.countDown();
                }
            }).start();
        }
        assertTrue(done.await(120, TimeUnit.SECONDS), "all virtual threads finished: " + done.getCount() + " left");
        assertTrue(failures.isEmpty(), failures.size() + " failed, the first: " + failures.stream().findFirst());
        assertEquals(threads, counter[0], "no lost update");
        for (int i = 1; i < threads; i++) {
            assertTrue(tokens[i] > tokens[i - 1], "tokens in the order of the holds at " + i);
        }
        assertFalse(lock.isLocked());
        assertNull(lost.poll(), "nothing lost");
    }

    /* --------------- read-write locks, bad input --------------- */

    @Test
    void readLock_handles_shareTheLock_andExcludeTheWriteLock() throws Exception {
        DistributedReadWriteLock rw = client().readWriteLock(name);
        LockHandle reader1 = rw.readLock().acquire();
        LockHandle reader2 = rw.readLock().tryAcquire(Duration.ZERO).orElseThrow();

        assertEquals(Optional.empty(), client().readWriteLock(name).writeLock().tryAcquire(Duration.ZERO));
        assertTrue(reader1.verify() && reader2.verify());
        reader1.release();
        reader2.release();
        LockHandle writer = client().readWriteLock(name).writeLock().tryAcquire(Duration.ZERO).orElseThrow();
        assertTrue(writer.verify());
        writer.release();
    }

    @Test
    void badArguments_throwNamingThem_andChangeNothing() {
        DistributedLock lock = client().lock(name);
        assertThrows(NullPointerException.class, () -> lock.tryAcquire(null));
        assertThrows(NullPointerException.class, () -> lock.acquire(null));
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> lock.acquire(Duration.ZERO));
        assertTrue(zero.getMessage().contains("lease"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> lock.acquire(Duration.ofNanos(10)));
        assertThrows(IllegalArgumentException.class, () -> lock.tryAcquire(Duration.ZERO, Duration.ofDays(4000)));
        LockHandle handle = acquire(lock);
        assertThrows(IllegalArgumentException.class, () -> handle.extend(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> handle.releaseAfter(Duration.ofMillis(-1)));
        assertThrows(NullPointerException.class, () -> handle.releaseAfter(null));
        assertTrue(handle.verify(), "bad input changed nothing");
        handle.release();
        assertFalse(lock.isLocked());
    }

    private static LockHandle acquire(DistributedLock lock) {
        try {
            return lock.acquire();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
