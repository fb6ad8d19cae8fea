package dev.synchronizers.redis.topology;

import static dev.synchronizers.redis.topology.CachedHandOver.PATIENCE_SECONDS;
import static dev.synchronizers.redis.topology.CachedHandOver.lockAndUnlock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.topology.CachedHandOver.Tokens;
import dev.synchronizers.testkit.RedisServer;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lock caching ({@code lockCaching(true)}; docs/design/lock-caching.md) on a Redis Cluster of 3
 * masters and 3 replicas, started once for the class: a client's cached lock, idle or held, is
 * asked back by another client through the cacher's standing ask channel
 * ({@code <prefix>:client:{<id>}:asks}, on its own slot's shard) and handed over, with fencing
 * tokens strictly increasing; still after the slots of the ask channel and of the lock moved to
 * other masters, and after a failover of the master that serves both.
 *
 * <p>The lease is long enough that no renewal of the cache comes within a wait for it, so that a
 * hand-over is the ask message's doing alone (the renewal, which would ask it back too, is the
 * backstop for a lost message); the failover test uses a short lease, so that a cache lost in it
 * would be found and reported.
 */
@Tag("topology")
class ClusterLockCachingTest extends ClusterTestBase {

    /** Longer than three waits: no renewal (every third of it) asks a cache back within one. */
    private static final Duration NO_RENEWAL_WITHIN_A_WAIT = Duration.ofMinutes(10);
    /** Short, so that a cache lost in a failover is found within seconds. */
    private static final Duration SHORT_LEASE = Duration.ofSeconds(6);

    /**
     * An idle cached lock and a held one, each asked back by another client: the idle one is
     * handed over at once, the held one at its holder's unlock, never before; every token is
     * above the one before it, whoever took it.
     */
    @Test
    void cachedLock_idleAndHeld_askedBackAndHandedOverWithIncreasingTokens() throws Exception {
        RedisSynchronizers cacher = client(NO_RENEWAL_WITHIN_A_WAIT, true, new ConcurrentLinkedQueue<>());
        RedisSynchronizers other = client(NO_RENEWAL_WITHIN_A_WAIT, true, new ConcurrentLinkedQueue<>());

        CachedHandOver.idle(cacher.lock(name), other.lock(name));
        CachedHandOver.held(cacher.lock(name + "-held"), other.lock(name + "-held"), () -> awaitAsked(cacher.lock(name + "-held").name()));
    }

