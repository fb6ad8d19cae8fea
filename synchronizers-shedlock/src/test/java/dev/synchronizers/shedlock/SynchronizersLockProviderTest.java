package dev.synchronizers.shedlock;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import java.util.UUID;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's own provider suite on one standalone server: the provider under test is one client's,
 * and {@link #assertLocked}/{@link #assertUnlocked} ask a second client.
 */
@Tag("redis")
class SynchronizersLockProviderTest extends ProviderSuite {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String PREFIX = "shedlock-suite-" + UUID.randomUUID();
    private static RedisSynchronizers client;
    private static RedisSynchronizers observer;
    private static SynchronizersLockProvider provider;

    @BeforeAll
    static void connect() {
        client = RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(PREFIX).build();
        observer = RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(PREFIX).build();
        provider = new SynchronizersLockProvider(client);
    }

    @AfterAll
    static void disconnect() {
        try {
            client.close();
        } finally {
            observer.close();
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
