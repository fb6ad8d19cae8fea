package dev.synchronizers.redis.topology;

import dev.synchronizers.fixture.Opened;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisCluster;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** {@link HandleLossOnTopology}'s loss tests on a Redis Cluster of 3 masters and 3 replicas, started once for the class. */
@Tag("topology")
class ClusterHandleLossTest extends HandleLossOnTopology {

    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    RedisSynchronizers.Builder topology() {
        return RedisSynchronizers.builder().cluster(cluster.seedUris().toArray(String[]::new));
    }

    @Override
    List<Integer> dataPorts() {
        return cluster.nodes().stream().map(RedisServer::port).toList();
    }

    @Override
    RedisCommands<String, String> masterOf(String key, Opened opened) {
        return opened.commands(cluster.masterOf(key).uri());
    }
}
