package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What only the Redis latch has to get right: a zero crossing seen by a waiter that re-checks late. */
@Tag("redis")
class RedisCountDownLatchTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened = new Opened();
    private String prefix;
    private String name;

    @BeforeEach
    void names(TestInfo test) {
        prefix = "cl-" + UUID.randomUUID().toString().substring(0, 8);
        name = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void close() throws Exception {
        opened.closeAll();
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
}
