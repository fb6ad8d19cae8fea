package dev.synchronizers.redis.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.MasterReplica;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code replicaAcks} on a master whose one replica the test stalls (SIGSTOP): acquisitions that
 * wait for it must not hold up the renewals and releases of holds already taken.
 */
@Tag("fault")
@ExtendWith(SynchronizersExtension.class)
class ReplicaStallTest {

    private final Opened opened;
    private final String prefix;
    private final String name;
    private RedisServer master;
    private RedisServer replica;

    ReplicaStallTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    @BeforeEach
    void start() {
        MasterReplica servers = MasterReplica.start(opened);
        master = servers.master();
        replica = servers.replica();
    }

    /** Resumes a replica the test left stalled, before its servers are closed. */
    @AfterEach
    void resumeReplica() {
        if (replica != null && replica.isRunning()) {
            replica.resume();
        }
    }

    /**
     * A hold taken while the replica answered, then the replica stalls and four threads keep
     * retrying {@code tryLock()} on another name, each try falling short of the acknowledgement:
     * the hold's renewals do not wait behind those tries' {@code WAIT}s, so across nine watchdog
     * ticks (three leases) it is never reported lost, and its {@code unlock()} succeeds.
     */
    @Test
    void renewals_replicaStalledWhileFourThreadsRetryAcquisitions_healthyHoldKept() throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(master.uri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(3)).commandTimeout(Duration.ofSeconds(10))
                .replicaAcks(1, Duration.ofSeconds(1)).meterRegistry(registry)
                .lostHoldListener(lost::add, Runnable::run).build());
        DistributedLock held = client.lock(name + "-held");
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch retriesDone = new CountDownLatch(1);
        Background<Boolean> holder = Background.start("holder", () -> {
            held.lock();
            holding.countDown();
            retriesDone.await();
            held.unlock();
            return true;
        });
        assertTrue(holding.await(30, TimeUnit.SECONDS), "the holder took the lock while the replica answered");

        replica.pause();
        List<Background<Integer>> retriers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            DistributedLock contended = client.lock(name + "-" + t);
            retriers.add(Background.start("retrier-" + t, () -> {
                int tries = 0;
                while (!stop.get()) {
                    try {
                        if (contended.tryLock()) {
                            contended.unlock();
                        }
                    } catch (RuntimeException e) {
                        // Not the point here: a try that did not get its answer in time.
                    }
                    tries++;
                }
                return tries;
            }));
        }
        Await.until("a try fell short of the acknowledgement", () -> shortAcquisitions(registry) > 0);
        long ticksBefore = ticks(registry);
        try {
            Await.until("nine watchdog ticks passed, or the hold was reported lost",
                    () -> !lost.isEmpty() || ticks(registry) - ticksBefore >= 9);
            assertEquals(List.of(), List.copyOf(lost), "no hold reported lost");
        } finally {
            stop.set(true);
            for (Background<Integer> retrier : retriers) {
                retrier.get();
            }
            replica.resume();
            retriesDone.countDown();
        }
        assertTrue(holder.get(), "the holder's unlock() succeeded");
        assertEquals(List.of(), List.copyOf(lost), "no hold reported lost");
    }

    private static long ticks(SimpleMeterRegistry registry) {
        Timer tick = registry.find("synchronizers.watchdog.tick").timer();
        return tick == null ? 0 : tick.count();
    }

    private static double shortAcquisitions(SimpleMeterRegistry registry) {
        Counter counter = registry.find("synchronizers.replica.acks.short").tag("call", "acquire").counter();
        return counter == null ? 0 : counter.count();
    }
}
