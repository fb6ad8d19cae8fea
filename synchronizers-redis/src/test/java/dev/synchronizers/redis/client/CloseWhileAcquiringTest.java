package dev.synchronizers.redis.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.semaphore.SemaphoreKeys;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link RedisSynchronizers#close()} while a thread's acquisition has a command in flight (its
 * reply held back by a proxy): the thread fails with {@link IllegalStateException}, as a waiter
 * that sleeps does, not with the {@code SynchronizerUnavailableException} of the connection that
 * close() shut under it.
 */
@Tag("redis")
class CloseWhileAcquiringTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened = new Opened();
    private String prefix;
    private String name;
    private RedisCommands<String, String> admin;
    private FaultProxy proxy;
    private RedisSynchronizers client;

    @BeforeEach
    void start(TestInfo test) {
        prefix = "cw-" + UUID.randomUUID().toString().substring(0, 8);
        name = test.getTestMethod().orElseThrow().getName();
        admin = opened.commands(redis.server().uri());
        proxy = opened.add(FaultProxy.start(redis.server().port()));
        client = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(5)).build());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.pass();
        opened.closeAll();
    }

    @Test
    void lock_timedTryLockInFlight_closeFailsItWithIllegalStateException() throws Exception {
        loadScripts();
        String key = LockKeys.of(prefix, name).lock();
        assertClosedUnder(() -> client.lock(name).tryLock(30, TimeUnit.SECONDS),
                () -> admin.exists(key) == 1L);
    }

    @Test
    void lock_lockInFlight_closeFailsItWithIllegalStateException() throws Exception {
        loadScripts();
        String key = LockKeys.of(prefix, name).lock();
        assertClosedUnder(() -> {
            client.lock(name).lock();
            return true;
        }, () -> admin.exists(key) == 1L);
    }

    @Test
    void semaphore_timedTryAcquireInFlight_closeFailsItWithIllegalStateException() throws Exception {
        loadScripts();
        assertTrue(client.semaphore(name).trySetPermits(1));
        String key = SemaphoreKeys.of(prefix, name).holds();
        assertClosedUnder(() -> client.semaphore(name).tryAcquire(30, TimeUnit.SECONDS),
                () -> admin.exists(key) == 1L);
    }

    @Test
    void latch_timedAwaitInFlight_closeFailsItWithIllegalStateException() throws Exception {
        assertTrue(client.countDownLatch(name).trySetCount(1));
        admin.configResetstat();
        assertClosedUnder(() -> client.countDownLatch(name).await(30, TimeUnit.SECONDS),
                () -> RedisState.calls(admin.info("commandstats"), "get") >= 2);
    }

    /**
     * A thread waits in the semaphore's line in Redis when its client is closed: it fails, and
     * leaves the line before the client's connections close, so that a permit released afterwards
     * goes back to the pool, not to a waiter that is gone (before, it was granted to the dead
     * place and kept from everyone until the place's lease ran out).
     */
    @Test
    void semaphore_waiterInRedisLine_closeLeavesTheLine_soNoPermitGoesToIt() throws Exception {
        RedisSynchronizers other = opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .build());
        DistributedSemaphore held = other.semaphore(name);
        assertTrue(held.trySetPermits(1));
        assertTrue(held.tryAcquire());
        Background<Boolean> waiter = Background.start("waiter", () -> {
            client.semaphore(name).acquire();
            return true;
        });
        String line = SemaphoreKeys.of(prefix, name).queue();
        Await.until("the waiter is in the line in Redis", () -> admin.zcard(line) == 1L);
        Await.parked(waiter.thread());

        client.close();

        assertInstanceOf(IllegalStateException.class, waiter.failure());
        assertEquals(0L, admin.zcard(line), "the closed client's waiter left the line");
        held.release();
        assertEquals(1, held.availablePermits(), "the released permit is free, not granted to the gone waiter");
    }

    /**
     * Runs the scripts under test once on other names, so that the server has them: a NOSCRIPT
     * reply held back would keep the script itself from ever being sent.
     */
    private void loadScripts() throws Exception {
        client.lock(name + "-load").lock();
        client.lock(name + "-load").unlock();
        assertTrue(client.semaphore(name + "-load").trySetPermits(1));
        assertTrue(client.semaphore(name + "-load").tryAcquire(1, TimeUnit.SECONDS));
        client.semaphore(name + "-load").release();
    }

    /**
     * Holds back every reply, starts {@code acquisition} on a thread, waits until Redis has run its
     * command ({@code ran}) and the thread waits for the reply, closes the client, and expects the
     * thread to fail with IllegalStateException.
     */
    private void assertClosedUnder(Callable<Boolean> acquisition, BooleanSupplier ran) throws Exception {
        proxy.holdReplies();
        Background<Boolean> caller = Background.start("caller", acquisition);
        Await.until("Redis ran the acquisition's command", ran);
        Await.parked(caller.thread());

        client.close();

        Throwable failure = caller.failure();
        assertInstanceOf(IllegalStateException.class, failure, "what the caller got: " + failure);
    }
}
