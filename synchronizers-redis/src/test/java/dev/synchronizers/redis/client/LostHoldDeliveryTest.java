package dev.synchronizers.redis.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lost-hold reports on the default listener executor (the watchdog's thread) while and after the
 * client closes (issue 31, S3): none is dropped by the shutdown, and a slow listener costs
 * {@code close()} at most the command timeout.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LostHoldDeliveryTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Duration LEASE = Duration.ofSeconds(60);
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final long PATIENCE_SECONDS = 30;

    private final Opened opened;
    private final String prefix;
    private final String name;

    LostHoldDeliveryTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /**
     * Two holds are found lost at one renewal; the listener (on the default executor) blocks on the
     * first report while the client closes. Before, close() stopped the watchdog with shutdownNow():
     * the blocked listener was interrupted and the second report, queued behind it, was dropped.
     * Now close() returns after at most a command timeout of waiting, and both reports are
     * delivered, the second once the listener returns.
     */
    @Test
    void close_whileTheListenerIsSlow_dropsNoReportQueuedBehindIt() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        CountDownLatch firstEntered = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(LEASE).commandTimeout(TIMEOUT).lostHoldListener(hold -> {
                    lost.add(hold);
                    if (firstEntered.getCount() == 1) {
                        firstEntered.countDown();
                        try {
                            proceed.await(PATIENCE_SECONDS, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            interrupted.set(true);
                        }
                    }
                }).build());
        RedisSynchronizers other = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix).build());
        LockHandle first = client.lock(name + "-1").acquire();
        LockHandle second = client.lock(name + "-2").acquire();
        for (String each : new String[] {name + "-1", name + "-2"}) {
            DistributedLock forcing = other.lock(each);
            assertTrue(forcing.forceUnlock());
        }

        RedisInternals.renewNow(client);   // finds both gone: two reports, queued for the watchdog's thread
        assertTrue(firstEntered.await(PATIENCE_SECONDS, TimeUnit.SECONDS), "the listener runs the first report");
        client.close();   // returns although the listener is still blocked

        assertNotNull(lost.poll(), "the first report");
        assertTrue(lost.isEmpty(), "the second report waits behind the slow listener");
        proceed.countDown();
        assertNotNull(lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS),
                "the report queued behind the slow listener is delivered, not dropped");
        assertFalse(interrupted.get(), "the listener was not interrupted by close()");
        assertFalse(first.isHeld());
        assertFalse(second.isHeld());
    }
}
