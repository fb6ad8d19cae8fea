package dev.synchronizers.shedlock;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisSentinels;
import java.util.UUID;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * ShedLock's own provider suite under Sentinel (a master, two replicas, three sentinels): both the
 * provider's client and the observing client find the master through the sentinels
 * ({@code redis-sentinel://}).
 */
@Tag("topology")
class SynchronizersLockProviderSentinelTest extends ProviderSuite {

    private static final String PREFIX = "shedlock-sentinel-" + UUID.randomUUID();
    private static RedisSentinels sentinels;
    private static RedisSynchronizers client;
    private static RedisSynchronizers observer;
    private static SynchronizersLockProvider provider;

    @BeforeAll
    static void connect() {
        sentinels = RedisSentinels.start();
        client = RedisSynchronizers.builder().uri(sentinels.sentinelUri()).keyPrefix(PREFIX).build();
        observer = RedisSynchronizers.builder().uri(sentinels.sentinelUri()).keyPrefix(PREFIX).build();
        provider = new SynchronizersLockProvider(client);
    }

    @AfterAll
    static void disconnect() {
        try {
            client.close();
            observer.close();
        } finally {
            sentinels.close();
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
