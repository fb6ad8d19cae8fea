package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link DistributedLock#acquireAsync()} and {@link DistributedLock#tryAcquireAsync(Duration)}: many
 * pending acquisitions of one client without a thread each, completions off the network threads,
 * cancellation, timeouts and a closed client.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockAsyncTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    LockAsyncTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    private RedisSynchronizers client(String uri) {
        return opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).build());
    }

    /**
     * 200 pending acquisitions of one client on one name, each incrementing a plain counter and
     * releasing: no update is lost, all complete, none on a network thread, and one thread waits
     * for all of them.
     */
    @Test
    void acquireAsync_200PendingOnOneName_excludeEachOther_allComplete_offTheNetworkThreads() throws Exception {
        RedisSynchronizers client = client(redis.server().uri());
        DistributedLock lock = client.lock(name);
        LockHandle blocker = lock.acquire();   // every acquisition below is pending at first
        int[] counter = {0};
        Set<String> completedOn = ConcurrentHashMap.newKeySet();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            done.add(lock.acquireAsync().thenAccept(handle -> {
                completedOn.add(Thread.currentThread().getName());
                int seen = counter[0];
                counter[0] = seen + 1;   // a lost update if two held it at once
                handle.release();
            }).toCompletableFuture());
        }
        assertEquals(1, threadsNamed(client.clientId().substring(0, 8) + "-async-wait-"),
                "one thread waits for all 200");

        blocker.release();
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);

        assertEquals(200, counter[0]);
        for (String thread : completedOn) {
            assertTrue(thread.contains("-async-"), "completed on the client's executor, not " + thread);
        }
        assertFalse(lock.isLocked());
    }

    @Test
    void tryAcquireAsync_heldElsewhere_completesEmptyAfterTheWait_andLeavesNothingHeld() throws Exception {
        DistributedLock other = client(redis.server().uri()).lock(name);
        other.lock();
        DistributedLock lock = client(redis.server().uri()).lock(name);

        Optional<LockHandle> got = lock.tryAcquireAsync(Duration.ofMillis(200)).toCompletableFuture()
                .get(30, TimeUnit.SECONDS);

        assertEquals(Optional.empty(), got);
        other.unlock();
        assertTrue(lock.tryLock(), "nothing was left held by the timed-out acquisition");
        lock.unlock();
    }

    @Test
    void tryAcquireAsync_behindAnUntimedOne_timesOutOnItsOwnDeadline() throws Exception {
        DistributedLock other = client(redis.server().uri()).lock(name);
        other.lock();
        DistributedLock lock = client(redis.server().uri()).lock(name);
        CompletionStage<LockHandle> untimed = lock.acquireAsync();

        Optional<LockHandle> got = lock.tryAcquireAsync(Duration.ofMillis(200)).toCompletableFuture()
                .get(30, TimeUnit.SECONDS);

        assertEquals(Optional.empty(), got);
        other.unlock();
        untimed.toCompletableFuture().get(30, TimeUnit.SECONDS).release();
    }

    @Test
    void cancel_ofAPendingAcquisition_withdrawsIt() throws Exception {
        DistributedLock other = client(redis.server().uri()).lock(name);
        other.lock();
        DistributedLock lock = client(redis.server().uri()).lock(name);
        CompletableFuture<LockHandle> first = lock.acquireAsync().toCompletableFuture();
        CompletableFuture<LockHandle> second = lock.acquireAsync().toCompletableFuture();

        assertTrue(first.cancel(true));
        assertTrue(second.cancel(true));
        other.unlock();

        assertTrue(other.tryLock(30, TimeUnit.SECONDS), "the withdrawn acquisitions took nothing");
        other.unlock();
        assertTrue(first.isCancelled() && second.isCancelled());
    }

    /**
     * The race between a cancel and a grant, decided by the fault proxy: the acquisition runs in
     * Redis and takes the lock, its reply is held, the stage is cancelled, then the reply goes
     * through. The grant won the race in Redis; the client gives it back, so nothing stays held.
     */
    @Test
    void cancel_racingAGrantWhoseReplyIsHeld_givesTheGrantBack() throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        DistributedLock lock = client(proxy.uri()).lock(name);
        String key = LockKeys.of(prefix, name).lock();
        proxy.holdReplies();

        CompletableFuture<LockHandle> stage = lock.acquireAsync().toCompletableFuture();
        Await.until("the acquisition ran in Redis and took the lock", () -> admin.exists(key) == 1);
        assertTrue(stage.cancel(true));
        proxy.pass();

        Await.until("the grant is given back", () -> admin.exists(key) == 0);
        DistributedLock other = client(redis.server().uri()).lock(name);
        assertTrue(other.tryLock());
        other.unlock();
        assertTrue(stage.isCancelled());
    }

    /** The ways a caller can complete the stage {@code acquireAsync()} returned, other than waiting for it. */
    enum CallerCompletion {
        OR_TIMEOUT(stage -> stage.orTimeout(1, TimeUnit.MILLISECONDS)),
        COMPLETE_ON_TIMEOUT(stage -> stage.completeOnTimeout(null, 1, TimeUnit.MILLISECONDS)),
        COMPLETE(stage -> stage.complete(null)),
        COMPLETE_EXCEPTIONALLY(stage -> stage.completeExceptionally(new IllegalStateException("given up"))),
        COMPLETE_ASYNC(stage -> stage.completeAsync(() -> null)),
        OBTRUDE_VALUE(stage -> stage.obtrudeValue(null)),
        OBTRUDE_EXCEPTION(stage -> stage.obtrudeException(new IllegalStateException("given up"))),
        CANCEL(stage -> stage.cancel(false));

        final Consumer<CompletableFuture<LockHandle>> complete;

        CallerCompletion(Consumer<CompletableFuture<LockHandle>> complete) {
            this.complete = complete;
        }
    }

    static Stream<Arguments> callerCompletions() {
        return Stream.of(false, true).flatMap(fair -> Arrays.stream(CallerCompletion.values())
                .map(way -> Arguments.of(fair, way)));
    }

    /**
     * A stage that its caller completes before the lock is free, in any way (here {@code
     * orTimeout}, the usual way to bound a wait, and each other way a {@code CompletableFuture}
     * can be completed), withdraws the acquisition as {@code cancel()} does: it leaves the lock's
     * queue at once, and when the holder unlocks, the next acquisition gets the lock without the
     * withdrawn one ever taking it.
     */
    @ParameterizedTest(name = "fair={0} {1}")
    @MethodSource("callerCompletions")
    void acquireAsync_stageCompletedByTheCaller_withdrawsIt(boolean fair, CallerCompletion way) throws Exception {
        String uri = redis.server().uri();
        DistributedLock holder = lockOf(client(uri), fair);
        holder.lock();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DistributedLock lock = lockOf(opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .meterRegistry(registry).build()), fair);
        CompletableFuture<LockHandle> stage = lock.acquireAsync().toCompletableFuture();
        Await.until("the acquisition waits in the lock's queue", lock::hasQueuedThreads);

        way.complete.accept(stage);

        Await.until("the stage is complete", stage::isDone);
        Await.until("the withdrawn acquisition left the lock's queue", () -> !lock.hasQueuedThreads());
        holder.unlock();
        DistributedLock next = lockOf(client(uri), fair);
        assertTrue(next.tryLock(30, TimeUnit.SECONDS));
        next.unlock();
        assertEquals(0, registry.find("synchronizers.wait").tag("outcome", "acquired").timers().stream()
                .mapToLong(Timer::count).sum(), "the withdrawn acquisition never took the lock");
        assertFalse(lock.isLocked());
    }

    /**
     * The race between a caller's own completion of the stage and a grant, decided by the fault
     * proxy: the acquisition runs in Redis and takes the lock, its reply is held, the caller
     * completes the stage with a value of its own, then the reply goes through. The caller's value
     * stands, and the grant is given back: no hold is left behind for nobody.
     */
    @Test
    void complete_racingAGrantWhoseReplyIsHeld_keepsTheCallersValue_andGivesTheGrantBack() throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        DistributedLock lock = client(proxy.uri()).lock(name);
        String key = LockKeys.of(prefix, name).lock();
        proxy.holdReplies();

        CompletableFuture<LockHandle> stage = lock.acquireAsync().toCompletableFuture();
        Await.until("the acquisition ran in Redis and took the lock", () -> admin.exists(key) == 1);
        assertTrue(stage.complete(null));
        proxy.pass();

        Await.until("the grant is given back", () -> admin.exists(key) == 0);
        DistributedLock other = client(redis.server().uri()).lock(name);
        assertTrue(other.tryLock());
        other.unlock();
        assertNull(stage.get(30, TimeUnit.SECONDS), "the caller's own value");
    }

    @Test
    void close_failsPendingStagesWithIllegalState() throws Exception {
        DistributedLock other = client(redis.server().uri()).lock(name);
        other.lock();
        RedisSynchronizers client = client(redis.server().uri());
        CompletableFuture<LockHandle> pending = client.lock(name).acquireAsync().toCompletableFuture();
        CompletableFuture<LockHandle> queued = client.lock(name).acquireAsync().toCompletableFuture();

        client.close();

        for (CompletableFuture<LockHandle> stage : List.of(pending, queued)) {
            ExecutionException thrown = assertThrows(ExecutionException.class, () -> stage.get(30, TimeUnit.SECONDS));
            assertTrue(thrown.getCause() instanceof IllegalStateException, thrown.getCause().toString());
        }
        assertThrows(IllegalStateException.class, () -> client.lock(name));
        other.unlock();
    }

    @Test
    void tryAcquireAsync_nullWait_throws() {
        DistributedLock lock = client(redis.server().uri()).lock(name);
        assertThrows(NullPointerException.class, () -> lock.tryAcquireAsync(null));
    }

    private DistributedLock lockOf(RedisSynchronizers client, boolean fair) {
        return fair ? client.fairLock(name) : client.lock(name);
    }

    private static long threadsNamed(String part) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().contains(part)).count();
    }
}
