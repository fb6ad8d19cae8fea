package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The early stop of {@link DistributedLock#callLocked}, measured: the holder reaches Redis through
 * a {@link FaultProxy}; while its body runs, its connection is cut and no new one gets through, or
 * (every other trial) it stops answering: a partition of that client only. The body must be interrupted before another client, which
 * reaches Redis directly and waits in {@code tryLock}, is granted the lock when the lease runs out,
 * in every one of {@value #TRIALS} trials. The margin (the other client's grant minus the
 * interrupt, both by this JVM's {@link System#nanoTime()}, so no clock is compared between hosts)
 * is printed, not asserted: what is asserted is the order. The holder keeps the default command
 * timeout (5 s), longer than its 3 s lease: the watchdog must not wait that long for a renewal's
 * reply.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class CallLockedMarginTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Alternately cut and stalled. */
    private static final int TRIALS = 24;
    private static final Duration LEASE = Duration.ofSeconds(3);

    private final Opened opened;
    private final String prefix;
    private final String name;

    CallLockedMarginTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    @Test
    void connectionCut_bodyInterruptedBeforeAnotherClientIsGranted_everyTrial() throws Exception {
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        RedisSynchronizers holder = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .lease(LEASE).build());
        RedisSynchronizers other = opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lease(LEASE).build());
        List<Long> cutMillis = new ArrayList<>();
        List<Long> stallMillis = new ArrayList<>();
        for (int trial = 0; trial < TRIALS; trial++) {
            DistributedLock lock = holder.lock(name);
            DistributedLock contender = other.lock(name);
            CountDownLatch running = new CountDownLatch(1);
            AtomicLong interruptedAt = new AtomicLong();
            CompletableFuture<LostHoldException> call = CompletableFuture.supplyAsync(() -> assertThrows(
                    LostHoldException.class, () -> lock.callLocked(Duration.ofSeconds(30), hold -> {
                        running.countDown();
                        try {
                            Thread.sleep(TimeUnit.MINUTES.toMillis(1));
                        } catch (InterruptedException e) {
                            interruptedAt.set(System.nanoTime());
                            throw e;
                        }
                        return null;
                    })));
            assertTrue(running.await(30, TimeUnit.SECONDS), "trial " + trial + ": the body runs");

            // Even trials: the connection is cut and none gets through; odd ones: it stops answering.
            boolean cut = trial % 2 == 0;
            proxy.blackhole(true);
            if (cut) {
                proxy.cutAll();
            }
            assertTrue(contender.tryLock(30, TimeUnit.SECONDS), "trial " + trial + ": granted once the lease ran out");
            long grantedAt = System.nanoTime();
            try {
                LostHoldException lost = call.get(30, TimeUnit.SECONDS);
                assertEquals(LostHold.Cause.UNRENEWABLE, lost.lostCause(), "trial " + trial);
                assertTrue(interruptedAt.get() != 0, "trial " + trial + ": the body was interrupted");
                long margin = grantedAt - interruptedAt.get();
                (cut ? cutMillis : stallMillis).add(TimeUnit.NANOSECONDS.toMillis(margin));
                assertTrue(margin > 0, "trial " + trial + ": interrupted " + TimeUnit.NANOSECONDS.toMillis(-margin)
                        + " ms after the other client was granted the lock");
            } finally {
                contender.unlock();
                proxy.blackhole(false);
            }
            DistributedLock probe = holder.lock(name + "-probe");
            Await.until("the holder reaches Redis again", () -> {
                try {
                    probe.lock();
                    probe.unlock();
                    return true;
                } catch (SynchronizerUnavailableException e) {
                    return false;
                }
            });
        }
        System.out.printf("callLocked margin (other client's grant minus the body's interrupt), lease %s, command"
                + " timeout 5 s: connection cut: min %d ms, max %d ms, all %s; connection stalled: min %d ms, max %d"
                + " ms, all %s%n", LEASE, min(cutMillis), max(cutMillis), cutMillis, min(stallMillis), max(stallMillis),
                stallMillis);
    }

    private static long min(List<Long> millis) {
        return millis.stream().mapToLong(Long::longValue).min().orElseThrow();
    }

    private static long max(List<Long> millis) {
        return millis.stream().mapToLong(Long::longValue).max().orElseThrow();
    }
}
