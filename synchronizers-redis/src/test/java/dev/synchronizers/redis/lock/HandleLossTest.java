package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link LockHandle#lost()}, {@link PermitHandle#lost()} and {@link DistributedLock#callLocked} on
 * one standalone server: the loss stage completes with the report the listeners get, on the
 * client's async executor, and is cancelled by a release; callLocked returns the body's value,
 * releases before it throws what the body threw, times out, and interrupts a body whose hold is
 * lost. The holder's clients have a short lease, so that the watchdog finds a forced hold gone
 * soon; no timing is asserted, the waits only turn a hang into a failure. The early stop against
 * another client's grant, with the connection cut, is {@code CallLockedMarginTest}'s.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class HandleLossTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Renewed every 300 ms: a hold forced away is found gone within a tick or two. */
    private static final Duration SHORT_LEASE = Duration.ofMillis(900);

    private final Opened opened;
    private final String prefix;
    private final String name;
    private final BlockingQueue<LostHold> reported = new LinkedBlockingQueue<>();

    HandleLossTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    private RedisSynchronizers holder() {
        return opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lease(SHORT_LEASE).lostHoldListener(reported::add).build());
    }

    private RedisSynchronizers other() {
        return opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix).build());
    }

    /** Completes with the name of the thread that completed {@code stage}, or its failure. */
    private static CompletableFuture<String> completingThread(CompletionStage<LostHold> stage) {
        return stage.handle((report, failure) -> Thread.currentThread().getName()).toCompletableFuture();
    }

    private static LostHold await(CompletionStage<LostHold> stage) throws Exception {
        return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /* --------------- LockHandle.lost() --------------- */

    @Test
    void lockHandle_forcedByAnotherClient_lostCompletesWithTheListenersReport_onTheAsyncExecutor() throws Exception {
        LockHandle handle = holder().lock(name).acquire();
        var stage = handle.lost();
        // A stage of its own: a thread waiting in get() may run the dependents of the stage it waits on.
        CompletableFuture<String> thread = completingThread(handle.lost());
        assertFalse(stage.toCompletableFuture().isDone(), "held: nothing to tell yet");

        assertTrue(other().lock(name).forceUnlock());

        LostHold report = await(stage);
        assertEquals(LostHold.Cause.GONE, report.cause());
        assertSame(handle, report.handle());
        assertEquals(handle.fencingToken(), report.fencingToken());
        assertEquals(report, reported.poll(30, TimeUnit.SECONDS), "the listeners got the same report");
        assertFalse(handle.isHeld());
        String completedOn = thread.get(30, TimeUnit.SECONDS);
        assertTrue(completedOn.contains("-async-"), "completed on the client's async pool, not " + completedOn);
        assertEquals(report, await(handle.lost()), "a stage obtained afterwards has the same report");
        assertThrows(LostHoldException.class, handle::release);
        assertEquals(report, await(stage), "a release after the loss does not cancel it");
    }

    @Test
    void lockHandle_verifyFindsItGone_lostCompletesWithGone() throws Exception {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lostHoldListener(reported::add).build();
        opened.add(client);
        LockHandle handle = client.lock(name).acquire();
        assertTrue(other().lock(name).forceUnlock());

        assertFalse(handle.verify());

        assertEquals(LostHold.Cause.GONE, await(handle.lost()).cause());
    }

    @Test
    void lockHandle_released_lostCancelled() throws Exception {
        DistributedLock lock = holder().lock(name);
        LockHandle handle = lock.acquire();
        var before = handle.lost();

        handle.release();

        assertThrows(CancellationException.class, () -> before.toCompletableFuture().get(30, TimeUnit.SECONDS));
        assertTrue(handle.lost().toCompletableFuture().isCancelled(), "a stage obtained after the release too");
        assertTrue(reported.isEmpty(), "released, not lost: " + reported);
    }

    @Test
    void lockHandle_closedAndLetGo_lostCancelled() throws Exception {
        DistributedLock lock = holder().lock(name);
        LockHandle closed = lock.acquire();
        closed.close();
        assertThrows(CancellationException.class, () -> closed.lost().toCompletableFuture().get(30, TimeUnit.SECONDS));

        LockHandle letGo = lock.acquire();
        letGo.releaseAfter(Duration.ofMillis(50));
        assertThrows(CancellationException.class, () -> letGo.lost().toCompletableFuture().get(30, TimeUnit.SECONDS));
    }

    @Test
    void lockHandle_fixedLeaseRunsOut_lostCompletesWithLeaseExpired_listenersNotTold() throws Exception {
        LockHandle handle = holder().lock(name).acquire(Duration.ofMillis(200));

        assertEquals(LostHold.Cause.LEASE_EXPIRED, await(handle.lost()).cause());
        assertTrue(reported.isEmpty(), "a fixed lease the caller chose is not reported: " + reported);
    }

    @Test
    void writeLockHandle_forced_lostCompletesWithGone() throws Exception {
        LockHandle handle = holder().readWriteLock(name).writeLock().acquire();
        assertTrue(other().readWriteLock(name).writeLock().forceUnlock());

        assertEquals(LostHold.Cause.GONE, await(handle.lost()).cause());
    }

    /**
     * A client closed while a handle holds: close() does not release it (it expires with its lease,
     * so that a body still running under it is not overlapped at once), and lost() completes with
     * an ABANDONED report, so that nothing waits on it forever; the listeners are not told (the
     * caller chose to close, as it chooses a fixed lease).
     */
    @Test
    void lockHandle_heldWhenTheClientCloses_lostCompletesWithAbandoned() throws Exception {
        RedisSynchronizers client = holder();
        LockHandle handle = client.lock(name).acquire();
        var stage = handle.lost();

        client.close();

        LostHold report = await(stage);
        assertEquals(LostHold.Cause.ABANDONED, report.cause());
        assertSame(handle, report.handle());
        assertEquals(handle.fencingToken(), report.fencingToken());
        assertFalse(handle.isHeld(), "known lost");
        assertEquals(report, await(handle.lost()), "a stage obtained afterwards has the same report");
        assertTrue(other().lock(name).isLocked(), "not released: it expires with its lease");
        assertTrue(reported.isEmpty(), "the listeners are not told: " + reported);
    }

    @Test
    void permitHandle_heldWhenTheClientCloses_lostCompletesWithAbandoned() throws Exception {
        RedisSynchronizers client = holder();
        DistributedSemaphore semaphore = client.semaphore(name);
        semaphore.trySetPermits(2);
        PermitHandle permits = semaphore.acquirePermits(1);
        var stage = permits.lost();

        client.close();

        LostHold report = await(stage);
        assertEquals(LostHold.Cause.ABANDONED, report.cause());
        assertEquals("semaphore", report.kind());
        assertTrue(reported.isEmpty(), "the listeners are not told: " + reported);
    }

    /** A released handle's stage stays cancelled when the client closes afterwards. */
    @Test
    void lockHandle_releasedThenClientClosed_lostStaysCancelled() throws Exception {
        RedisSynchronizers client = holder();
        LockHandle handle = client.lock(name).acquire();
        handle.release();

        client.close();

        assertThrows(CancellationException.class, () -> handle.lost().toCompletableFuture().get(30, TimeUnit.SECONDS));
    }

    /* --------------- PermitHandle.lost() --------------- */

    @Test
    void permitHandle_goneFromRedis_lostCompletesWithGone() throws Exception {
        DistributedSemaphore semaphore = holder().semaphore(name);
        semaphore.trySetPermits(3);
        PermitHandle permits = semaphore.acquirePermits(2);
        var stage = permits.lost();
        // A stage of its own: a thread waiting in get() may run the dependents of the stage it waits on.
        CompletableFuture<String> thread = completingThread(permits.lost());

        RedisCommands<String, String> commands = opened.commands(redis.server().uri());
        List<String> keys = commands.keys(prefix + "*");
        commands.del(keys.toArray(String[]::new));

        LostHold report = await(stage);
        assertEquals(LostHold.Cause.GONE, report.cause());
        assertEquals("semaphore", report.kind());
        assertEquals(-1, report.threadId());
        assertEquals(report, reported.poll(30, TimeUnit.SECONDS));
        assertTrue(thread.get(30, TimeUnit.SECONDS).contains("-async-"));
        assertThrows(LostHoldException.class, permits::release);
    }

    @Test
    void permitHandle_released_lostCancelled() throws Exception {
        DistributedSemaphore semaphore = holder().semaphore(name);
        semaphore.trySetPermits(1);
        PermitHandle permits = semaphore.acquirePermits(1);
        var before = permits.lost();

        permits.release();

        assertThrows(CancellationException.class, () -> before.toCompletableFuture().get(30, TimeUnit.SECONDS));
        assertTrue(permits.lost().toCompletableFuture().isCancelled());
        PermitHandle closed = semaphore.acquirePermits(1);
        closed.close();
        assertThrows(CancellationException.class, () -> closed.lost().toCompletableFuture().get(30, TimeUnit.SECONDS));
    }

    /* --------------- callLocked --------------- */

    @Test
    void callLocked_returnsTheBodysValue_underAHold_thenReleased() throws Exception {
        DistributedLock lock = holder().lock(name);
        DistributedLock other = other().lock(name);

        String value = lock.callLocked(Duration.ZERO, hold -> {
            assertTrue(hold.isHeld());
            assertTrue(hold.verify());
            assertFalse(other.tryLock(), "held while the body runs");
            return "done with token " + hold.fencingToken();
        });

        assertTrue(value.startsWith("done with token "));
        assertTrue(other.tryLock(), "released when callLocked returned");
        other.unlock();
    }

    @Test
    void callLocked_bodyThrows_executionExceptionWithItsCause_afterTheRelease() throws Exception {
        DistributedLock lock = holder().lock(name);
        DistributedLock other = other().lock(name);
        IOException thrown = new IOException("partner down");

        ExecutionException failed = assertThrows(ExecutionException.class, () -> lock.callLocked(Duration.ZERO, hold -> {
            throw thrown;
        }));

        assertSame(thrown, failed.getCause());
        assertTrue(other.tryLock(), "released before callLocked threw");
        other.unlock();
        assertTrue(reported.isEmpty(), reported.toString());
    }

    @Test
    void callLocked_lockHeldElsewhere_timeoutException_bodyNotRun() throws Exception {
        DistributedLock other = other().lock(name);
        other.lock();
        DistributedLock lock = holder().lock(name);
        AtomicBoolean ran = new AtomicBoolean();
        try {
            assertThrows(TimeoutException.class, () -> lock.callLocked(Duration.ZERO, hold -> ran.getAndSet(true)));
            assertThrows(TimeoutException.class, () -> lock.callLocked(Duration.ofMillis(200), hold -> ran.getAndSet(true)));
        } finally {
            other.unlock();
        }
        assertFalse(ran.get());
        assertEquals(Boolean.FALSE, lock.callLocked(Duration.ofSeconds(30), hold -> ran.getAndSet(true)));
    }

    @Test
    void callLocked_interruptedOnEntry_interruptedException_bodyNotRun() {
        DistributedLock lock = holder().lock(name);
        AtomicBoolean ran = new AtomicBoolean();
        Thread.currentThread().interrupt();

        assertThrows(InterruptedException.class, () -> lock.callLocked(Duration.ZERO, hold -> ran.getAndSet(true)));

        assertFalse(Thread.currentThread().isInterrupted(), "cleared, as lockInterruptibly() clears it");
        assertFalse(ran.get());
    }

    /**
     * The hold forced away while the body sleeps: the body is interrupted, and callLocked throws
     * LostHoldException with the body's InterruptedException suppressed and the interrupt cleared.
     */
    @Test
    void callLocked_holdLostWhileTheBodyRuns_bodyInterrupted_lostHoldException_interruptCleared() throws Exception {
        DistributedLock lock = holder().lock(name);
        CountDownLatch running = new CountDownLatch(1);
        CompletableFuture<Boolean> forced = CompletableFuture.supplyAsync(() -> {
            try {
                assertTrue(running.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return other().lock(name).forceUnlock();
        });

        LostHoldException lost = assertThrows(LostHoldException.class, () -> lock.callLocked(Duration.ZERO, hold -> {
            running.countDown();
            Thread.sleep(TimeUnit.SECONDS.toMillis(60));
            return "not reached";
        }));

        assertTrue(forced.get(30, TimeUnit.SECONDS));
        assertEquals(LostHold.Cause.GONE, lost.lostCause());
        assertEquals(1, lost.getSuppressed().length, "the body's exception is kept");
        assertInstanceOf(InterruptedException.class, lost.getSuppressed()[0]);
        assertFalse(Thread.currentThread().isInterrupted(), "the interrupt callLocked set is cleared");
        assertEquals(LostHold.Cause.GONE, reported.poll(30, TimeUnit.SECONDS).cause());
    }

    /**
     * The client closed while a callLocked body runs: the body is interrupted (its hold is no
     * longer renewed), and callLocked ends with the closed client's IllegalStateException, the
     * body's InterruptedException suppressed and the interrupt cleared.
     */
    @Test
    void callLocked_clientClosedWhileTheBodyRuns_bodyInterrupted() throws Exception {
        RedisSynchronizers client = holder();
        DistributedLock lock = client.lock(name);
        CountDownLatch running = new CountDownLatch(1);
        CompletableFuture<Void> closed = CompletableFuture.runAsync(() -> {
            try {
                assertTrue(running.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            client.close();
        });

        IllegalStateException failed = assertThrows(IllegalStateException.class, () -> lock.callLocked(Duration.ZERO,
                hold -> {
                    running.countDown();
                    Thread.sleep(TimeUnit.SECONDS.toMillis(60));
                    return "not reached";
                }));

        closed.get(30, TimeUnit.SECONDS);
        assertTrue(failed.getMessage().contains("closed"), failed.getMessage());
        assertEquals(1, failed.getSuppressed().length, "the body's exception is kept");
        assertInstanceOf(InterruptedException.class, failed.getSuppressed()[0]);
        assertFalse(Thread.currentThread().isInterrupted(), "the interrupt callLocked set is cleared");
    }

    /** A body that ignores the interrupt runs to its end; its value is discarded, the interrupt cleared. */
    @Test
    void callLocked_holdLostWhileABusyBodyRuns_valueDiscarded_lostHoldException_interruptCleared() throws Exception {
        DistributedLock lock = holder().lock(name);
        DistributedLock other = other().lock(name);

        LostHoldException lost = assertThrows(LostHoldException.class, () -> lock.callLocked(Duration.ZERO, hold -> {
            assertTrue(other.forceUnlock());
            // Busy, never blocking: it sees the interrupt without clearing it.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertTrue(Thread.currentThread().isInterrupted(), "interrupted for the loss");
            return "discarded";
        }));

        assertEquals(LostHold.Cause.GONE, lost.lostCause());
        assertEquals(0, lost.getSuppressed().length);
        assertFalse(Thread.currentThread().isInterrupted(), "the interrupt callLocked set is cleared");
    }
}
