package dev.synchronizers.shedlock;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisCluster;
import java.util.UUID;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * ShedLock's own provider suite on a Redis Cluster of three masters and three replicas: the suite's
 * lock names hash to different slots, so its locks live on different masters.
 */
@Tag("topology")
class SynchronizersLockProviderClusterTest extends ProviderSuite {

    private static final String PREFIX = "shedlock-cluster-" + UUID.randomUUID();
    private static RedisCluster cluster;
    private static RedisSynchronizers client;
    private static RedisSynchronizers observer;
    private static SynchronizersLockProvider provider;

    @BeforeAll
    static void connect() {
        cluster = RedisCluster.start();
        String[] seeds = cluster.seedUris().toArray(String[]::new);
        client = RedisSynchronizers.builder().cluster(seeds).keyPrefix(PREFIX).build();
        observer = RedisSynchronizers.builder().cluster(seeds).keyPrefix(PREFIX).build();
        provider = new SynchronizersLockProvider(client);
    }

    @AfterAll
    static void disconnect() {
        try {
            client.close();
            observer.close();
        } finally {
            cluster.close();
        }
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    DistributedLock observed(String name) {
        return observer.lock(name);
    }
}
