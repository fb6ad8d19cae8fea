package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A failure at run time (not at connect time, which {@code ConnectErrorsTest} covers) names the
 * server besides the synchronizer: the client reaches Redis through a {@link FaultProxy} whose
 * replies are held, so that a call times out; its message names the proxy's address and the lock.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class RuntimeErrorsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    RuntimeErrorsTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    @Test
    void commandTimeout_duringLockAndUnlock_messageNamesTheServerAndTheLock() {
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(1)).build());
        DistributedLock lock = client.lock(name);
        DistributedLock held = client.lock(name + "-held");
        held.lock();
        String server = "127.0.0.1:" + proxy.port();

        proxy.holdReplies();

        SynchronizerUnavailableException onLock = assertThrows(SynchronizerUnavailableException.class, lock::lock);
        assertTrue(onLock.getMessage().contains(server), onLock.getMessage());
        assertTrue(onLock.getMessage().contains("'" + name + "'"), onLock.getMessage());
        SynchronizerUnavailableException onUnlock = assertThrows(SynchronizerUnavailableException.class, held::unlock);
        assertTrue(onUnlock.getMessage().contains(server), onUnlock.getMessage());
        assertTrue(onUnlock.getMessage().contains("'" + name + "-held'"), onUnlock.getMessage());
        DistributedSemaphore semaphore = client.semaphore(name);
        SynchronizerUnavailableException onPermits = assertThrows(SynchronizerUnavailableException.class,
                () -> semaphore.trySetPermits(1));
        assertTrue(onPermits.getMessage().contains(server), onPermits.getMessage());
        assertTrue(onPermits.getMessage().contains("'" + name + "'"), onPermits.getMessage());
    }
}
