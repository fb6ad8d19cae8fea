package dev.synchronizers.shedlock;

import static java.time.Duration.ZERO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.testkit.RedisExtension;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's own provider suite ({@code shedlock-test-support}) on a {@link Redlock} of three
 * standalone servers: the provider is {@code new SynchronizersLockProvider(redlock::lock)}, and
 * {@link #assertLocked}/{@link #assertUnlocked} ask a second Redlock client.
 */
@Tag("topology")
class SynchronizersLockProviderRedlockTest extends ProviderSuite {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String PREFIX = "shedlock-redlock-" + UUID.randomUUID();
    private static Redlock client;
    private static Redlock observer;
    private static SynchronizersLockProvider provider;

    @BeforeAll
    static void connect() {
        String[] uris = Stream.generate(redis::startManaged).limit(3).map(server -> server.uri())
                .toArray(String[]::new);
        client = Redlock.builder().nodes(uris).keyPrefix(PREFIX).build();
        observer = Redlock.builder().nodes(uris).keyPrefix(PREFIX).build();
        provider = new SynchronizersLockProvider(client::lock);
    }

    @AfterAll
    static void disconnect() {
        try {
            client.close();
        } finally {
            observer.close();
        }
    }

    /**
     * ShedLock's test of the same name, with a lockAtMostFor of 50 ms instead of 2 ms: a Redlock
     * refuses a lease that its clock-drift allowance (lease × 0.01 + 2 ms) eats half of, since no
     * hold of it could be known valid, and the provider lets that {@code IllegalArgumentException}
     * through (documented on {@code lock}). The contract checked is ShedLock's: an expired lock
     * does not extend, and the name is free.
     */
    @Test
    @Override
    public void shouldNotBeAbleToExtendExpiredLock() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofMillis(50), ZERO));
        assertTrue(lock.isPresent());
        sleepFor(Duration.ofMillis(100));
        assertEquals(Optional.empty(), lock.get().extend(Duration.ofSeconds(10), ZERO));
        assertUnlocked(LOCK_NAME1);
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
