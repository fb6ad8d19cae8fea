package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.topology.PubSubElsewhere;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lock caching when a reply is lost or late, or a message is not delivered (docs/design/lock-caching.md,
 * section 6; DESIGN.md, "Unknown outcomes"): a cache take, a block reservation and a give-back whose
 * outcome the cacher cannot know, an ask-back message that never arrives, and Redis gone while the
 * client takes a cached lock. Each test checks what a user would: another client gets the lock
 * within a bound well below the lease (so not by the lease running out), fencing tokens strictly
 * increase, the failing call fails with {@link SynchronizerUnavailableException} rather than hang,
 * and nothing of the lock is left in Redis once the clients are closed.
 *
 * <p>Faults are made with a {@link FaultProxy} between the caching client and its server: held
 * replies ("ran, reply late"), a dropped reply followed by a cut ("ran, reply lost"), a blackhole
 * ("not delivered"). The other client talks to the server directly.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockCachingOutcomesTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Far longer than any wait below: a cache left to run out would outlast every one of them. */
    private static final Duration LONG_LEASE = Duration.ofSeconds(120);
    /** The caching client's command timeout through the proxy: what a fault costs it. */
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** How long another client waits for the lock: well below {@link #LONG_LEASE}. */
    private static final long PATIENCE_SECONDS = 30;

    private final Opened opened;
    private final String prefix;
    private final String name;

    LockCachingOutcomesTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /* --------------- the cache take (lock-cache-acquire.lua) --------------- */

    /**
     * The cache take ran in Redis but its reply came after the caller's timeout: lock() fails with
     * SynchronizerUnavailableException, and the cache nobody knows of is given back, so another
     * client gets the lock long before the 120 s lease that nobody renews would run out. The
     * cacher's next lock() takes it afresh with a token above the other client's.
     */
    @Test
    void lock_cacheTakeReplyLate_failsAndTheUnknownCacheIsGivenBack() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers cachingClient = client(proxy.uri(), LONG_LEASE, TIMEOUT, true);
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), LONG_LEASE, Duration.ofSeconds(5), false).lock(name);
        listenForAsks(cachingClient);

        proxy.holdReplies();
        Background<Void> first = Background.start("cacher", () -> {
            cacher.lock();
            return null;
        });
        Await.until("the cache take ran in Redis (or, later, failed)",
                () -> admin.exists(lockKey()) == 1 || !first.thread().isAlive());
        assertInstanceOf(SynchronizerUnavailableException.class, first.failure(), "lock() fails clearly");
        proxy.pass();

        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS),
                "the cache whose take answered late was left to its lease");
        long otherToken = other.fencingToken();
        other.unlock();
        awaitAnswers(cacher);
        cacher.lock();
        long again = cacher.fencingToken();
        cacher.unlock();
        assertTrue(again > otherToken, "token " + again + " above the other client's " + otherToken);
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /**
     * The cache take ran but its reply was lost with the connection: lock() fails; the same client's
     * next lock() meets its own cache field of the lost take (or finds it given back already), and
     * ends with exactly one cache of its own in Redis, the new one, whose base is the new token.
     * Another client then gets the lock by asking, with a token above it.
     */
    @Test
    void lock_cacheTakeReplyLost_retryBySameClientReplacesTheStaleCache() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers cachingClient = client(proxy.uri(), LONG_LEASE, TIMEOUT, true);
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), LONG_LEASE, Duration.ofSeconds(5), false).lock(name);
        listenForAsks(cachingClient);

        proxy.dropReplies(1, "EVALSHA");
        Background<Void> first = Background.start("cacher", () -> {
            cacher.lock();
            return null;
        });
        Await.until("the cache take's reply is dropped", () -> proxy.droppedReplies() == 1);
        proxy.cutAll();
        assertInstanceOf(SynchronizerUnavailableException.class, first.failure(), "lock() fails clearly");

        awaitAnswers(cacher);
        cacher.lock();
        long token = cacher.fencingToken();
        Map<String, String> hash = admin.hgetall(lockKey());
        hash.remove(":waiting");
        assertEquals(1, hash.size(), () -> "one holder field, the new cache: " + hash);
        String field = hash.keySet().iterator().next();
        assertTrue(field.endsWith(":cache"), () -> "a cache field: " + hash);
        assertEquals(Long.toString(token), hash.get(field), "the new cache's base is the new take's token");
        cacher.unlock();

        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client asks the new cache back");
        assertTrue(other.fencingToken() > token, "token " + other.fencingToken() + " above the cacher's " + token);
        other.unlock();
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /**
     * The give-back that follows a take in doubt is retried while Redis does not answer (a
     * blackhole). A retry whose turn comes after the client has taken the lock again, as a new
     * cache, leaves that cache alone: it is sent only while the client caches nothing. The new
     * cache is still in Redis afterwards, with the new take's token as its base.
     */
    @Test
    void lock_giveBackOfATakeInDoubtRetriedAfterANewTake_leavesTheNewCacheAlone() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers cachingClient = client(proxy.uri(), LONG_LEASE, TIMEOUT, true);
        DistributedLock cacher = cachingClient.lock(name);
        listenForAsks(cachingClient);

        proxy.blackhole(true);
        assertThrows(SynchronizerUnavailableException.class, cacher::lock, "the take went unanswered");
        Await.until("the give-back of the take in doubt waits for a retry",
                () -> RedisInternals.pendingRetries(cachingClient) >= 1);
        // What was kept runs now (the take, then the give-back); the retry stays queued for a tick.
        proxy.blackhole(false);
        awaitAnswers(cacher);
        cacher.lock();
        long token = cacher.fencingToken();
        RedisInternals.renewNow(cachingClient);

        assertTrue(cacher.verifyHeld(), "the retried give-back ended the client's new cache");
        assertEquals(Long.toString(token), admin.hget(lockKey(), cachingClient.clientId() + ":cache"));
        cacher.unlock();
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /* --------------- the block reservation (lock-cache-reserve.lua) --------------- */

    /**
     * The token block runs out and its reservation's reply is lost: lock() fails with
     * SynchronizerUnavailableException (no token from a block the cacher cannot know it has), the
     * cache is given back, and another client gets the lock with a token above every token the
     * cacher handed out; the cacher's next lock() gets one above that.
     */
    @Test
    void lock_reservationReplyLost_failsAndTheCacheIsGivenBack() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers cachingClient = client(proxy.uri(), LONG_LEASE, TIMEOUT, true);
        RedisInternals.cacheBlockForTests(cachingClient, 2);
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), LONG_LEASE, Duration.ofSeconds(5), false).lock(name);
        long last = 0;
        for (int i = 0; i < 2; i++) {   // the block's two tokens: the take in Redis, then one local take
            cacher.lock();
            assertTrue(cacher.fencingToken() > last);
            last = cacher.fencingToken();
            cacher.unlock();
        }

        proxy.dropReplies(1, "EVALSHA");
        Background<Void> third = Background.start("cacher", () -> {
            cacher.lock();
            return null;
        });
        Await.until("the reservation's reply is dropped", () -> proxy.droppedReplies() == 1);
        proxy.cutAll();
        assertInstanceOf(SynchronizerUnavailableException.class, third.failure(), "lock() fails clearly");

        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the cache was left to its lease");
        long otherToken = other.fencingToken();
        other.unlock();
        assertTrue(otherToken > last, "token " + otherToken + " above the cacher's " + last);
        awaitAnswers(cacher);
        cacher.lock();
        assertTrue(cacher.fencingToken() > otherToken, "token " + cacher.fencingToken() + " above " + otherToken);
        cacher.unlock();
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /**
     * A second thread of the caching client waits locally while the first reserves a new block;
     * the reservation's reply is lost and the first thread's lock() fails. The waiting thread is
     * not left asleep for the lease the cache had: it tries again, in Redis, and gets the lock
     * once the cache is given back.
     */
    @Test
    void lock_neighbourWaitingWhileAReservationFails_triesAgainAndGetsTheLock() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        // Pub/Sub straight to the server: a cut of the proxied connection then wakes no waiter.
        RedisClient split = opened.add(PubSubElsewhere.to(server.uri()));
        RedisSynchronizers cachingClient = opened.add(RedisSynchronizers.builder()
                .client(split, RedisURI.create(proxy.uri())).keyPrefix(prefix).lease(LONG_LEASE)
                .commandTimeout(TIMEOUT).lockCaching(true).build());
        RedisInternals.cacheBlockForTests(cachingClient, 1);
        DistributedLock cacher = cachingClient.lock(name);
        cacher.lock();   // the block's one token
        long last = cacher.fencingToken();
        cacher.unlock();

        proxy.dropReplies(1, "EVALSHA");
        Background<Void> reserving = Background.start("reserving", () -> {
            cacher.lock();
            return null;
        });
        Await.until("the reservation's reply is dropped", () -> proxy.droppedReplies() == 1);
        Background<Long> neighbour = Background.start("neighbour", () -> {
            cacher.lock();
            try {
                return cacher.fencingToken();
            } finally {
                cacher.unlock();
            }
        });
        Await.parked(neighbour.thread());
        assertInstanceOf(SynchronizerUnavailableException.class, reserving.failure(), "lock() fails clearly");
        proxy.cutAll();

        long token = neighbour.get();
        assertTrue(token > last, "token " + token + " above " + last);
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /* --------------- the give-back (lock-release.lua on the cache field) --------------- */

    /**
     * A cache asked back while a thread holds it is given back at that thread's unlock; that
     * give-back never reaches Redis (a blackhole, then the connection cut): unlock() fails with
     * SynchronizerUnavailableException, the give-back is retried as a follow-up once Redis can be
     * reached again, and the waiting client gets the lock long before the lease.
     */
    @Test
    void unlock_askedBackGiveBackNotDelivered_isRetriedAndTheAskerGetsTheLock() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers cachingClient = client(proxy.uri(), LONG_LEASE, TIMEOUT, true);
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), LONG_LEASE, Duration.ofSeconds(5), false).lock(name);
        cacher.lock();
        long held = cacher.fencingToken();
        Background<Long> asker = Background.start("asker", () -> {
            if (!other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS)) {
                return -1L;
            }
            try {
                return other.fencingToken();
            } finally {
                other.unlock();
            }
        });
        Await.until("the other client asks", () -> admin.hexists(lockKey(), ":waiting"));
        // The renewal's answer tells the cacher for certain, whether or not the message came first.
        RedisInternals.renewNow(cachingClient);

        proxy.blackhole(true);
        assertThrows(SynchronizerUnavailableException.class, cacher::unlock, "the give-back went unanswered");
        proxy.cutAll();
        proxy.blackhole(false);

        long otherToken = asker.get();
        assertTrue(otherToken > held, "the asker got the lock (" + otherToken + ") after the holder's " + held);
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /**
     * close() gives an idle cache back and the give-back's reply is lost: close() returns (it waits
     * at most the command timeout), and the give-back ran, so another client takes the lock at once.
     */
    @Test
    void close_giveBackReplyLost_returnsAndTheLockIsFree() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers cachingClient = client(proxy.uri(), LONG_LEASE, TIMEOUT, true);
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), LONG_LEASE, Duration.ofSeconds(5), false).lock(name);
        cacher.lock();
        long cached = cacher.fencingToken();
        cacher.unlock();

        proxy.dropReplies(1, "EVALSHA");
        Background.start("close", () -> {
            cachingClient.close();
            return null;
        }).get();

        assertTrue(other.tryLock(), "free at once: the give-back ran though its reply was lost");
        assertTrue(other.fencingToken() > cached);
        other.unlock();
        assertEquals(0, admin.exists(lockKey()));
    }

    /* --------------- the ask message lost --------------- */

    /**
     * The cacher's Pub/Sub connection is cut, and cannot be made again, before another client asks
     * for its idle cached lock: the ask message reaches nobody. The cache's renewal, answered
     * {@code ASKED_BACK}, is the backstop: the cache is given back and the other client gets the
     * lock within its wait, though the cache is renewed all along and would never expire.
     */
    @Test
    void lock_askMessageLost_theRenewalHandsTheLockOver() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy pubSubProxy = opened.add(FaultProxy.start(server.port()));
        Duration lease = Duration.ofSeconds(30);
        RedisClient split = opened.add(PubSubElsewhere.to(pubSubProxy.uri()));
        RedisSynchronizers cachingClient = opened.add(RedisSynchronizers.builder()
                .client(split, RedisURI.create(server.uri())).keyPrefix(prefix).lease(lease)
                .commandTimeout(TIMEOUT).lockCaching(true).build());
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), lease, Duration.ofSeconds(5), false).lock(name);
        cacher.lock();
        long cached = cacher.fencingToken();
        cacher.unlock();
        String askChannel = LockKeys.askChannel(prefix, cachingClient.clientId());
        assertEquals(1, subscribers(admin, askChannel), "the cacher listens for asks once it caches");

        pubSubProxy.blackhole(true);
        pubSubProxy.cutAll();
        Await.until("the cacher's ask channel has no subscriber", () -> subscribers(admin, askChannel) == 0);
        try {
            assertTrue(other.tryLock(PATIENCE_SECONDS * 2, TimeUnit.SECONDS),
                    "the renewal's ASKED_BACK answer did not hand the lock over");
            long otherToken = other.fencingToken();
            other.unlock();
            assertTrue(otherToken > cached, "token " + otherToken + " above the cached " + cached);
        } finally {
            pubSubProxy.pass();
        }
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /* --------------- Redis gone while the client takes its cached lock --------------- */

    /**
     * Redis cannot be reached (a blackhole) while the caching client takes its idle cached lock:
     * a local take may succeed while the cache's lease is live by the local clock (the design);
     * once the watchdog can no longer vouch for the lease, the holder is told (UNRENEWABLE) and
     * every lock() fails with SynchronizerUnavailableException within the command timeout, never
     * hangs and never hands out a token of the old block. With Redis back, the other client and
     * then the cacher get the lock, with increasing tokens.
     */
    @Test
    void lock_redisGone_localTakeWhileLeaseLiveThenClearFailures() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers cachingClient = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(6)).commandTimeout(Duration.ofSeconds(1)).lockCaching(true)
                .lostHoldListener(lost::add).build());
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), LONG_LEASE, Duration.ofSeconds(5), false).lock(name);
        cacher.lock();
        long last = cacher.fencingToken();
        cacher.unlock();

        proxy.blackhole(true);
        boolean tookLocally;
        try {
            cacher.lock();
            tookLocally = true;
        } catch (SynchronizerUnavailableException e) {
            tookLocally = false;   // the lease could no longer be vouched for already
        }
        if (tookLocally) {
            assertTrue(cacher.fencingToken() > last);
            last = cacher.fencingToken();
            LostHold report = lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
            assertNotNull(report, "the holder of a cached take is told when the cache's lease cannot be vouched for");
            assertEquals(LostHold.Cause.UNRENEWABLE, report.cause());
            assertThrows(LostHoldException.class, cacher::unlock);
        }
        for (int i = 0; i < 3; i++) {
            Background<Long> attempt = Background.start("lock-" + i, () -> {
                cacher.lock();
                long token = cacher.fencingToken();
                cacher.unlock();
                return token;
            });
            Throwable failure = attempt.failure();
            assertInstanceOf(SynchronizerUnavailableException.class, failure, "lock() with Redis gone: " + failure);
        }
        proxy.blackhole(false);

        awaitAnswers(other);
        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the lock");
        long otherToken = other.fencingToken();
        other.unlock();
        assertTrue(otherToken > last, "token " + otherToken + " above the cacher's " + last);
        awaitAnswers(cacher);
        cacher.lock();
        assertTrue(cacher.fencingToken() > otherToken);
        cacher.unlock();
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /**
     * The cache's renewals run in Redis but their replies do not come back, so the watchdog
     * declares the cache UNRENEWABLE while Redis still has it, renewed by the last of those runs:
     * the cacher gives it back (token-checked by its base) rather than leave it to keep everyone
     * out for most of a lease, so the cache is gone from Redis well before the lease of its last
     * renewal ends, and another client gets the lock.
     */
    @Test
    void watchdog_cacheUnrenewableWhileRedisHasIt_givesTheCacheBack() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        Duration lease = Duration.ofSeconds(30);
        RedisSynchronizers cachingClient = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .lease(lease).commandTimeout(Duration.ofSeconds(1)).lockCaching(true).lostHoldListener(lost::add)
                .build());
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), LONG_LEASE, Duration.ofSeconds(5), false).lock(name);
        cacher.lock();
        long held = cacher.fencingToken();

        proxy.holdReplies();
        LostHold report = lost.poll(lease.toSeconds() * 2, TimeUnit.SECONDS);
        assertNotNull(report, "the holder is told");
        assertEquals(LostHold.Cause.UNRENEWABLE, report.cause());
        // Renewals ran at every tick (a third of the lease): the last one left two thirds of a lease.
        Await.until("the cache is given back", Duration.ofSeconds(lease.toSeconds() / 3),
                () -> admin.exists(lockKey()) == 0);
        proxy.pass();

        assertThrows(LostHoldException.class, cacher::unlock);
        assertTrue(other.tryLock(), "free");
        assertTrue(other.fencingToken() > held);
        other.unlock();
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /**
     * A thread holds the cached lock and another thread of the same client waits locally when
     * the cache is found gone in Redis (forced free by another client, found by the cacher's next
     * renewal): the holder is told, and the waiting thread tries in Redis at once and gets the
     * lock, rather than sleep out the lease of a cache that no longer exists.
     */
    @Test
    void lock_cacheFoundGoneWhileAThreadWaitsLocally_theWaiterTriesAgainAndGetsTheLock() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers cachingClient = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(LONG_LEASE).commandTimeout(TIMEOUT).lockCaching(true).lostHoldListener(lost::add).build());
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), LONG_LEASE, Duration.ofSeconds(5), false).lock(name);
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Background<Throwable> holder = Background.start("holder", () -> {
            cacher.lock();
            holding.countDown();
            release.await();
            try {
                cacher.unlock();
                return null;
            } catch (LostHoldException e) {
                return e;
            }
        });
        holding.await();
        Background<Long> waiter = Background.start("waiter", () -> {
            cacher.lock();
            try {
                return cacher.fencingToken();
            } finally {
                cacher.unlock();
            }
        });
        Await.until("the waiter sleeps", () -> dev.synchronizers.fixture.RedisState.sleepsOnWakeup(waiter.thread()));

        assertTrue(other.forceUnlock(), "the cache was in Redis");
        RedisInternals.renewNow(cachingClient);
        LostHold report = lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertNotNull(report, "the holder is told");
        assertEquals(LostHold.Cause.GONE, report.cause());

        long token = waiter.get();
        assertTrue(token > report.fencingToken(), "token " + token + " above the lost hold's " + report.fencingToken());
        release.countDown();
        assertInstanceOf(LostHoldException.class, holder.get(), "the holder's unlock() says the hold was lost");
        assertNothingLeftAfterClosing(cachingClient, admin);
    }

    /* --------------- helpers --------------- */

    /** A server of this test alone, its script cache filled first (a late command is not re-sent after NOSCRIPT). */
    private RedisServer ownServer() {
        RedisServer server = opened.add(redis.startManaged());
        RedisCommands<String, String> admin = opened.commands(server.uri());
        for (Script script : Script.values()) {
            admin.scriptLoad(ScriptRegistry.text(script));
        }
        return server;
    }

    private RedisSynchronizers client(String uri, Duration lease, Duration commandTimeout, boolean caching) {
        return opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).lease(lease)
                .commandTimeout(commandTimeout).lockCaching(caching).build());
    }

    private String lockKey() {
        return LockKeys.of(prefix, name).lock();
    }

    /** Subscribers of {@code channel}, classic and sharded (the client uses sharded Pub/Sub on Redis 7). */
    private static long subscribers(RedisCommands<String, String> admin, String channel) {
        return admin.pubsubNumsub(channel).getOrDefault(channel, 0L)
                + admin.pubsubShardNumsub(channel).getOrDefault(channel, 0L);
    }

    /**
     * Makes the caching client listen on its ask channel before a fault, through a cached lock of
     * another name: its first cache subscribes, a round trip the fault would otherwise also hit.
     */
    private void listenForAsks(RedisSynchronizers cachingClient) {
        DistributedLock warm = cachingClient.lock(name + "-warm");
        warm.lock();
        warm.unlock();
    }

    /** Closes the caching client (giving its idle caches back) and checks that no key of the lock is left. */
    private void assertNothingLeftAfterClosing(RedisSynchronizers cachingClient, RedisCommands<String, String> admin) {
        cachingClient.close();
        Await.until("no key of the lock is left in Redis", () -> admin.exists(lockKey()) == 0);
    }

    /**
     * Waits until the lock's client answers again. Commands of one connection run in order, so by
     * then every command it sent before, late or not, has run.
     */
    private static void awaitAnswers(DistributedLock lock) {
        Await.until("the client answers again", () -> {
            try {
                lock.isLocked();
                return true;
            } catch (SynchronizerException e) {
                return false;
            }
        });
    }
}
