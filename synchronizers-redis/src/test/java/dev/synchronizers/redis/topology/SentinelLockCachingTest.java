package dev.synchronizers.redis.topology;

import static dev.synchronizers.redis.topology.CachedHandOver.PATIENCE_SECONDS;
import static dev.synchronizers.redis.topology.CachedHandOver.lockAndUnlock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.topology.CachedHandOver.Tokens;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lock caching ({@code lockCaching(true)}; docs/design/lock-caching.md) on a master with two
 * replicas under three sentinels, started once for the class: a cached lock, idle or held, is asked
 * back by another client and handed over before and after a planned failover
 * ({@code SENTINEL FAILOVER}); the cacher's standing ask channel follows the switch; and a give-back
 * is sent again to the new master after a switch, as a release is.
 *
 * <p>The lease is long enough that no renewal of a cache comes within a wait for it, so that a
 * hand-over is the ask message's doing alone (the renewal is the backstop for a lost message).
 */
@Tag("topology")
class SentinelLockCachingTest extends SentinelTestBase {

    /** Longer than three waits: no renewal (every third of it) asks a cache back within one. */
    private static final Duration NO_RENEWAL_WITHIN_A_WAIT = Duration.ofMinutes(10);

    /**
     * Before a planned failover, an idle and a held cached lock are each asked back and handed
     * over; across it, one cached lock stays idle and another held; after it, the cacher listens on
     * the new master, the held one is handed over at its unlock (or, had the failover lost it,
     * reported lost), and the idle one is asked back and handed over. Tokens increase throughout.
     */
    @Test
    void cachedLock_plannedFailover_handedOverBeforeAndAfter() throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        RedisSynchronizers cacher = client(true, lost);
        RedisSynchronizers other = client(false, new ConcurrentLinkedQueue<>());
        Tokens tokens = new Tokens();
        CachedHandOver.idle(cacher.lock(name + "-idle-before"), other.lock(name + "-idle-before"));
        CachedHandOver.held(cacher.lock(name + "-held-before"), other.lock(name + "-held-before"), () -> awaitAsked(cacher.lock(name + "-held-before").name()));

        DistributedLock idle = cacher.lock(name + "-idle");
        idle.lock();
        tokens.add(idle.fencingToken());
        idle.unlock();
        String askChannel = LockKeys.askChannel(prefix, cacherId(sentinels.master(), name + "-idle"));
        DistributedLock held = cacher.lock(name + "-held");
        held.lock();
        long holderToken = held.fencingToken();
        Tokens heldTokens = new Tokens();
        heldTokens.add(holderToken);
        RedisServer old = sentinels.master();

        RedisServer now = sentinels.failover();

        assertNotEquals(old, now);
        RedisCommands<String, String> onNew = opened.commands(now.uri());
        Await.until("the cacher listens on its ask channel on the new master",
                () -> RedisState.subscribers(onNew, askChannel) == 1);
        DistributedLock waiting = other.lock(name + "-held");
        Background<Long> waiter = Background.start("asker", () -> lockAndUnlock(waiting));
        Await.until("the other client asks", () -> onNew.hexists(LockKeys.of(prefix, name + "-held").lock(), ":waiting"));
        boolean reportedLost;
        try {
            held.unlock();
            reportedLost = false;
        } catch (LostHoldException e) {
            reportedLost = true;
        }
        long waiterToken = waiter.get();
        assertEquals(reportedLost, lost.stream().anyMatch(hold -> hold.fencingToken() == holderToken),
                "unlock() and the listener agree on whether the held cache was lost: " + lost);
        heldTokens.add(waiterToken);

        DistributedLock asker = other.lock(name + "-idle");
        assertTrue(asker.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the idle cached lock");
        tokens.add(asker.fencingToken());
        asker.unlock();
        CachedHandOver.idle(cacher.lock(name + "-idle-after"), other.lock(name + "-idle-after"));
    }

