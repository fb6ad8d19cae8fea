package dev.synchronizers.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.testkit.RedisCluster;
import dev.synchronizers.testkit.RedisSentinels;
import dev.synchronizers.testkit.RedisServer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code synchronizers.sentinel.*} and {@code synchronizers.cluster.nodes} (and Boot's own Sentinel
 * and Cluster connection details) on the testkit's real Sentinel set (a master, two replicas, three
 * sentinels) and Redis Cluster (three masters, no replicas: enough to route by slot). Each context
 * takes a lock, reads it back on the node that must hold it, and reports UP. Failover is the
 * library's own topology tests' subject, not this one's.
 */
@Tag("redis")
class SynchronizersTopologyPropertiesTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SynchronizersAutoConfiguration.class));

    /** synchronizers.sentinel.master + nodes, and spring.data.redis.sentinel.*: the client locks on the master. */
    @Test
    void sentinel_propertiesAndBootDetails_lockOnTheMaster() {
        try (RedisSentinels sentinels = RedisSentinels.start()) {
            String nodes = sentinels.sentinels().stream().map(s -> s.host() + ":" + s.port())
                    .collect(Collectors.joining(","));
            runner.withPropertyValues("synchronizers.sentinel.master=" + RedisSentinels.MASTER_NAME,
                    "synchronizers.sentinel.nodes=" + nodes, "synchronizers.key-prefix=boot-sentinel")
                    .run(context -> lockAndCheck(context.getBean(Synchronizers.class), sentinels.master(),
                            "boot-sentinel", context.getBean(SynchronizersHealthIndicator.class)));
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                            SynchronizersAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.sentinel.master=" + RedisSentinels.MASTER_NAME,
                            "spring.data.redis.sentinel.nodes=" + nodes, "synchronizers.key-prefix=boot-sentinel-details")
                    .run(context -> lockAndCheck(context.getBean(Synchronizers.class), sentinels.master(),
                            "boot-sentinel-details", context.getBean(SynchronizersHealthIndicator.class)));
        }
    }

    /** synchronizers.cluster.nodes, and spring.data.redis.cluster.nodes: the client locks on the slot's master. */
    @Test
    void cluster_propertiesAndBootDetails_lockOnTheSlotsMaster() {
        try (RedisCluster cluster = RedisCluster.start(RedisCluster.Options.defaults().replicasPerMaster(0))) {
            String nodes = cluster.masters().stream().map(s -> s.host() + ":" + s.port())
                    .collect(Collectors.joining(","));
            runner.withPropertyValues("synchronizers.cluster.nodes=" + nodes, "synchronizers.key-prefix=boot-cluster")
                    .run(context -> lockAndCheck(context.getBean(Synchronizers.class),
                            cluster.masterOf("boot-cluster:lock:{topology}"), "boot-cluster",
                            context.getBean(SynchronizersHealthIndicator.class)));
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                            SynchronizersAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.cluster.nodes=" + nodes,
                            "synchronizers.key-prefix=boot-cluster-details")
                    .run(context -> lockAndCheck(context.getBean(Synchronizers.class),
                            cluster.masterOf("boot-cluster-details:lock:{topology}"), "boot-cluster-details",
                            context.getBean(SynchronizersHealthIndicator.class)));
        }
    }

    private static void lockAndCheck(Synchronizers synchronizers, RedisServer holder, String prefix,
            SynchronizersHealthIndicator health) {
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
        DistributedLock lock = synchronizers.lock("topology");
        lock.lock();
        try {
            assertThat(SynchronizersAutoConfigurationTest.pttl(holder, prefix + ":lock:{topology}")).isPositive();
        } finally {
            lock.unlock();
        }
    }
}
