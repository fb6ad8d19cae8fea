package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

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

    private static long threadsNamed(String part) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().contains(part)).count();
    }
}