    /**
     * The slots of the cacher's ask channel and of the lock each moved to another master while
     * the lock is cached: the standing subscription follows its slot, and the ask still reaches
     * the cacher, for an idle cache and for a held one.
     */
    @Test
    void cachedLock_askChannelAndLockSlotsMoved_stillAskedBackAndHandedOver() throws Exception {
        RedisSynchronizers cacher = client(NO_RENEWAL_WITHIN_A_WAIT, true, new ConcurrentLinkedQueue<>());
        RedisSynchronizers other = client(NO_RENEWAL_WITHIN_A_WAIT, false, new ConcurrentLinkedQueue<>());
        Tokens tokens = new Tokens();
        DistributedLock idle = cacher.lock(name);
        idle.lock();
        tokens.add(idle.fencingToken());
        idle.unlock();
        String askChannel = LockKeys.askChannel(prefix, cacherId(name));

        moveElsewhere(askChannel);
        moveElsewhere(LockKeys.of(prefix, name).lock());
        awaitListening(askChannel);
        DistributedLock asker = other.lock(name);
        assertTrue(asker.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the idle cached lock");
        tokens.add(asker.fencingToken());
        asker.unlock();

        String heldName = name + "-held";
        DistributedLock held = cacher.lock(heldName);
        held.lock();
        long holderToken = held.fencingToken();
        Tokens heldTokens = new Tokens();
        heldTokens.add(holderToken);
        moveElsewhere(askChannel);
        moveElsewhere(LockKeys.of(prefix, heldName).lock());
        awaitListening(askChannel);
        DistributedLock waiting = other.lock(heldName);
        Background<Long> waiter = Background.start("asker", () -> lockAndUnlock(waiting));
        awaitAsked(heldName);
        held.unlock();
        heldTokens.add(waiter.get());
    }

    /**
     * A failover (CLUSTER FAILOVER) of the master that serves both the cacher's ask channel and
     * the lock, while one cached lock is idle and another is held and asked for by a waiting
     * client: the held one is handed over at its unlock, or, if the failover lost it, reported
     * lost (to the listener, and by unlock()); the waiter gets it either way, and afterwards the
     * idle one is asked back and handed over too. Tokens increase throughout.
     */
    @Test
    void cachedLock_failoverOfTheCachersMaster_handedOverOrReportedLost() throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        RedisSynchronizers cacher = client(SHORT_LEASE, true, lost);
        RedisSynchronizers other = client(SHORT_LEASE, false, new ConcurrentLinkedQueue<>());
        Tokens tokens = new Tokens();
        // Both locks on the master of the cacher's ask channel, found from a first cached lock's field.
        DistributedLock probe = cacher.lock(name);
        probe.lock();
        probe.unlock();
        String askChannel = LockKeys.askChannel(prefix, cacherId(name));
        RedisServer master = cluster.masterOf(askChannel);
        String idleName = nameOn(master, name + "-idle");
        String heldName = nameOn(master, name + "-held");

        DistributedLock idle = cacher.lock(idleName);
        idle.lock();
        tokens.add(idle.fencingToken());
        idle.unlock();
        DistributedLock held = cacher.lock(heldName);
        held.lock();
        long holderToken = held.fencingToken();
        Tokens heldTokens = new Tokens();
        heldTokens.add(holderToken);
        DistributedLock waiting = other.lock(heldName);
        Background<Long> waiter = Background.start("asker", () -> lockAndUnlock(waiting));
        awaitAsked(heldName);

        cluster.failover(cluster.replicasOf(master).get(0));
        awaitListening(askChannel);
        boolean reportedLost;
        try {
            held.unlock();
            reportedLost = false;
        } catch (LostHoldException e) {
            reportedLost = true;
        } catch (SynchronizerUnavailableException e) {
            reportedLost = false;   // the give-back is retried until Redis answers
        }
        long waiterToken = waiter.get();
        if (reportedLost) {
            assertTrue(lost.stream().anyMatch(hold -> hold.fencingToken() == holderToken),
                    "unlock() found the hold lost, and so did the listener: " + lost);
        } else {
            assertTrue(lost.stream().noneMatch(hold -> hold.fencingToken() == holderToken),
                    "reported lost, yet unlock() released it: " + lost);
        }
        heldTokens.add(waiterToken);

        DistributedLock asker = other.lock(idleName);
        assertTrue(asker.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the idle cached lock");
        tokens.add(asker.fencingToken());
        asker.unlock();
        System.out.printf("cluster failover under a held cached lock: %s%n",
                reportedLost ? "the hold was lost and reported" : "the hold survived and was handed over");
    }

    /**
     * The master serving a held cached lock killed (SIGKILL) soon after the cache was taken, its
     * replica paused meanwhile, and the replica promoted: whether the promoted replica has the cache
     * depends on what reached it, so either outcome is allowed but neither silently. Once the
     * cacher has renewed on the new master (one watchdog tick, run by the test), either the hold
     * was reported lost, and {@code unlock()} says so, or it is intact, and {@code unlock()} hands
     * it over with a smaller token than the waiter's. The waiting client gets the lock either way.
     */
    @Test
    void cachedLock_masterKilledSoonAfterTheTake_heldCacheHandedOverOrReportedLost()
            throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        RedisSynchronizers cacher = client(SHORT_LEASE, true, lost);
        RedisSynchronizers other = client(SHORT_LEASE, false, new ConcurrentLinkedQueue<>());
        String key = LockKeys.of(prefix, name).lock();
        RedisServer master = cluster.masterOf(key);
        RedisServer replica = cluster.replicasOf(master).get(0);
        DistributedLock held = cacher.lock(name);
        DistributedLock waiting = other.lock(name);
        long taken;
        cluster.pause(replica);
        try {
            held.lock();
            taken = held.fencingToken();
            assertEquals(1L, opened.commands(master.uri()).exists(key), "cached on the master");
            cluster.kill(master);
        } finally {
            cluster.resume(replica);
        }
        long holderToken = taken;
        try {
            cluster.awaitHealthy();
            CachedHandOver.afterTheMasterWasReplaced(cacher, name + "-probe", held, holderToken, waiting, lost);
        } finally {
            cluster.restart(master);
        }
    }

    /* --------------- helpers --------------- */

    /** Waits until another client has marked the lock {@code lockName} as wanted (its try's ask). */
    private void awaitAsked(String lockName) {
        String key = LockKeys.of(prefix, lockName).lock();
        Await.until("the other client asks for '" + lockName + "'",
                () -> opened.commands(cluster.masterOf(key).uri()).hexists(key, ":waiting"));
    }

    /** Waits until the cacher listens on its ask channel on the master that serves the channel's slot now. */
    private void awaitListening(String askChannel) {
        Await.until("the cacher listens on " + askChannel + " where its slot is served now",
                () -> RedisState.subscribers(opened.commands(cluster.masterOf(askChannel).uri()), askChannel) == 1);
    }

    /** The client id of the one client that caches the lock {@code lockName}, read from its cache field. */
    private String cacherId(String lockName) {
        String key = LockKeys.of(prefix, lockName).lock();
        return CachedHandOver.cacherId(opened.commands(cluster.masterOf(key).uri()), key);
    }

    /** Moves the slot of {@code key} to a master other than the one serving it now. */
    private static void moveElsewhere(String key) {
        RedisServer from = cluster.masterOf(key);
        RedisServer to = cluster.masters().stream().filter(m -> !m.equals(from)).findFirst().orElseThrow();
        cluster.moveSlot(cluster.slotOf(key), to);
    }

    private RedisSynchronizers client(Duration lease, boolean caching, Queue<LostHold> lost) {
        return opened.add(RedisSynchronizers.builder().cluster(cluster.seedUris().toArray(String[]::new))
                .keyPrefix(prefix).lease(lease).commandTimeout(Duration.ofSeconds(2)).lockCaching(caching)
                .lostHoldListener(lost::add, Runnable::run).build());
    }
}
