package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.semaphore.SemaphoreKeys;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.MigrateArgs;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The synchronizers on a Redis Cluster of 3 masters and 3 replicas, started once for the class:
 * keys in one slot, wake-ups on the slot's shard, renewals batched per slot and pipelined, a slot
 * moved while waiters wait. Failovers are in {@link ClusterFailoverTest}; the contract suite runs
 * on a cluster in the {@code cluster} profile.
 */
@Tag("topology")
class ClusterTest extends ClusterTestBase {

    @Test
    void builder_clusterWithoutSeeds_throwsNamingTheArgument() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RedisSynchronizers.builder().cluster());
        assertTrue(e.getMessage().contains("seedUris"), e.getMessage());
    }

    @Test
    void cluster_unreachableSeed_failsWithinTheTimeout() {
        SynchronizerUnavailableException e = assertThrows(SynchronizerUnavailableException.class,
                () -> RedisSynchronizers.builder().cluster("redis://127.0.0.1:1").commandTimeout(Duration.ofMillis(500))
                        .build());
        assertTrue(e.getMessage().contains("127.0.0.1:1"), e.getMessage());
    }

    /** Names chosen to land on every master: each kind works wherever its slot lives. */
    @Test
    void everySynchronizer_onEveryMaster_works() throws Exception {
        RedisSynchronizers client = client();
        RedisSynchronizers other = client();
        for (RedisServer master : cluster.masters()) {
            String onMaster = nameOn(master, name);
            DistributedLock lock = client.lock(onMaster);
            lock.lock();
            assertTrue(other.lock(onMaster).isLocked());
            lock.unlock();
            DistributedLock fair = client.fairLock(onMaster);
            assertTrue(fair.tryLock(1, TimeUnit.SECONDS));
            fair.unlock();
            client.readWriteLock(onMaster).readLock().lock();
            assertTrue(other.readWriteLock(onMaster).readLock().tryLock());
            other.readWriteLock(onMaster).readLock().unlock();
            client.readWriteLock(onMaster).readLock().unlock();
            DistributedSemaphore semaphore = client.semaphore(onMaster);
            assertTrue(semaphore.trySetPermits(2));
            semaphore.acquire(2);
            assertEquals(0, other.semaphore(onMaster).availablePermits());
            semaphore.release(2);
            DistributedCountDownLatch latch = client.countDownLatch(onMaster);
            assertTrue(latch.trySetCount(1));
            other.countDownLatch(onMaster).countDown();
            assertTrue(latch.await(1, TimeUnit.SECONDS));
        }
    }

    /** Scripts flushed on every master (as after restarts or promotions): calls fall back to EVAL on each node. */
    @Test
    void scriptsFlushedOnEveryMaster_everySynchronizerStillWorks() throws Exception {
        RedisSynchronizers client = client();
        for (RedisServer master : cluster.masters()) {
            DistributedLock lock = client.lock(nameOn(master, name));
            lock.lock();
            lock.unlock();
        }
        for (RedisServer master : cluster.masters()) {
            opened.commands(master.uri()).scriptFlush();
        }
        for (RedisServer master : cluster.masters()) {
            String onMaster = nameOn(master, name);
            DistributedLock lock = client.lock(onMaster);
            lock.lock();
            assertTrue(client.lock(onMaster).isHeldByCurrentThread());
            lock.unlock();
            DistributedSemaphore semaphore = client.semaphore(onMaster);
            assertTrue(semaphore.trySetPermits(1));
            assertTrue(semaphore.tryAcquire());
            semaphore.release();
        }
    }

    /**
     * On Redis 7 a release's wake-up is a shard message: subscribed on the slot's master only,
     * published there only (SPUBLISH), and no other master carries it.
     */
    @Test
    void release_wakeUpTravelsOnTheSlotsShardOnly() throws Exception {
        RedisServer master = cluster.masterOf(LockKeys.of(prefix, name).lock());
        RedisCommands<String, String> onMaster = opened.commands(master.uri());
        boolean sharded = RedisState.shardedPubSub(onMaster);
        DistributedLock holder = client().lock(name);
        RedisSynchronizers waitingClient = client();
        DistributedLock waiting = waitingClient.lock(name);
        // A release hands the lock to the waiting client on that client's own channel.
        String channel = LockKeys.of(prefix, name).clientWakeups(waitingClient.clientId());
        holder.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            waiting.lock();
            waiting.unlock();
            return true;
        });
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        for (RedisServer each : cluster.masters()) {
            RedisCommands<String, String> node = opened.commands(each.uri());
            node.configResetstat();
            assertEquals(each.equals(master) ? 1 : 0, RedisState.subscribers(node, channel),
                    "subscribers of the wake-up channel on " + each);
        }

        holder.unlock();
        assertTrue(waiter.get());

        for (RedisServer each : cluster.masters()) {
            String stats = opened.commands(each.uri()).info("commandstats");
            long published = sharded ? RedisState.calls(stats, "spublish") : RedisState.calls(stats, "publish");
            assertEquals(each.equals(master) ? 1 : 0, published, "wake-ups published on " + each);
        }
    }

    /**
     * The watchdog renews many holds spread over the three masters in one tick: one call per slot
     * (a script's keys must share one), all sent before any reply is awaited, so that the tick
     * costs one round trip per master. Prints, per master, the calls and the socket reads it took.
     */
    @Test
    void watchdog_10000HoldsOnThreeMasters_oneTickRenewsThemAll() throws Exception {
        int holds = 10_000;
        List<LostHold> lost = new ArrayList<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder()
                .cluster(cluster.seedUris().toArray(String[]::new)).keyPrefix(prefix).lease(Duration.ofMinutes(30))
                .lostHoldListener(lost::add, Runnable::run).build());
        // A 30-minute lease: the client's own ticks (every 10 minutes) never fall inside the counted
        // window, however slowly a busy machine takes the 10,000 holds; only renewNow() ticks there.
        Map<RedisServer, Set<Integer>> slotsOn = new HashMap<>();
        for (int i = 0; i < holds; i++) {
            String each = name + "-" + i;
            client.lock(each).lock();
            String key = LockKeys.of(prefix, each).lock();
            slotsOn.computeIfAbsent(cluster.masterOf(key), m -> new HashSet<>()).add(cluster.slotOf(key));
        }
        Map<RedisServer, String> before = new HashMap<>();
        for (RedisServer master : cluster.masters()) {
            RedisCommands<String, String> node = opened.commands(master.uri());
            node.configResetstat();
            before.put(master, node.info("stats"));
        }

        long start = System.nanoTime();
        RedisInternals.renewNow(client);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertEquals(List.of(), lost, "every hold renewed");
        assertEquals(holds, RedisInternals.watchdogEntries(client));
        StringBuilder report = new StringBuilder("watchdog tick with " + holds + " holds took " + tookMillis + " ms:");
        for (RedisServer master : cluster.masters()) {
            RedisCommands<String, String> node = opened.commands(master.uri());
            // Renewals go with their text (EVAL), so that one sent again cannot overtake a release.
            long calls = RedisState.calls(node.info("commandstats"), "eval");
            long reads = RedisState.stat(node.info("stats"), "total_reads_processed")
                    - RedisState.stat(before.get(master), "total_reads_processed");
            assertEquals(slotsOn.get(master).size(), calls, "one renewal call per slot held on " + master);
            report.append(String.format(" %s: %d slots, %d calls, %d socket reads;", master, slotsOn.get(master).size(),
                    calls, reads));
        }
        System.out.println(report);
    }

    /** A slot moved to another master while a waiter waits: the waiter follows it and is woken by the release. */
    @Test
    void lock_slotMovedWhileAWaiterWaits_waiterWokenByTheRelease() throws Exception {
        String key = LockKeys.of(prefix, name).lock();
        int slot = cluster.slotOf(key);
        RedisServer from = cluster.masterOf(key);
        RedisServer to = cluster.masters().stream().filter(m -> !m.equals(from)).findFirst().orElseThrow();
        DistributedLock holder = client().lock(name);
        RedisSynchronizers waitingClient = client();
        DistributedLock waiting = waitingClient.lock(name);
        holder.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            waiting.lock();
            waiting.unlock();
            return true;
        });
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));

        cluster.moveSlot(slot, to);
        String channel = LockKeys.of(prefix, name).clientWakeups(waitingClient.clientId());
        RedisCommands<String, String> onTarget = opened.commands(to.uri());
        Await.until("the waiter subscribes on the slot's new master",
                () -> RedisState.subscribers(onTarget, channel) == 1);
        holder.unlock();

        assertTrue(waiter.get(), "the waiter acquired");
    }

    /**
     * A slot moved before a waiter subscribes, unseen by the waiter's client (its Lettuce client
     * refreshes its view of the slots only when asked): its try follows the redirection, and its
     * subscription, refused with {@code MOVED} by the slot's old master, is made on the new one
     * after a refresh, so that the release wakes it. Before the fix the subscription was sent to
     * the old master again and again until the command timeout, and the wait failed with
     * SynchronizerUnavailableException.
     */
    @Test
    void lock_slotMovedUnseenByTheWaitersClient_waiterSubscribesOnTheNewMaster() throws Exception {
        String key = LockKeys.of(prefix, name).lock();
        RedisServer from = cluster.masterOf(key);
        RedisServer to = cluster.masters().stream().filter(m -> !m.equals(from)).findFirst().orElseThrow();
        RedisClusterClient lettuce = RedisClusterClient.create(cluster.seedUris().stream().map(RedisURI::create)
                .toList());
        lettuce.setOptions(ClusterClientOptions.builder().topologyRefreshOptions(noTopologyRefresh()).build());
        RedisSynchronizers stale = RedisSynchronizers.builder().client(lettuce).keyPrefix(prefix)
                .lease(Duration.ofSeconds(60)).commandTimeout(Duration.ofSeconds(2)).build();
        try {
            DistributedLock holder = client().lock(name);
            DistributedLock waiting = stale.lock(name);
            waiting.lock();   // the stale client knows the slot's master
            waiting.unlock();
            holder.lock();
            cluster.moveSlot(cluster.slotOf(key), to);
            Background<Boolean> waiter = Background.start("waiter", () -> {
                boolean got = waiting.tryLock(60, TimeUnit.SECONDS);
                if (got) {
                    waiting.unlock();
                }
                return got;
            });
            Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread())
                    || !waiter.thread().isAlive());
            holder.unlock();

            assertTrue(waiter.get(), "the waiter acquired");
        } finally {
            stale.close();
            lettuce.shutdown();
        }
    }

    /** A semaphore's slot moved while a waiter waits for a permit: the release reaches it on the new master. */
    @Test
    void semaphore_slotMovedWhileAWaiterWaits_releaseServesIt() throws Exception {
        String key = SemaphoreKeys.of(prefix, name).total();
        RedisServer from = cluster.masterOf(key);
        RedisServer to = cluster.masters().stream().filter(m -> !m.equals(from)).findFirst().orElseThrow();
        DistributedSemaphore holder = client().semaphore(name);
        DistributedSemaphore waiting = client().semaphore(name);
        assertTrue(holder.trySetPermits(1));
        holder.acquire();
        Background<Boolean> waiter = Background.start("waiter", () -> waiting.tryAcquire(30, TimeUnit.SECONDS));
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));

        cluster.moveSlot(cluster.slotOf(key), to);
        holder.release();

        assertTrue(waiter.get(), "the waiter got the permit");
        waiting.release();
    }

    /**
     * A slot half-migrated under two holds of one client: IMPORTING on one master, MIGRATING on
     * its owner, and the key of one of the two names moved. The watchdog's one renewal call for
     * the slot names both keys, one on each master, and is refused with TRYAGAIN as a whole while
     * the slot stays so; each name alone is served (one on the owner, the other through ASK on the
     * target). The tick renews both holds, and no renewal fails. Once the slot has moved, both are
     * unlocked.
     */
    @Test
    void watchdog_slotHalfMigratedUnderTwoHolds_bothRenewed() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<LostHold> lost = new CopyOnWriteArrayList<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder()
                .cluster(cluster.seedUris().toArray(String[]::new)).keyPrefix(prefix).lease(Duration.ofSeconds(60))
                .commandTimeout(Duration.ofSeconds(1)).meterRegistry(registry).lostHoldListener(lost::add, Runnable::run)
                .build());
        Map<Integer, String> bySlot = new HashMap<>();
        String first;
        String second;
        for (int i = 0; ; i++) {
            String candidate = name + "-" + i;
            String other = bySlot.putIfAbsent(SlotHash.getSlot(LockKeys.of(prefix, candidate).lock()), candidate);
            if (other != null) {
                first = other;
                second = candidate;
                break;
            }
        }
        String moved = LockKeys.of(prefix, first).lock();
        int slot = cluster.slotOf(moved);
        RedisServer from = cluster.masterOf(slot);
        RedisServer to = cluster.masters().stream().filter(m -> !m.equals(from)).findFirst().orElseThrow();
        DistributedLock firstLock = client.lock(first);
        DistributedLock secondLock = client.lock(second);
        firstLock.lock();
        secondLock.lock();
        RedisCommands<String, String> source = opened.commands(from.uri());
        RedisCommands<String, String> target = opened.commands(to.uri());
        try {
            target.clusterSetSlotImporting(slot, source.clusterMyId());
            source.clusterSetSlotMigrating(slot, target.clusterMyId());
            source.migrate(to.host(), to.port(), 0, 1000, MigrateArgs.Builder.keys(moved));
            target.asking();
            assertEquals(1L, target.exists(moved), "the first name's key moved");
            assertEquals(1L, source.exists(LockKeys.of(prefix, second).lock()), "the second name's key stayed");

            double renewedBefore = registry.get("synchronizers.watchdog.renewed").summary().totalAmount();
            double failedBefore = registry.get("synchronizers.watchdog.renewals.failed").counter().count();

            RedisInternals.renewNow(client);

            assertEquals(failedBefore, registry.get("synchronizers.watchdog.renewals.failed").counter().count(),
                    "no renewal of the tick failed");
            double renewed = registry.get("synchronizers.watchdog.renewed").summary().totalAmount() - renewedBefore;
            assertTrue(renewed >= 2, "both holds renewed by this tick: " + renewed);
            assertEquals(List.of(), lost, "no hold reported lost");
        } finally {
            cluster.moveSlot(slot, to);
        }
        firstLock.unlock();
        secondLock.unlock();
        assertEquals(List.of(), lost, "no hold reported lost");
    }

    /* --------------- helpers --------------- */

    private RedisSynchronizers client() {
        return opened.add(RedisSynchronizers.builder().cluster(cluster.seedUris().toArray(String[]::new))
                .keyPrefix(prefix).lease(Duration.ofSeconds(60)).build());
    }

    /**
     * Topology refresh options with no trigger at all. Lettuce 7 turns every adaptive trigger on
     * by default and has {@code disableAllAdaptiveRefreshTriggers()}; Lettuce 6.x turns none on
     * and lacks that method, so it is called only where it exists.
     */
    private static ClusterTopologyRefreshOptions noTopologyRefresh() {
        ClusterTopologyRefreshOptions.Builder builder = ClusterTopologyRefreshOptions.builder().enablePeriodicRefresh(false);
        try {
            ClusterTopologyRefreshOptions.Builder.class.getMethod("disableAllAdaptiveRefreshTriggers").invoke(builder);
        } catch (NoSuchMethodException e) {
            // Lettuce 6.x: no adaptive trigger is on by default
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        ClusterTopologyRefreshOptions options = builder.build();
        assertTrue(options.getAdaptiveRefreshTriggers().isEmpty(), options.getAdaptiveRefreshTriggers()::toString);
        return options;
    }
}
