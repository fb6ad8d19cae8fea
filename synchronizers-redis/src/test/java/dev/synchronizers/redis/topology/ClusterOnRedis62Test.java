package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.testkit.RedisCluster;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * A Redis Cluster of the bundled Redis 6.2 (3 masters, no replicas), which has no sharded Pub/Sub:
 * the client detects it, subscribes with SUBSCRIBE on the slot's master, the scripts PUBLISH, and
 * waiters are woken as on Redis 7.
 */
@Tag("topology")
class ClusterOnRedis62Test {

    private static RedisCluster cluster;

    private final Opened opened = new Opened();
    private String prefix;
    private String name;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start(RedisCluster.Options.defaults().replicasPerMaster(0).bundled());
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void names(TestInfo test) {
        prefix = "c62-" + UUID.randomUUID().toString().substring(0, 8);
        name = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void close() throws Exception {
        opened.closeAll();
    }

    @Test
    void release_onRedis62_classicPubSubOnTheSlotsMasterWakesTheWaiter() throws Exception {
        RedisServer master = cluster.masterOf(LockKeys.of(prefix, name).lock());
        RedisCommands<String, String> onMaster = opened.commands(master.uri());
        assertFalse(RedisState.shardedPubSub(onMaster), "the bundled server is 6.2: " + master);
        DistributedLock holder = client().lock(name);
        RedisSynchronizers waitingClient = client();
        DistributedLock waiting = waitingClient.lock(name);
        // A release hands the lock to the waiting client on that client's own channel.
        String channel = LockKeys.of(prefix, name).clientWakeups(waitingClient.clientId());
        holder.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            waiting.lock();
            waiting.unlock();
            return true;
        });
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        assertEquals(1L, onMaster.pubsubNumsub(channel).getOrDefault(channel, 0L), "subscribed on the slot's master");
        onMaster.configResetstat();

        holder.unlock();

        assertTrue(waiter.get(), "the waiter acquired");
        assertEquals(1, RedisState.calls(onMaster.info("commandstats"), "publish"), "one classic PUBLISH");
    }

    @Test
    void semaphore_onRedis62_releaseServesAWaiterOfAnotherClient() throws Exception {
        DistributedSemaphore holder = client().semaphore(name);
        DistributedSemaphore waiting = client().semaphore(name);
        assertTrue(holder.trySetPermits(1));
        holder.acquire();
        Background<Boolean> waiter = Background.start("waiter", () -> waiting.tryAcquire(30, TimeUnit.SECONDS));
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));

        holder.release();

        assertTrue(waiter.get());
        waiting.release();
    }

    private RedisSynchronizers client() {
        return opened.add(RedisSynchronizers.builder().cluster(cluster.seedUris().toArray(String[]::new))
                .keyPrefix(prefix).lease(Duration.ofSeconds(60)).build());
    }
}
