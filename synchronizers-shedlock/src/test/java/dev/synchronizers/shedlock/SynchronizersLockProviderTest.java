package dev.synchronizers.shedlock;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import java.util.UUID;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's own provider suite ({@code shedlock-test-support}) on one standalone server: the
 * provider under test is one client's, and {@link #assertLocked}/{@link #assertUnlocked} ask a
 * second client.
 */
@Tag("redis")
class SynchronizersLockProviderTest extends AbstractExtensibleLockProviderIntegrationTest {

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
    protected void assertUnlocked(String lockName) {
        assertFalse(observer.lock(lockName).isLocked(), lockName + " is free for another client");
    }

    @Override
    protected void assertLocked(String lockName) {
        assertTrue(observer.lock(lockName).isLocked(), lockName + " is held, as another client sees it");
    }
}
