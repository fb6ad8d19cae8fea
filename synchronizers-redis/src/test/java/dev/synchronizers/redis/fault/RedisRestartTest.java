package dev.synchronizers.redis.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.SynchronizerException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The lock while its Redis is killed and started again on the same port, with its append-only file. */
@Tag("fault")
@ExtendWith(SynchronizersExtension.class)
class RedisRestartTest {

    private final Opened opened;
    private final String prefix;
    private final String name;

    RedisRestartTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /**
     * A Redis restart (same port, state kept in its append-only file) in the middle of 4 threads
     * looping lock/unlock: once Redis is back no error reaches the caller, and mutual exclusion
     * holds throughout.
     */
    @Test
    void lockUnlock_redisRestarted_noErrorOnceBackAndMutualExclusionHolds() throws Exception {
        RedisServer server = RedisServers.start(RedisServers.Options.defaults().managed()
                .args("--appendonly", "yes", "--appendfsync", "always"));
        opened.add(server);
        RedisSynchronizers client = RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(2)).build();
        opened.add(client);
        DistributedLock lock = client.lock(name);
        int threads = 4;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicBoolean back = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicIntegerArray roundsOnceBack = new AtomicIntegerArray(threads);
        List<Throwable> errorsOnceBack = new CopyOnWriteArrayList<>();
        CountDownLatch looping = new CountDownLatch(threads);
        List<Background<Void>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int worker = t;
            workers.add(Background.start("worker-" + t, () -> {
                int rounds = 0;
                while (!stop.get()) {
                    boolean wasBack = back.get();
                    try {
                        lock.lock();
                        try {
                            if (inside.incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                            }
                            inside.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                        if (++rounds == 10) {
                            looping.countDown();
                        }
                        if (wasBack) {
                            roundsOnceBack.incrementAndGet(worker);
                        }
                    } catch (SynchronizerException | IllegalMonitorStateException e) {
                        if (wasBack) {
                            errorsOnceBack.add(e);
                        }
                    }
                }
                return null;
            }));
        }
        looping.await();
        server.restart();
        // "Back" from the client's point of view: its connection answers again.
        Await.until("the client reconnects", () -> {
            try {
                lock.isLocked();
                return true;
            } catch (SynchronizerException e) {
                return false;
            }
        });
        back.set(true);
        Await.until("every worker has looped 50 times since", () -> {
            for (int t = 0; t < threads; t++) {
                if (roundsOnceBack.get(t) < 50 && errorsOnceBack.isEmpty()) {
                    return false;
                }
            }
            return true;
        });
        stop.set(true);
        for (Background<Void> worker : workers) {
            worker.get();
        }
        assertTrue(errorsOnceBack.isEmpty(), "errors once Redis was back: " + errorsOnceBack);
        assertEquals(0, overlaps.get(), "two holders at once");
    }
}
