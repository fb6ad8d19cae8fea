package dev.synchronizers.redis.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.child.NoMicrometerMain;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.RequiredSearch;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The meters a client records in the registry its builder was given, checked with exact counts
 * after scripted scenarios: each test has a registry of its own, so that every count it reads was
 * made by what it did. The other clients in a test record nothing.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class MetricsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Far longer than any test: no scheduled watchdog tick (a third of it) runs during one. */
    private static final Duration LONG_LEASE = Duration.ofSeconds(60);

    private final Opened opened;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final String prefix;
    private final String name;

    MetricsTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /* --------------- from start-up --------------- */

    /**
     * "synchronizers.hold.lost and the other counters exist from start (zero), not after the first
     * event": a client that has done nothing yet already shows every series whose tags are known,
     * so that a dashboard or an alert sees zero rather than no data.
     */
    @Test
    void newClient_beforeAnyEvent_registersTheCountersAtZero() {
        metered();

        for (String kind : List.of("lock", "fair_lock", "read_lock", "write_lock", "semaphore")) {
            for (String cause : List.of("gone", "unrenewable", "abandoned", "lease_expired")) {
                assertEquals(0.0, registry.get("synchronizers.hold.lost").tags("kind", kind, "cause", cause)
                        .counter().count(), kind + " " + cause);
            }
            assertEquals(0, holds(kind), kind);
            assertEquals(0, active(kind), kind);
            assertEquals(0, handOvers(kind, "redis"), kind);
        }
        assertEquals(0, waits("latch", "acquired"));
        for (String call : List.of("acquire", "renew")) {
            assertEquals(0.0, registry.get("synchronizers.replica.acks.short").tags("call", call).counter().count(),
                    call);
        }
        assertEquals(0, count("synchronizers.watchdog.renewals.failed"));
        assertEquals(0, count("synchronizers.wakeups"));
    }

    /* --------------- waits and holds --------------- */

    @Test
    void lockUnlock_reentered_oneWaitOneHoldAndOneCallEachWay() {
        DistributedLock lock = metered().lock(name);

        lock.lock();
        lock.lock();
        assertEquals(1, active("lock"), "a hold in progress");
        lock.unlock();
        lock.unlock();

        assertEquals(1, waits("lock", "acquired"), "re-entering is not a wait");
        assertEquals(0, waits("lock", "timed_out") + waits("lock", "interrupted") + waits("lock", "failed"));
        assertEquals(1, holds("lock"));
        assertEquals(0, active("lock"));
        // lock() tries with the script that would put it in line had the lock been taken.
        assertEquals(1, scriptCalls("lock-acquire-waiting"));
        assertEquals(1, scriptCalls("lock-release"));
        assertEquals(0, lost("lock", "gone"));
    }

    @Test
    void tryLock_lockTakenByAnotherClient_countsTimedOutWaits() throws Exception {
        DistributedLock holder = plain().lock(name);
        DistributedLock lock = metered().lock(name);
        holder.lock();

        assertFalse(lock.tryLock());
        assertFalse(lock.tryLock(50, TimeUnit.MILLISECONDS));
        holder.unlock();

        assertEquals(2, waits("lock", "timed_out"));
        assertEquals(0, waits("lock", "acquired"));
        assertEquals(0, holds("lock"));
    }

    @Test
    void lockInterruptibly_interruptedWhileWaiting_countsInterrupted() throws Exception {
        DistributedLock holder = plain().fairLock(name);
        DistributedLock lock = metered().fairLock(name);
        holder.lock();

        Background<Void> waiter = Background.start("waiter", () -> {
            lock.lockInterruptibly();
            return null;
        });
        Await.until("the waiter sleeps", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        waiter.thread().interrupt();
        assertInstanceOf(InterruptedException.class, waiter.failure());
        holder.unlock();

        assertEquals(1, waits("fair_lock", "interrupted"));
        assertEquals(0, waits("fair_lock", "acquired"));
        assertEquals(1, followUps("leave"), "the waiter that gave up left the queue");
    }

    @Test
    void forceUnlock_byAnotherClient_countsOneLostHoldAndNoCompletedHold() {
        RedisSynchronizers client = metered();
        DistributedLock lock = client.lock(name);
        lock.lock();

        assertTrue(plain().lock(name).forceUnlock());
        RedisInternals.renewNow(client);

        assertEquals(1, lost("lock", "gone"));
        assertEquals(0, active("lock"), "a lost hold is no longer in progress");
        assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(0, holds("lock"), "a lost hold is not a completed one");
        assertEquals(1, lost("lock", "gone"), "counted once, though unlock() reported it again");
    }

    @Test
    void fixedLease_runsOut_countsLeaseExpired() throws Exception {
        DistributedLock lock = metered().readWriteLock(name).writeLock();
        lock.lock(100, TimeUnit.MILLISECONDS);

        Await.until("the end of the fixed lease is noticed", () -> lost("write_lock", "lease_expired") == 1);
        assertEquals(0, active("write_lock"));
        assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(1, waits("write_lock", "acquired"));
        assertEquals(0, holds("write_lock"), "a hold that outlived its lease is not a completed one");
        assertEquals(1, lost("write_lock", "lease_expired"), "counted once");
    }

    @Test
    void semaphore_acquireTwoReleaseInParts_oneWaitOneCompletedHold() throws Exception {
        DistributedSemaphore semaphore = metered().semaphore(name);
        assertTrue(semaphore.trySetPermits(2));

        semaphore.acquire(2);
        semaphore.release();
        assertEquals(1, active("semaphore"), "one permit of the grant is still held");
        assertFalse(semaphore.tryAcquire(2));
        semaphore.release();

        assertEquals(1, waits("semaphore", "acquired"));
        assertEquals(1, waits("semaphore", "timed_out"));
        assertEquals(1, holds("semaphore"));
        assertEquals(0, active("semaphore"));
    }

    @Test
    void latch_awaitOpenedByAnotherClient_countsOneWaitAndOneWakeup() throws Exception {
        DistributedCountDownLatch latch = metered().countDownLatch(name);
        DistributedCountDownLatch other = plain().countDownLatch(name);
        assertTrue(other.trySetCount(1));

        Background<Boolean> waiter = Background.start("waiter", () -> latch.await(30, TimeUnit.SECONDS));
        Await.until("the waiter sleeps", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        other.countDown();

        assertTrue(waiter.get());
        assertEquals(1, waits("latch", "acquired"));
        assertEquals(1, count("synchronizers.wakeups"));
    }

    /* --------------- hand-overs --------------- */

    @Test
    void fairLock_releasedByAnotherClient_waiterHandedTheLockInRedis() throws Exception {
        DistributedLock holder = plain().fairLock(name);
        DistributedLock lock = metered().fairLock(name);
        holder.lock();

        Background<Long> waiter = Background.start("waiter", () -> {
            lock.lock();
            long token = lock.fencingToken();
            lock.unlock();
            return token;
        });
        Await.until("the waiter sleeps", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        holder.unlock();
        waiter.get();

        assertEquals(1, handOvers("fair_lock", "redis"));
        assertEquals(0, handOvers("fair_lock", "local"));
        assertEquals(1, count("synchronizers.wakeups"), "one grant message");
        assertEquals(1, waits("fair_lock", "acquired"));
    }

    @Test
    void lock_unlockedWhileANeighbourWaits_handedOverLocallyInOneScriptCall() throws Exception {
        DistributedLock lock = metered().lock(name);
        lock.lock();
        Background<Void> neighbour = Background.start("neighbour", () -> {
            lock.lock();
            lock.unlock();
            return null;
        });
        Await.until("the neighbour sleeps", () -> RedisState.sleepsOnWakeup(neighbour.thread()));
        lock.unlock();
        neighbour.get();

        assertEquals(1, handOvers("lock", "local"));
        assertEquals(1, scriptCalls("lock-handover"));
        assertEquals(2, holds("lock"));
        assertEquals(2, waits("lock", "acquired"));
    }

    @Test
    void cachedLock_reTakenLocally_thenAskedBackByAnotherClient_countsTakesTheAskAndTheEnd() throws Exception {
        DistributedLock lock = metered(redis.server().uri(), Duration.ofSeconds(5), b -> b.lockCaching(true)).lock(name);
        for (int i = 0; i < 3; i++) {
            lock.lock();
            lock.unlock();
        }
        assertEquals(2, count("synchronizers.cache.takes"), "the first hold takes it in Redis, the next two locally");
        assertEquals(1, scriptCalls("lock-cache-acquire"));
        assertEquals(0, scriptCalls("lock-release"), "kept, not released");
        assertEquals(3, holds("lock"), "a local take is a hold like any other");

        DistributedLock other = metered().lock(name);
        assertTrue(other.tryLock(30, TimeUnit.SECONDS), "another client gets the lock back from the cache");
        other.unlock();

        assertEquals(1, (long) registry.get("synchronizers.cache.ends").tags("kind", "lock", "cause", "asked")
                .counter().count(), "given back once, because asked");
        assertTrue(count("synchronizers.cache.asks") >= 1, "the other client asked at least once");
    }

    /**
     * A caching client that finds the lock cached by another client pays one refused take, one ask
     * and, while it waits, the usual subscribed tries: the refused take is its first try (not sent
     * again as {@code lock-acquire}), and the try right after it does not ask a second time.
     */
    @Test
    void cachingClient_lockCachedByAnother_refusedTakeIsTheFirstTryAndAsksOnce() throws Exception {
        DistributedLock cacher = opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lease(LONG_LEASE).lockCaching(true).build()).lock(name);
        cacher.lock();
        DistributedLock lock = metered(redis.server().uri(), Duration.ofSeconds(5), b -> b.lockCaching(true)).lock(name);

        assertFalse(lock.tryLock(), "held by the cacher's thread");
        assertEquals(1, scriptCalls("lock-cache-acquire"));
        assertEquals(0, registry.find("synchronizers.script.calls").tags("script", "lock-acquire").counters().stream()
                .mapToDouble(c -> c.count()).sum(), "the refused take was the try");
        assertEquals(1, count("synchronizers.cache.asks"));

        Background<Boolean> waiter = Background.start("waiter", () -> lock.tryLock(30, TimeUnit.SECONDS));
        Await.until("the waiter sleeps", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        assertEquals(2, count("synchronizers.cache.asks"), "one ask per acquisition: the try after subscribing does not ask again");
        assertEquals(2, scriptCalls("lock-cache-acquire"));
        cacher.unlock();
        assertTrue(waiter.get(), "given back at the holder's unlock, to the waiter that asked");
        assertEquals(0, registry.find("synchronizers.script.calls").tags("script", "lock-acquire").counters().stream()
                .mapToDouble(c -> c.count()).sum());
    }

    /* --------------- the machinery --------------- */

    @Test
    void watchdogTick_countsTheLeasesRenewed() throws Exception {
        RedisSynchronizers client = metered();
        client.lock(name + "-a").lock();
        client.lock(name + "-b").lock();
        DistributedSemaphore semaphore = client.semaphore(name);
        assertTrue(semaphore.trySetPermits(1));
        semaphore.acquire();

        RedisInternals.renewNow(client);

        assertEquals(1, registry.get("synchronizers.watchdog.tick").timer().count());
        assertEquals(1, registry.get("synchronizers.watchdog.renewed").summary().count());
        assertEquals(3.0, registry.get("synchronizers.watchdog.renewed").summary().totalAmount());
        assertEquals(0, count("synchronizers.watchdog.renewals.failed"));
        assertEquals(3.0, gauge("synchronizers.watchdog.leases"));
        semaphore.release();
    }

    @Test
    void watchdogTick_redisDoesNotAnswer_countsTheFailedRenewals() throws Exception {
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        RedisSynchronizers client = metered(proxy.uri(), Duration.ofMillis(300), b -> b);
        client.lock(name + "-a").lock();
        client.lock(name + "-b").lock();

        proxy.holdReplies();
        RedisInternals.renewNow(client);

        assertEquals(2, count("synchronizers.watchdog.renewals.failed"));
        assertEquals(0.0, registry.get("synchronizers.watchdog.renewed").summary().totalAmount());
        assertEquals(0, lost("lock", "unrenewable"), "a lease of 60 s is not at risk after one failed tick");
    }

    @Test
    void scriptFlushed_callFallsBackToEvalAndIsCounted() {
        RedisServer server = opened.add(redis.startManaged());
        RedisCommands<String, String> admin = opened.commands(server.uri());
        for (Script script : Script.values()) {
            admin.scriptLoad(ScriptRegistry.text(script));
        }
        DistributedLock lock = metered(server.uri(), Duration.ofSeconds(5), b -> b).lock(name);
        lock.lock();
        lock.unlock();
        admin.scriptFlush();

        lock.lock();
        lock.unlock();

        assertEquals(2, scriptCalls("lock-acquire-waiting"));
        assertEquals(1, noScripts("lock-acquire-waiting"), "the first call after the flush");
        assertEquals(1, noScripts("lock-release"));
        assertEquals(2, holds("lock"));
    }

    @Test
    void tryAcquire_replyLate_countsAFailedWaitAndTheGiveUp() {
        RedisServer server = opened.add(redis.startManaged());
        RedisCommands<String, String> admin = opened.commands(server.uri());
        DistributedSemaphore semaphore = metered(server.uri(), Duration.ofMillis(300), b -> b).semaphore(name);
        assertTrue(semaphore.trySetPermits(1));

        admin.clientPause(1000);
        assertThrows(SynchronizerUnavailableException.class, semaphore::tryAcquire);
        Await.until("the semaphore answers again", () -> {
            try {
                return semaphore.availablePermits() == 1;
            } catch (SynchronizerUnavailableException e) {
                return false;
            }
        });

        assertEquals(1, waits("semaphore", "failed"));
        assertEquals(1, followUps("give_up"));
        assertEquals(0, active("semaphore"), "nothing was booked as held");
    }

    /** The gauges read the client's state for as long as it is open, whatever the garbage collector does. */
    @Test
    void gauges_afterAGarbageCollection_stillReadTheClientsState() {
        RedisSynchronizers client = metered();
        client.lock(name).lock();
        WeakReference<Object> canary = new WeakReference<>(new Object());
        Await.until("a garbage collection cleared weak references", () -> {
            System.gc();
            return canary.get() == null;
        });

        assertEquals(1.0, gauge("synchronizers.watchdog.leases"));
        assertEquals(0.0, gauge("synchronizers.followups.pending"));
        assertEquals(0.0, gauge("synchronizers.wakeup.channels"));
    }

    @Test
    void close_removesTheClientsGaugesAndKeepsTheCounts() throws Exception {
        RedisSynchronizers client = metered();
        DistributedLock lock = client.lock(name);
        lock.lock();
        lock.unlock();
        assertEquals(1, registry.find("synchronizers.followups.pending").gauges().size());

        client.close();

        assertTrue(registry.find("synchronizers.watchdog.leases").gauges().isEmpty());
        assertTrue(registry.find("synchronizers.followups.pending").gauges().isEmpty());
        assertTrue(registry.find("synchronizers.wakeup.channels").gauges().isEmpty());
        assertEquals(1, holds("lock"));
    }

    /* --------------- the name tag --------------- */

    @Test
    void meterNameTag_groupsNamesIntoTheTagsItReturns() throws Exception {
        RedisSynchronizers client = metered(redis.server().uri(), Duration.ofSeconds(5),
                b -> b.meterNameTag(n -> n.replaceAll("-\\d+$", "")));
        for (int order = 1; order <= 3; order++) {
            DistributedLock lock = client.lock("charge-" + order);
            lock.lock();
            lock.unlock();
        }

        RequiredSearch charge = registry.get("synchronizers.wait").tags("kind", "lock", "name", "charge",
                "outcome", "acquired");
        assertEquals(3, charge.timer().count());
        assertEquals(1, registry.find("synchronizers.wait").tags("outcome", "acquired").timers().size(),
                "one series for the three names");
    }

    @Test
    void meterNameTag_withoutARegistry_buildFailsNamingTheSetting() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> RedisSynchronizers.builder().uri(redis.server().uri()).meterNameTag(n -> n).build());
        assertTrue(e.getMessage().contains("meterNameTag"), e.getMessage());
        assertThrows(NullPointerException.class, () -> RedisSynchronizers.builder().meterRegistry(null));
    }

    /** Micrometer is optional: a client on a class path without it works as before. */
    @Test
    void withoutMicrometerOnTheClassPath_everySynchronizerWorks() throws Exception {
        try (ChildJvm child = ChildJvm.start(NoMicrometerMain.class.getName(), Map.of(),
                List.of(redis.server().uri(), prefix), entry -> !entry.contains("micrometer"))) {
            assertEquals("no-micrometer: ok", child.awaitLine("no-micrometer:", Duration.ofSeconds(60)));
        }
    }

    /* --------------- helpers --------------- */

    private RedisSynchronizers metered() {
        return metered(redis.server().uri(), Duration.ofSeconds(5), b -> b);
    }

    private RedisSynchronizers metered(String uri, Duration commandTimeout,
            java.util.function.UnaryOperator<RedisSynchronizers.Builder> more) {
        return opened.add(more.apply(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).lease(LONG_LEASE)
                .commandTimeout(commandTimeout).meterRegistry(registry)).build());
    }

    private RedisSynchronizers plain() {
        return opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix).lease(LONG_LEASE)
                .build());
    }

    private long waits(String kind, String outcome) {
        return registry.get("synchronizers.wait").tags("kind", kind, "outcome", outcome).timer().count();
    }

    private long holds(String kind) {
        return registry.get("synchronizers.hold").tags("kind", kind).timer().count();
    }

    private int active(String kind) {
        return registry.get("synchronizers.hold.active").tags("kind", kind).longTaskTimer().activeTasks();
    }

    private long lost(String kind, String cause) {
        MeterRegistry r = registry;
        var counter = r.find("synchronizers.hold.lost").tags("kind", kind, "cause", cause).counter();
        return counter == null ? 0 : (long) counter.count();
    }

    private long handOvers(String kind, String via) {
        return (long) registry.get("synchronizers.handovers").tags("kind", kind, "via", via).counter().count();
    }

    private long scriptCalls(String script) {
        return (long) registry.get("synchronizers.script.calls").tags("script", script).counter().count();
    }

    private long noScripts(String script) {
        return (long) registry.get("synchronizers.script.noscript").tags("script", script).counter().count();
    }

    private long followUps(String action) {
        return (long) registry.get("synchronizers.followups").tags("action", action).counter().count();
    }

    /** The sum over every series of {@code counter}: its tags, if any, are not asked for. */
    private long count(String counter) {
        return (long) registry.get(counter).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private double gauge(String gauge) {
        return registry.get(gauge).gauge().value();
    }
}
