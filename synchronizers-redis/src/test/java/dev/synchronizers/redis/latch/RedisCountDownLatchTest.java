package dev.synchronizers.redis.latch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
import org.junit.jupiter.api.function.Executable;

/**
 * What only the Redis latch has to get right: waiters in every client return once it reaches zero,
 * a zero crossing is seen by a waiter that re-checks late, and a key of another type is an error
 * that leaves the key alone.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class RedisCountDownLatchTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    RedisCountDownLatchTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /** 4 clients await; a fifth counts down from 3; all four return, and the key is gone at zero. */
    @Test
    void await_4ClientsAndAFifthCountingDown_allReturn() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        DistributedCountDownLatch counter = client(uri, 30_000, new LinkedBlockingQueue<>()).countDownLatch(name);
        assertTrue(counter.trySetCount(3));
        List<Background<Boolean>> waiters = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            DistributedCountDownLatch latch = client(uri, 30_000, new LinkedBlockingQueue<>()).countDownLatch(name);
            waiters.add(Background.start("waiter-" + c, () -> {
                latch.await();
                return true;
            }));
        }
        for (Background<Boolean> waiter : waiters) {
            Await.until(waiter.thread().getName() + " sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        }
        counter.countDown();
        counter.countDown();
        assertEquals(1, counter.getCount());
        counter.countDown();
        for (Background<Boolean> waiter : waiters) {
            assertTrue(waiter.get());
        }
        assertEquals(0, admin.exists(prefix + ":latch:{" + name + "}"), "no key at zero");
        assertTrue(counter.await(0, TimeUnit.SECONDS), "awaiting an open latch returns at once");
    }

    /**
     * CountDownLatch: await() returns once the count reached zero after it started waiting. Here
     * the latch is counted down to zero and at once armed again while the waiter's wake-up is
     * still on its way (its replies are held by a proxy): the waiter must return true, not keep
     * waiting for a count that was re-armed after the crossing it waited for.
     */
    @Test
    void await_countReachesZeroAndIsReArmedBeforeTheWaiterReChecks_returnsTrue() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers waiterClient = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(60)).build());
        RedisSynchronizers other = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(60)).build());
        DistributedCountDownLatch latch = other.countDownLatch(name);
        assertTrue(latch.trySetCount(1));
        String channel = LatchKeys.of(prefix, name).wakeups();

        Background<Boolean> waiter = Background.start("waiter",
                () -> waiterClient.countDownLatch(name).await(20, TimeUnit.SECONDS));
        Await.until("the waiter is subscribed", () -> RedisState.subscribers(admin, channel) == 1L);
        Await.parked(waiter.thread());
        proxy.holdReplies();
        latch.countDown();
        assertTrue(latch.trySetCount(1), "armed again before the waiter re-checks");
        proxy.pass();

        assertTrue(waiter.get(), "the waiter saw the count reach zero");
        latch.countDown();
    }
    /**
     * A name whose latch key holds a list: await() with a timeout throws the same clear
     * exception as getCount() and countDown(), rather than report the count at zero, and the
     * list is left as it was.
     */
    @Test
    void await_keyHoldsAList_throwsWrongTypeLikeGetCountAndLeavesTheKeyAlone() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(redis.server().uri())
                .keyPrefix(prefix).build());
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        String key = LatchKeys.of(prefix, name).latch();
        admin.rpush(key, "someone", "else's");
        DistributedCountDownLatch latch = client.countDownLatch(name);

        SynchronizerException getCount = assertThrows(SynchronizerException.class, latch::getCount);
        SynchronizerException countDown = assertThrows(SynchronizerException.class, latch::countDown);
        SynchronizerException await = assertThrows(SynchronizerException.class,
                () -> latch.await(1, TimeUnit.SECONDS));
        SynchronizerException awaitForever = assertThrows(SynchronizerException.class, latch::await);

        for (SynchronizerException thrown : List.of(getCount, countDown, await, awaitForever)) {
            assertTrue(thrown.getMessage().contains("WRONGTYPE") && thrown.getMessage().contains(name),
                    thrown.getMessage());
        }
        assertEquals(List.of("someone", "else's"), admin.lrange(key, 0, -1));
        assertEquals(-1L, admin.pttl(key), "no TTL added");
    }

    /**
     * A name whose latch key holds a string that is no count: await(), getCount() and countDown()
     * throw a clear exception naming the latch, and the string is left as it was.
     */
    @Test
    void await_keyHoldsAStringThatIsNoCount_throwsLikeGetCountAndLeavesTheKeyAlone() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(redis.server().uri())
                .keyPrefix(prefix).build());
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        String key = LatchKeys.of(prefix, name).latch();
        admin.set(key, "someone else's value");
        DistributedCountDownLatch latch = client.countDownLatch(name);

        for (Executable call : List.<Executable>of(latch::getCount, latch::countDown,
                () -> latch.await(1, TimeUnit.SECONDS), latch::await)) {
            SynchronizerException thrown = assertThrows(SynchronizerException.class, call);
            assertTrue(thrown.getMessage().contains(name), thrown.getMessage());
        }
        assertEquals("someone else's value", admin.get(key));
        assertEquals(-1L, admin.pttl(key), "no TTL added");
    }

    /* --------------- helpers --------------- */

    /**
     * 50 pending awaitAsync() stages of one client complete once another client counts the latch
     * down to zero, on the client's executor; a cancelled one is withdrawn; close() fails the rest.
     */
    @Test
    void awaitAsync_pendingStagesCompleteAtZero_cancelWithdraws_closeFailsTheRest() throws Exception {
        String uri = redis.server().uri();
        DistributedCountDownLatch counter = client(uri, 30_000, new LinkedBlockingQueue<>()).countDownLatch(name);
        assertTrue(counter.trySetCount(2));
        DistributedCountDownLatch latch = client(uri, 30_000, new LinkedBlockingQueue<>()).countDownLatch(name);
        List<CompletableFuture<String>> waits = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            waits.add(latch.awaitAsync().thenApply(ignored -> Thread.currentThread().getName()).toCompletableFuture());
        }
        CompletableFuture<Void> cancelled = latch.awaitAsync().toCompletableFuture();
        assertTrue(cancelled.cancel(true));

        counter.countDown();
        counter.countDown();

        for (CompletableFuture<String> wait : waits) {
            assertTrue(wait.get(30, TimeUnit.SECONDS).contains("-async-"), "completed on the client's executor");
        }
        assertTrue(cancelled.isCancelled());
        RedisSynchronizers closing = client(uri, 30_000, new LinkedBlockingQueue<>());
        assertTrue(closing.countDownLatch(name + "-2").trySetCount(1));
        CompletableFuture<Void> pending = closing.countDownLatch(name + "-2").awaitAsync().toCompletableFuture();
        closing.close();
        ExecutionException failed = assertThrows(ExecutionException.class, () -> pending.get(30, TimeUnit.SECONDS));
        assertTrue(failed.getCause() instanceof IllegalStateException, failed.getCause().toString());
    }

    /**
     * An awaitAsync() stage that its caller completes ({@code orTimeout}, the usual way to bound a
     * wait) withdraws the wait as {@code cancel()} does: the client stops listening for the latch.
     */
    @Test
    void awaitAsync_stageTimedOutByTheCaller_withdrawsTheWait() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        String channel = LatchKeys.of(prefix, name).wakeups();
        DistributedCountDownLatch counter = client(uri, 30_000, new LinkedBlockingQueue<>()).countDownLatch(name);
        assertTrue(counter.trySetCount(1));
        DistributedCountDownLatch latch = client(uri, 30_000, new LinkedBlockingQueue<>()).countDownLatch(name);
        CompletableFuture<Void> stage = latch.awaitAsync().toCompletableFuture();
        Await.until("the wait listens for the latch", () -> RedisState.subscribers(admin, channel) == 1);

        stage.orTimeout(1, TimeUnit.MILLISECONDS);

        ExecutionException timedOut = assertThrows(ExecutionException.class, () -> stage.get(30, TimeUnit.SECONDS));
        assertTrue(timedOut.getCause() instanceof TimeoutException, timedOut.getCause().toString());
        Await.until("the withdrawn wait stopped listening", () -> RedisState.subscribers(admin, channel) == 0);
        assertEquals(1, latch.getCount());
    }

    private RedisSynchronizers client(String uri, long leaseMillis, BlockingQueue<LostHold> lost) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(Duration.ofMillis(leaseMillis)).lostHoldListener(lost::add).build();
        opened.add(client);
        return client;
    }
}