    /**
     * A cache given back on the old master, whose field the new master still has (as if the
     * give-back reached the old master after the promotion): after the switch the give-back is
     * sent again to the new master, which frees the lock there, rather than keep everyone out for
     * the rest of the cache's lease. Before the fix, give-backs were not recorded for re-sending.
     */
    @Test
    void cachedLock_givenBackBeforeASwitchButStillOnTheNewMaster_sentAgainThere() throws Exception {
        RedisSynchronizers cacher = client(true, new ConcurrentLinkedQueue<>());
        RedisSynchronizers other = client(false, new ConcurrentLinkedQueue<>());
        DistributedLock lock = cacher.lock(name);
        lock.lock();
        lock.unlock();
        String key = LockKeys.of(prefix, name).lock();
        RedisCommands<String, String> onOld = opened.commands(sentinels.master().uri());
        String field = cacherId(sentinels.master(), name) + ":cache";
        String base = onOld.hget(key, field);
        assertFalse(other.lock(name).tryLock(), "cached by the other client");   // its waiting mark asks it back
        Await.until("the cache is given back", () -> onOld.exists(key) == 0);
        // What a give-back that ran on the old master only leaves on the new one: the cache field.
        onOld.hset(key, field, base);
        onOld.pexpire(key, NO_RENEWAL_WITHIN_A_WAIT.toMillis());
        assertEquals(2L, onOld.waitForReplication(2, TimeUnit.SECONDS.toMillis(PATIENCE_SECONDS)),
                "the field on both replicas");

        RedisServer now = sentinels.failover();

        RedisCommands<String, String> onNew = opened.commands(now.uri());
        Await.until("the give-back, sent again, frees the lock on the new master", () -> onNew.exists(key) == 0);
        assertTrue(other.lock(name).tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS));
        other.lock(name).unlock();
    }

    /**
     * The master killed (SIGKILL) soon after a thread of the cacher took a cached lock, both
     * replicas paused meanwhile, and one promoted by the sentinels: whether it has the cache
     * depends on what reached it, so either outcome is allowed but neither silently. Once the
     * cacher has renewed on the new master (one watchdog tick, run by the test), either the hold
     * was reported lost, and {@code unlock()} says so, or it is intact, and {@code unlock()} hands
     * it over with a smaller token than the waiter's. The waiting client gets the lock either way.
     */
    @Test
    void cachedLock_masterKilledSoonAfterTheTake_heldCacheHandedOverOrReportedLost()
            throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        RedisSynchronizers cacher = client(true, lost);
        RedisSynchronizers other = client(false, new ConcurrentLinkedQueue<>());
        DistributedLock held = cacher.lock(name);
        DistributedLock waiting = other.lock(name);
        RedisServer old = sentinels.master();
        List<RedisServer> replicas = sentinels.servers().stream().filter(server -> !server.equals(old)).toList();
        long taken;
        replicas.forEach(RedisServer::pause);
        try {
            held.lock();
            taken = held.fencingToken();
            assertEquals(1L, opened.commands(old.uri()).exists(LockKeys.of(prefix, name).lock()), "cached on the master");
            old.kill();
        } finally {
            replicas.forEach(RedisServer::resume);
        }
        long holderToken = taken;
        try {
            sentinels.awaitMasterChangedFrom(old, 1);
            CachedHandOver.afterTheMasterWasReplaced(cacher, name + "-probe", held, holderToken, waiting, lost);
        } finally {
            old.restart();
            sentinels.awaitReplicas(2);
        }
    }

    /* --------------- helpers --------------- */

    /** The client id of the one client that caches the lock {@code lockName}, read from its cache field on {@code master}. */
    private String cacherId(RedisServer master, String lockName) {
        return CachedHandOver.cacherId(opened.commands(master.uri()), LockKeys.of(prefix, lockName).lock());
    }

    /** Waits until another client has marked the lock {@code lockName} as wanted (its try's ask). */
    private void awaitAsked(String lockName) {
        String key = LockKeys.of(prefix, lockName).lock();
        RedisCommands<String, String> master = opened.commands(sentinels.master().uri());
        Await.until("the other client asks for '" + lockName + "'", () -> master.hexists(key, ":waiting"));
    }

    private RedisSynchronizers client(boolean caching, Queue<LostHold> lost) {
        return opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri()).keyPrefix(prefix)
                .lease(NO_RENEWAL_WITHIN_A_WAIT).commandTimeout(Duration.ofSeconds(2)).lockCaching(caching)
                .lostHoldListener(lost::add, Runnable::run).build());
    }
}
