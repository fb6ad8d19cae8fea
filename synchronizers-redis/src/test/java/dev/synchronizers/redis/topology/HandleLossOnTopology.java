package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.FaultProxy;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.internal.HostAndPort;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.DnsResolvers;
import io.lettuce.core.resource.MappingSocketAddressResolver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The loss tests of {@link LockHandle#lost()}, {@link PermitHandle#lost()} and
 * {@link DistributedLock#callLocked} ({@code HandleLossTest} and {@code CallLockedMarginTest} on one
 * standalone server), on a topology that a subclass starts once for its class: a hold forced away by
 * another client, or whose keys are deleted, completes {@code lost()} with {@code GONE}, interrupts a
 * {@code callLocked} body, and its release throws {@link LostHoldException}; and a holder whose
 * connections to every data node are cut (each reached through a {@link FaultProxy}, by a Lettuce
 * address mapping, so that only this client is partitioned and no failover happens) has its body
 * interrupted before another client is granted the lock. No timing is asserted; the waits only turn
 * a hang into a failure.
 */
abstract class HandleLossOnTopology {

    /** Renewed every second: a hold forced away is found gone within a tick or two. */
    private static final Duration LEASE = Duration.ofSeconds(3);
    /** Cut trials per class: each waits for a lease to run out. */
    private static final int CUT_TRIALS = 3;

    private final Opened opened = new Opened();
    private final BlockingQueue<LostHold> reported = new LinkedBlockingQueue<>();
    private String prefix;
    private String name;

    /** A builder for the topology: its URI or seeds, nothing else set. */
    abstract RedisSynchronizers.Builder topology();

    /** The ports of the data nodes (masters and replicas), which a partitioned holder reaches through proxies. */
    abstract List<Integer> dataPorts();

    /** A plain connection to the master that serves {@code key} now. */
    abstract RedisCommands<String, String> masterOf(String key, Opened opened);

    @BeforeEach
    void names(TestInfo test) {
        prefix = "hl-" + UUID.randomUUID().toString().substring(0, 8);
        name = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void closeAll() throws Exception {
        opened.closeAll();
    }

    private RedisSynchronizers holder() {
        return opened.add(topology().keyPrefix(prefix).lease(LEASE).lostHoldListener(reported::add).build());
    }

    private RedisSynchronizers other() {
        return opened.add(topology().keyPrefix(prefix).lease(LEASE).build());
    }

    private static LostHold await(CompletionStage<LostHold> stage) throws Exception {
        return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void lockHandle_forcedByAnotherClient_lostCompletesWithGone_releaseThrows() throws Exception {
        LockHandle handle = holder().lock(name).acquire();
        CompletionStage<LostHold> stage = handle.lost();

        assertTrue(other().lock(name).forceUnlock());

        LostHold report = await(stage);
        assertEquals(LostHold.Cause.GONE, report.cause());
        assertSame(handle, report.handle());
        assertEquals(report, reported.poll(30, TimeUnit.SECONDS), "the listeners got the same report");
        assertFalse(handle.isHeld());
        LostHoldException thrown = assertThrows(LostHoldException.class, handle::release);
        assertEquals(LostHold.Cause.GONE, thrown.lostCause());
    }

    @Test
    void permitHandle_keysDeleted_lostCompletesWithGone_releaseThrows() throws Exception {
        DistributedSemaphore semaphore = holder().semaphore(name);
        assertTrue(semaphore.trySetPermits(3));
        PermitHandle permits = semaphore.acquirePermits(2);
        CompletionStage<LostHold> stage = permits.lost();

        RedisCommands<String, String> master = masterOf("{" + name + "}", opened);
        List<String> keys = master.keys(prefix + "*");
        assertFalse(keys.isEmpty(), "the semaphore's keys are on the master of its slot");
        master.del(keys.toArray(String[]::new));

        LostHold report = await(stage);
        assertEquals(LostHold.Cause.GONE, report.cause());
        assertEquals("semaphore", report.kind());
        assertThrows(LostHoldException.class, permits::release);
    }

    @Test
    void callLocked_forcedWhileTheBodyRuns_bodyInterrupted_lostHoldException() throws Exception {
        DistributedLock lock = holder().lock(name);
        DistributedLock other = other().lock(name);
        CountDownLatch running = new CountDownLatch(1);
        CompletableFuture<Boolean> forced = CompletableFuture.supplyAsync(() -> {
            try {
                assertTrue(running.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return other.forceUnlock();
        });

        LostHoldException lost = assertThrows(LostHoldException.class, () -> lock.callLocked(Duration.ZERO, hold -> {
            running.countDown();
            Thread.sleep(TimeUnit.SECONDS.toMillis(60));
            return "not reached";
        }));

        assertTrue(forced.get(30, TimeUnit.SECONDS));
        assertEquals(LostHold.Cause.GONE, lost.lostCause());
        assertEquals(1, lost.getSuppressed().length, "the body's exception is kept");
        assertInstanceOf(InterruptedException.class, lost.getSuppressed()[0]);
        assertFalse(Thread.currentThread().isInterrupted(), "the interrupt callLocked set is cleared");
    }

    /**
     * The holder's connections to every data node cut, and none let through: its body is
     * interrupted, {@code UNRENEWABLE}, before another client (which reaches the nodes directly)
     * is granted the lock when the lease runs out; a thread hold of the same client, cut alike,
     * makes its {@code unlock()} throw.
     */
    @Test
    void holderCutOff_callLockedBodyInterruptedBeforeAnotherClientIsGranted_unlockThrows() throws Exception {
        Map<Integer, FaultProxy> proxies = new HashMap<>();
        for (int port : dataPorts()) {
            proxies.put(port, opened.add(FaultProxy.start(port)));
        }
        ClientResources resources = DefaultClientResources.builder()
                .socketAddressResolver(MappingSocketAddressResolver.create(DnsResolvers.UNRESOLVED, target -> {
                    FaultProxy proxy = proxies.get(target.getPort());
                    return proxy == null ? target : HostAndPort.of("127.0.0.1", proxy.port());
                }))
                .reconnectDelay(Delay.constant(Duration.ofMillis(100)))
                .build();
        opened.add(() -> resources.shutdown(0, 2, TimeUnit.SECONDS).get(30, TimeUnit.SECONDS));
        RedisSynchronizers holder = opened.add(topology().clientResources(resources).keyPrefix(prefix).lease(LEASE)
                .build());
        RedisSynchronizers other = other();
        List<Long> marginMillis = new ArrayList<>();
        for (int trial = 0; trial < CUT_TRIALS; trial++) {
            DistributedLock lock = holder.lock(name + trial);
            DistributedLock threadHeld = holder.lock(name + trial + "-thread");
            DistributedLock contender = other.lock(name + trial);
            CountDownLatch running = new CountDownLatch(1);
            AtomicLong interruptedAt = new AtomicLong();
            threadHeld.lock();
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

            proxies.values().forEach(proxy -> proxy.blackhole(true));
            proxies.values().forEach(FaultProxy::cutAll);
            assertTrue(contender.tryLock(30, TimeUnit.SECONDS), "trial " + trial + ": granted once the lease ran out");
            long grantedAt = System.nanoTime();
            try {
                LostHoldException lost = call.get(30, TimeUnit.SECONDS);
                assertEquals(LostHold.Cause.UNRENEWABLE, lost.lostCause(), "trial " + trial);
                assertTrue(interruptedAt.get() != 0, "trial " + trial + ": the body was interrupted");
                long margin = grantedAt - interruptedAt.get();
                marginMillis.add(TimeUnit.NANOSECONDS.toMillis(margin));
                assertTrue(margin > 0, "trial " + trial + ": interrupted " + TimeUnit.NANOSECONDS.toMillis(-margin)
                        + " ms after the other client was granted the lock");
                Await.until("the thread hold is known lost", () -> !threadHeld.isHeldByCurrentThread());
                LostHoldException unlocked = assertThrows(LostHoldException.class, threadHeld::unlock);
                assertEquals(LostHold.Cause.UNRENEWABLE, unlocked.lostCause(), "trial " + trial);
            } finally {
                contender.unlock();
                proxies.values().forEach(proxy -> proxy.blackhole(false));
            }
            DistributedLock probe = holder.lock(name + trial + "-probe");
            Await.until("the holder reaches the nodes again", () -> {
                try {
                    probe.lock();
                    probe.unlock();
                    return true;
                } catch (SynchronizerUnavailableException e) {
                    return false;
                }
            });
        }
        System.out.printf("%s: callLocked margin (other client's grant minus the body's interrupt), lease %s: %s ms%n",
                getClass().getSimpleName(), LEASE, marginMillis);
    }
}
