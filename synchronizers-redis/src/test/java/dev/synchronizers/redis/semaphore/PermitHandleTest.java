package dev.synchronizers.redis.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link PermitHandle}: semaphore permits that belong to an object rather than to the client's
 * common pool, on one standalone server. What every topology promises of them is in
 * {@code DistributedSemaphoreContractTest}'s handle tests.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class PermitHandleTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;
    private final BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();

    PermitHandleTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    private RedisSynchronizers client() {
        return opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lostHoldListener(lost::add).build());
    }

    /* --------------- async --------------- */

    /**
     * 100 pending acquirePermitsAsync(1) of one client on a semaphore of one permit, each
     * incrementing a plain counter and releasing: no update is lost, all complete, none on a
     * network thread.
     */
    @Test
    void acquirePermitsAsync_100PendingOnOnePermit_excludeEachOther_allComplete() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        assertTrue(semaphore.trySetPermits(1));
        PermitHandle blocker = semaphore.acquirePermits(1);
        int[] counter = {0};
        List<CompletableFuture<String>> done = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            done.add(semaphore.acquirePermitsAsync(1).thenApply(handle -> {
                int seen = counter[0];
                counter[0] = seen + 1;   // a lost update if two held the one permit at once
                handle.release();
                return Thread.currentThread().getName();
            }).toCompletableFuture());
        }

        blocker.release();

        for (CompletableFuture<String> each : done) {
            assertTrue(each.get(60, TimeUnit.SECONDS).contains("-async-"), "completed on the client's executor");
        }
        assertEquals(100, counter[0]);
        assertEquals(1, semaphore.availablePermits());
    }

    @Test
    void acquirePermitsAsync_cancelled_withdraws_andCloseFailsTheRest() throws Exception {
        DistributedSemaphore other = client().semaphore(name);
        assertTrue(other.trySetPermits(1));
        PermitHandle held = other.acquirePermits(1);
        RedisSynchronizers client = client();
        CompletableFuture<PermitHandle> cancelled = client.semaphore(name).acquirePermitsAsync(1).toCompletableFuture();
        CompletableFuture<PermitHandle> pending = client.semaphore(name).acquirePermitsAsync(1).toCompletableFuture();
        assertTrue(cancelled.cancel(true));

        client.close();

        ExecutionException failed = assertThrows(ExecutionException.class, () -> pending.get(30, TimeUnit.SECONDS));
        assertTrue(failed.getCause() instanceof IllegalStateException, failed.getCause().toString());
        held.release();
        assertEquals(1, other.availablePermits(), "nothing taken by the withdrawn or failed acquisitions");
        assertThrows(IllegalArgumentException.class, () -> other.acquirePermitsAsync(0));
    }

    /* --------------- ownership --------------- */

    /** "any thread may release them": taken on one thread, released on another, then another client has them. */
    /**
     * A stage that its caller completes ({@code orTimeout}, the usual way to bound a wait) withdraws
     * the acquisition as {@code cancel()} does: it leaves the semaphore's queue, and the permit,
     * once released, goes to the next acquisition without the withdrawn one ever taking it.
     */
    @Test
    void acquirePermitsAsync_stageTimedOutByTheCaller_withdrawsIt() throws Exception {
        DistributedSemaphore other = client().semaphore(name);
        assertTrue(other.trySetPermits(1));
        PermitHandle held = other.acquirePermits(1);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DistributedSemaphore semaphore = opened.add(RedisSynchronizers.builder().uri(redis.server().uri())
                .keyPrefix(prefix).meterRegistry(registry).build()).semaphore(name);
        CompletableFuture<PermitHandle> stage = semaphore.acquirePermitsAsync(1).toCompletableFuture();
        Await.until("the acquisition waits in the semaphore's queue", () -> semaphore.snapshot().queueLength() == 1);

        stage.orTimeout(1, TimeUnit.MILLISECONDS);

        ExecutionException timedOut = assertThrows(ExecutionException.class, () -> stage.get(30, TimeUnit.SECONDS));
        assertTrue(timedOut.getCause() instanceof TimeoutException, timedOut.getCause().toString());
        Await.until("the withdrawn acquisition left the semaphore's queue", () -> semaphore.snapshot().queueLength() == 0);
        held.release();
        Optional<PermitHandle> next = other.tryAcquirePermits(1, Duration.ofSeconds(30));
        assertTrue(next.isPresent(), "the next acquisition got the permit");
        next.get().release();
        assertEquals(0, registry.find("synchronizers.wait").tag("outcome", "acquired").timers().stream()
                .mapToLong(Timer::count).sum(), "the withdrawn acquisition never took the permit");
    }

    @Test
    void acquirePermits_onOneThread_releasedOnAnother_thenAnotherClientGetsThem() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        assertTrue(semaphore.trySetPermits(3));
        PermitHandle handle = Background.start("taker", () -> semaphore.acquirePermits(2)).get();
        assertEquals(2, handle.permits());
        assertEquals(name, handle.name());
        DistributedSemaphore other = client().semaphore(name);
        assertFalse(other.tryAcquire(2), "the handle holds 2 of 3");

        Background.start("releaser", () -> {
            handle.release();
            return null;
        }).get();

        assertFalse(handle.isHeld());
        assertTrue(other.tryAcquire(3), "all free once the handle released them, from a third thread");
        other.release(3);
    }

    /** "the semaphore's own release(int) never releases them, nor counts them among the permits the client holds". */
    @Test
    void semaphoreRelease_neverReleasesAHandlesPermits() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(4);
        PermitHandle handle = semaphore.acquirePermits(2);
        semaphore.acquire();

        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> semaphore.release(2));
        assertTrue(thrown.getMessage().contains("holds 1 outside handles"), thrown.getMessage());
        assertEquals(1, semaphore.availablePermits(), "the refused release changed nothing");
        semaphore.release();
        assertThrows(IllegalStateException.class, semaphore::release, "the handle's permits are not the client's to release");

        assertTrue(handle.isHeld());
        assertEquals(2, semaphore.availablePermits(), "the handle still holds its 2");
        handle.release();
        assertEquals(4, semaphore.availablePermits());
    }

    /** "release() releases exactly this handle's permits ... and nothing else", on the thread that holds plain permits too. */
    @Test
    void handleRelease_releasesOnlyItsOwnGrant() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(5);
        semaphore.acquire(2);
        PermitHandle first = semaphore.acquirePermits(1);
        PermitHandle second = semaphore.tryAcquirePermits(1, Duration.ZERO).orElseThrow();

        first.release();

        assertEquals(2, semaphore.availablePermits(), "only the first handle's permit came back");
        assertTrue(second.isHeld());
        semaphore.release(2);
        assertEquals(4, semaphore.availablePermits());
        second.release();
        assertEquals(5, semaphore.availablePermits());
    }

    /** acquirePermits(): waits in the line like acquire(), and a release serves it. */
    @Test
    void tryAcquirePermits_timed_waitsForARelease_thenHolds() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(2);
        PermitHandle first = semaphore.acquirePermits(2);
        Background<Optional<PermitHandle>> waiter = Background.start("waiter",
                () -> client().semaphore(name).tryAcquirePermits(2, Duration.ofSeconds(30)));
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        Await.until("the waiter is in the line", () -> admin.zcard(SemaphoreKeys.of(prefix, name).queue()) == 1);

        first.release();

        PermitHandle second = waiter.get().orElseThrow();
        assertTrue(second.isHeld());
        assertEquals(0, semaphore.availablePermits());
        second.close();
        assertEquals(2, semaphore.availablePermits());
    }

    /** tryAcquirePermits(n, Duration.ZERO) "tries once": empty when taken, and leaves no place in the line. */
    @Test
    void tryAcquirePermits_zero_whenTaken_isEmpty_andLeavesNoTrace() throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(1);
        PermitHandle held = semaphore.acquirePermits(1);

        assertEquals(Optional.empty(), semaphore.tryAcquirePermits(1, Duration.ZERO));
        assertEquals(Optional.empty(), semaphore.tryAcquirePermits(1, Duration.ofMillis(-5)), "negative: no wait");
        assertEquals(0, admin.exists(SemaphoreKeys.of(prefix, name).queue()), "no place left in the line");
        held.release();
    }

    /* --------------- leases --------------- */

    /** "the lease belongs to the client, not to the thread that acquired them, so the handle outlives that thread". */
    @Test
    void handleOutlivesTheThreadThatTookIt_renewedByTheWatchdog() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(redis.server().uri())
                .keyPrefix(prefix).lease(Duration.ofMillis(300)).lostHoldListener(lost::add).build());
        DistributedSemaphore semaphore = client.semaphore(name);
        semaphore.trySetPermits(2);
        Background<PermitHandle> taker = Background.start("taker", () -> semaphore.acquirePermits(2));
        PermitHandle handle = taker.get();
        taker.thread().join();

        for (int tick = 0; tick < 3; tick++) {
            RedisInternals.renewNow(client);   // the thread that took it is gone: the grant is the client's
        }

        assertTrue(handle.isHeld(), "not abandoned with its thread");
        assertNull(lost.poll());
        assertEquals(0, client().semaphore(name).availablePermits(), "Redis still counts them");
        handle.release();
        assertEquals(0, RedisInternals.watchdogEntries(client));
    }

    /**
     * Lost permits: "the client's lost-hold listener is told (... thread id -1 and a null handle),
     * isHeld() turns false and release() throws LostHoldException"; the semaphore's release() does
     * not reach them either.
     */
    @Test
    void permitsLost_reportedWithThreadIdMinusOne_notHeld_andReleaseThrowsLostHold() throws Exception {
        RedisSynchronizers client = client();
        DistributedSemaphore semaphore = client.semaphore(name);
        semaphore.trySetPermits(2);
        PermitHandle handle = semaphore.acquirePermits(2);
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        admin.del(SemaphoreKeys.of(prefix, name).leases());

        RedisInternals.renewNow(client);

        LostHold event = lost.poll(30, TimeUnit.SECONDS);
        assertNotNull(event);
        assertEquals(LostHold.Cause.GONE, event.cause());
        assertEquals("semaphore", event.kind());
        assertEquals(-1, event.threadId());
        assertNull(event.handle());
        assertFalse(handle.isHeld());
        assertTrue(handle.toString().contains("lost"), handle.toString());
        assertThrows(IllegalStateException.class, semaphore::release, "lost handle permits are not the semaphore's");
        LostHoldException thrown = assertThrows(LostHoldException.class, handle::release);
        assertTrue(thrown.getMessage().contains(name), thrown.getMessage());
        assertThrows(IllegalStateException.class, handle::release, "released (as lost) once already");
        handle.close();   // does nothing once released
        assertEquals(0, RedisInternals.watchdogEntries(client));
        Await.until("the lost permits are given back to the pool", () -> semaphore.availablePermits() == 2);
    }

    /** Permits Redis no longer has when the release comes (not yet seen by the watchdog): LostHoldException, and the listener is told. */
    @Test
    void release_ofPermitsRedisNoLongerHas_throwsLostHold_andTellsTheListener() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(1);
        PermitHandle handle = semaphore.acquirePermits(1);
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        String holds = SemaphoreKeys.of(prefix, name).holds();
        List<String> grants = admin.hkeys(holds).stream().filter(field -> !field.startsWith(":")).toList();
        assertEquals(1, grants.size(), grants.toString());
        admin.hdel(holds, grants.get(0));   // gone behind the client's back, its permit back in the pool
        admin.hincrby(holds, ":sum", -1);

        assertThrows(LostHoldException.class, handle::release);

        LostHold event = lost.poll(30, TimeUnit.SECONDS);
        assertNotNull(event);
        assertEquals(-1, event.threadId());
        assertFalse(handle.isHeld());
        assertEquals(1, semaphore.availablePermits());
    }

    /* --------------- release, close, releaseAsync --------------- */

    @Test
    void release_twice_throwsIllegalState_andCloseThenDoesNothing() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(1);
        PermitHandle handle = semaphore.acquirePermits(1);
        handle.release();

        IllegalStateException thrown = assertThrows(IllegalStateException.class, handle::release);
        assertTrue(thrown.getMessage().contains("already released"), thrown.getMessage());
        handle.close();
        assertEquals(1, semaphore.availablePermits());
    }

    /** close(): "Releases the permits if they are still held ...; does nothing if they were released before". */
    @Test
    void close_releases_andIsIdempotent() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(3);
        PermitHandle handle = semaphore.acquirePermits(3);
        try (PermitHandle resource = handle) {
            assertEquals(0, semaphore.availablePermits());
            assertTrue(resource.isHeld());
        }
        assertEquals(3, semaphore.availablePermits(), "released by close()");
        semaphore.acquire();
        handle.close();
        assertEquals(2, semaphore.availablePermits(), "the second close released nothing, the client's permit neither");
        semaphore.release();
    }

    /** releaseAsync(): "run on the client's executor ..., never on a network thread". */
    @Test
    void releaseAsync_releases_onTheClientsPool() throws Exception {
        // The release's reply is held until the dependent below is attached: otherwise a stage
        // already complete would run it on this thread, whichever thread completed the stage.
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        DistributedSemaphore semaphore = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .lostHoldListener(lost::add).build()).semaphore(name);
        semaphore.trySetPermits(1);
        PermitHandle handle = semaphore.acquirePermits(1);
        Thread[] ranOn = new Thread[1];

        proxy.holdReplies();
        CompletableFuture<Void> ran = handle.releaseAsync().thenRun(() -> ranOn[0] = Thread.currentThread())
                .toCompletableFuture();
        assertFalse(ran.isDone(), "the release's reply is held");
        proxy.pass();
        ran.get(30, TimeUnit.SECONDS);

        assertTrue(ranOn[0].getName().contains("-async-"), "completed on the client's pool: " + ranOn[0]);
        assertFalse(handle.isHeld());
        assertEquals(1, semaphore.availablePermits());
    }

    /** releaseAsync(): "exceptionally with what release() would throw": LostHoldException, then IllegalStateException. */
    @Test
    void releaseAsync_ofLostPermits_completesExceptionallyWithLostHold_thenWithIllegalState() throws Exception {
        RedisSynchronizers client = client();
        DistributedSemaphore semaphore = client.semaphore(name);
        semaphore.trySetPermits(1);
        PermitHandle handle = semaphore.acquirePermits(1);
        opened.commands(redis.server().uri()).del(SemaphoreKeys.of(prefix, name).leases());
        RedisInternals.renewNow(client);
        assertNotNull(lost.poll(30, TimeUnit.SECONDS));

        ExecutionException first = assertThrows(ExecutionException.class,
                () -> handle.releaseAsync().toCompletableFuture().get(30, TimeUnit.SECONDS));
        assertTrue(first.getCause() instanceof LostHoldException, first.getCause().toString());
        ExecutionException second = assertThrows(ExecutionException.class,
                () -> handle.releaseAsync().toCompletableFuture().get(30, TimeUnit.SECONDS));
        assertTrue(second.getCause() instanceof IllegalStateException, second.getCause().toString());
    }

    /** A closed client: release() throws IllegalStateException and releaseAsync() completes with it, not a RejectedExecutionException. */
    @Test
    void release_afterTheClientClosed_throwsIllegalState() throws Exception {
        RedisSynchronizers client = client();
        DistributedSemaphore semaphore = client.semaphore(name);
        semaphore.trySetPermits(1);
        PermitHandle handle = semaphore.acquirePermits(1);
        client.close();

        assertThrows(IllegalStateException.class, handle::release);
        ExecutionException async = assertThrows(ExecutionException.class,
                () -> handle.releaseAsync().toCompletableFuture().get(30, TimeUnit.SECONDS));
        assertTrue(async.getCause() instanceof IllegalStateException, async.getCause().toString());
        assertTrue(async.getCause().getMessage().contains("closed"), async.getCause().getMessage());
    }

    /* --------------- bad input --------------- */

    /** "Bad input ... throws a clear exception naming the argument"; nothing changes in Redis. */
    @Test
    void badArguments_throwNamingThem_andChangeNothing() throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(2);
        List<String> before = admin.keys(prefix + "*");

        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> semaphore.acquirePermits(0));
        assertTrue(zero.getMessage().contains("permits") && zero.getMessage().contains("0"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> semaphore.acquirePermits(-1));
        assertThrows(IllegalArgumentException.class, () -> semaphore.tryAcquirePermits(0, Duration.ZERO));
        NullPointerException noWait = assertThrows(NullPointerException.class,
                () -> semaphore.tryAcquirePermits(1, null));
        assertTrue(noWait.getMessage().contains("wait"), noWait.getMessage());

        assertEquals(before, admin.keys(prefix + "*"), "nothing written");
        assertEquals(2, semaphore.availablePermits());
    }

    /** "InterruptedException if interrupted on entry ...; nothing is held then." */
    @Test
    void acquirePermits_interruptedOnEntry_throwsAndTakesNothing() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name);
        semaphore.trySetPermits(1);

        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> semaphore.acquirePermits(1));
        assertFalse(Thread.interrupted(), "interrupt status cleared");
        assertEquals(1, semaphore.availablePermits());
    }
}
