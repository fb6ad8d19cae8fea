package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lock caching ({@code RedisSynchronizers.Builder.lockCaching(true)}; docs/design/lock-caching.md):
 * a re-take by the client that caches the lock makes no round trip, another client gets the lock
 * after asking it back, and fencing tokens strictly increase across cached re-takes and hand-overs
 * between clients. The contract suite runs with caching too (Kind.CACHED_LOCK); these are the tests of what only a cached lock does.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockCachingTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Long enough that no renewal falls into a measured stretch by design; the test does not rely on it. */
    private static final Duration LONG_LEASE = Duration.ofSeconds(60);
    /** Short, so that the renewal that asks a cache back (a third of it) comes soon. */
    private static final Duration SHORT_LEASE = Duration.ofSeconds(3);
    /** How long a test waits for what the contract promises before it fails rather than hang. */
    private static final long PATIENCE_SECONDS = 60;

    private final Opened opened;
    private final String prefix;
    private final String name;

    LockCachingTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    private RedisSynchronizers client(RedisServer server, Duration lease, boolean caching) {
        return opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix).lease(lease)
                .lockCaching(caching).build());
    }

    /**
     * The first lock() takes the lock in Redis as the client's cache; every later lock() and
     * unlock() by the client, on any of its threads, runs no script, and each re-take's token is
     * above the one before.
     */
    @Test
    void lock_cachedReTakes_runNoScriptAndTokensIncrease() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock lock = client(server, LONG_LEASE, true).lock(name);
        RedisCommands<String, String> admin = opened.commands(server.uri());
        lock.lock();
        long last = lock.fencingToken();
        lock.unlock();
        admin.configResetstat();

        for (int i = 0; i < 1_000; i++) {
            lock.lock();
            long token = lock.fencingToken();
            assertTrue(token > last, "token " + token + " after " + last);
            last = token;
            lock.unlock();
        }
        long onOtherThread = Background.start("other-thread", () -> {
            lock.lock();
            try {
                return lock.fencingToken();
            } finally {
                lock.unlock();
            }
        }).get();
        assertTrue(onOtherThread > last, "another thread of the client takes it from the cache too");

        String stats = admin.info("commandstats");
        assertEquals(0, RedisState.calls(stats, "evalsha"), () -> "script calls by SHA: " + stats);
        assertEquals(1L, admin.exists(prefix + ":lock:{" + name + "}"), "the cache stays in Redis");
    }

    /**
     * Another client that wants a lock this client caches (idle) asks for it back, and gets it;
     * its token is above every token the cacher handed out, and when the cacher takes it again,
     * in Redis, its token is above the other client's.
     */
    @Test
    void lock_byAnotherClient_asksTheIdleCacheBackAndTokensIncrease() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock cacher = client(server, SHORT_LEASE, true).lock(name);
        DistributedLock other = client(server, SHORT_LEASE, false).lock(name);
        long cached = 0;
        for (int i = 0; i < 10; i++) {
            cacher.lock();
            cached = cacher.fencingToken();
            cacher.unlock();
        }

        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the lock");
        long otherToken = other.fencingToken();
        other.unlock();
        assertTrue(otherToken > cached, "token " + otherToken + " above the cached block's " + cached);

        assertTrue(cacher.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS));
        long again = cacher.fencingToken();
        cacher.unlock();
        assertTrue(again > otherToken, "token " + again + " above the other client's " + otherToken);
    }

    /**
     * A cache held by one of its client's threads while another client asks for it is given back
     * at that thread's unlock (or, if the ask comes later, by the next renewal): the other client
     * gets the lock, never while the holder holds it.
     */
    @Test
    void lock_byAnotherClientWhileHeld_getsItAfterTheHoldersUnlock() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock cacher = client(server, SHORT_LEASE, true).lock(name);
        DistributedLock other = client(server, SHORT_LEASE, false).lock(name);
        RedisCommands<String, String> admin = opened.commands(server.uri());
        cacher.lock();
        long held = cacher.fencingToken();
        CountDownLatch unlocked = new CountDownLatch(1);
        Background<Long> waiter = Background.start("other-client", () -> {
            if (!other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS)) {
                return -1L;
            }
            try {
                assertEquals(0, unlocked.getCount(), "the other client holds it only after the holder's unlock");
                return other.fencingToken();
            } finally {
                other.unlock();
            }
        });
        Await.until("the other client asks", () -> admin.hexists(prefix + ":lock:{" + name + "}", ":waiting"));
        assertTrue(cacher.isHeldByCurrentThread());
        unlocked.countDown();
        cacher.unlock();

        long otherToken = waiter.get();
        assertTrue(otherToken > held, "token " + otherToken + " above the holder's " + held);
        assertFalse(cacher.isHeldByCurrentThread());
    }

    /** A thread of the caching client waits for another of its threads locally and takes the cache after it. */
    @Test
    void lock_twoThreadsOfTheCachingClient_secondTakesTheCacheAfterTheFirstsUnlock() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock lock = client(server, LONG_LEASE, true).lock(name);
        RedisCommands<String, String> admin = opened.commands(server.uri());
        lock.lock();
        long first = lock.fencingToken();
        admin.configResetstat();
        Background<Long> second = Background.start("second", () -> {
            lock.lock();
            try {
                return lock.fencingToken();
            } finally {
                lock.unlock();
            }
        });
        Await.parked(second.thread());
        lock.unlock();

        assertTrue(second.get() > first);
        String stats = admin.info("commandstats");
        assertEquals(0, RedisState.calls(stats, "evalsha"), () -> "no script call: " + stats);
    }

    /**
     * A thread that ends inside a cached hold, without unlock(), abandons it as it would a hold in
     * Redis: reported {@code ABANDONED} once another client asks for the lock, which then gets it.
     */
    @Test
    void lock_threadEndsInsideACachedHold_isReportedAbandonedAndTheOtherClientGetsIt() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        DistributedLock cacher = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(SHORT_LEASE).lockCaching(true).lostHoldListener(lost::add).build()).lock(name);
        DistributedLock other = client(server, SHORT_LEASE, false).lock(name);
        Background<Long> ended = Background.start("ends-holding", () -> {
            cacher.lock();
            return cacher.fencingToken();
        });
        long abandonedToken = ended.get();
        ended.thread().join();

        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the lock");
        long otherToken = other.fencingToken();
        other.unlock();
        assertTrue(otherToken > abandonedToken);
        LostHold report = lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertEquals(LostHold.Cause.ABANDONED, report == null ? null : report.cause(), () -> "report " + report);
        assertEquals(abandonedToken, report.fencingToken());
    }

    /**
     * A handle and a fixed-lease hold do not use the cache: the client gives its idle cache back
     * first and takes them in Redis, with tokens above the cache's; afterwards the lock is cached again.
     */
    @Test
    void acquire_handleAndFixedLease_bypassTheIdleCache() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock lock = client(server, LONG_LEASE, true).lock(name);
        lock.lock();
        long cached = lock.fencingToken();
        lock.unlock();

        try (LockHandle handle = lock.acquire()) {
            assertTrue(handle.fencingToken() > cached, "handle token above the cache's");
            cached = handle.fencingToken();
        }
        lock.lock(30, TimeUnit.SECONDS);
        long fixed = lock.fencingToken();
        lock.unlock();
        assertTrue(fixed > cached, "fixed-lease token above the handle's");

        lock.lock();
        long again = lock.fencingToken();
        lock.unlock();
        assertTrue(again > fixed);
    }

    /**
     * The ask is a message on the cacher's channel: with a lease so long that no renewal comes
     * within the other client's wait, the other client still gets the idle cached lock, so the
     * message alone asked it back.
     */
    @Test
    void lock_byAnotherClient_theAskMessageAloneGetsTheIdleCacheBack() throws Exception {
        RedisServer server = redis.startManaged();
        Duration noRenewalWithinTheWait = Duration.ofSeconds(PATIENCE_SECONDS * 6);
        DistributedLock cacher = client(server, noRenewalWithinTheWait, true).lock(name);
        DistributedLock other = client(server, noRenewalWithinTheWait, false).lock(name);
        cacher.lock();
        long cached = cacher.fencingToken();
        cacher.unlock();

        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS),
                "the other client gets the lock before the cacher's first renewal could ask it back");
        long otherToken = other.fencingToken();
        other.unlock();
        assertTrue(otherToken > cached);
    }

    /**
     * The ask message lost: the cacher's Pub/Sub connection is cut and cannot subscribe again (an
     * ACL change takes its ask channel away, which disconnects it), so nobody listens on the ask
     * channel when the other client asks. The waiting mark the other client's try left is seen by
     * the cache's next renewal (a third of the short lease), which gives the idle cache back: the
     * other client gets the lock, with a token above the cacher's.
     */
    @Test
    void lock_byAnotherClient_askMessageLost_theRenewalGivesTheIdleCacheBack() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        acl(admin, "SETUSER", "cacher", "on", ">cacher-secret", "~*", "&*", "+@all");
        DistributedLock cacher = opened.add(RedisSynchronizers.builder()
                .uri("redis://cacher:cacher-secret@" + server.host() + ":" + server.port()).keyPrefix(prefix)
                .lease(SHORT_LEASE).lockCaching(true).build()).lock(name);
        DistributedLock other = client(server, SHORT_LEASE, false).lock(name);
        cacher.lock();
        long cached = cacher.fencingToken();
        cacher.unlock();
        String key = prefix + ":lock:{" + name + "}";
        String field = admin.hkeys(key).stream().filter(f -> f.endsWith(":cache")).findFirst().orElseThrow();
        String askChannel = LockKeys.askChannel(prefix, field.substring(0, field.length() - ":cache".length()));
        Await.until("the cacher listens on its ask channel", () -> RedisState.subscribers(admin, askChannel) == 1);

        // Only its lock channels left: the subscriber of the ask channel is disconnected and refused from now on.
        acl(admin, "SETUSER", "cacher", "resetchannels", "&" + prefix + ":lock:*");
        Await.until("nobody listens on the cacher's ask channel", () -> RedisState.subscribers(admin, askChannel) == 0);

        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the lock");
        long otherToken = other.fencingToken();
        other.unlock();
        assertTrue(otherToken > cached, "token " + otherToken + " above the cached block's " + cached);
        assertEquals(0, RedisState.subscribers(admin, askChannel), "no ask message could have reached the cacher");
    }

    private static void acl(RedisCommands<String, String> admin, String... args) {
        CommandArgs<String, String> command = new CommandArgs<>(StringCodec.UTF8);
        for (String arg : args) {
            command.add(arg);
        }
        admin.dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), command);
    }

    /**
     * A condition's await on a cached hold lets the lock go for real: another client takes the
     * lock while the waiter waits, signals it, and the waiter takes the lock again afterwards with
     * a token above the signaller's.
     */
    @Test
    void await_onACachedHold_releasesForRealAndIsSignalledByAnotherClient() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock cacher = client(server, LONG_LEASE, true).lock(name);
        DistributedLock other = client(server, LONG_LEASE, false).lock(name);
        Condition cacherCondition = cacher.newCondition();
        Condition otherCondition = other.newCondition();
        cacher.lock();
        cacher.unlock();   // cached, idle
        Background<Long> waiter = Background.start("waiter", () -> {
            cacher.lock();
            try {
                assertTrue(cacherCondition.await(PATIENCE_SECONDS, TimeUnit.SECONDS), "signalled");
                return cacher.fencingToken();
            } finally {
                cacher.unlock();
            }
        });

        RedisCommands<String, String> admin = opened.commands(server.uri());
        Await.until("the await gives the cache back, unasked",
                () -> admin.exists(prefix + ":lock:{" + name + "}") == 0);
        assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the lock during the await");
        long signaller = other.fencingToken();
        try {
            otherCondition.signal();
        } finally {
            other.unlock();
        }

        assertTrue(waiter.get() > signaller, "the waiter's new hold is above the signaller's");
    }

    /**
     * isLocked() of the caching client answers from its cache (false while idle, true while one of
     * its threads is inside); another client sees the cached lock as locked, since its own try
     * would fail until the cache is given back.
     */
    @Test
    void isLocked_cachedLock_idleIsFreeForTheCacherAndLockedForOthers() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock cacher = client(server, LONG_LEASE, true).lock(name);
        DistributedLock other = client(server, LONG_LEASE, false).lock(name);
        cacher.lock();
        assertTrue(cacher.isLocked());
        cacher.unlock();

        assertFalse(cacher.isLocked(), "idle in the cache");
        assertTrue(other.isLocked(), "another client's cache keeps this client out until asked back");
    }

    /** toString() says what the client's cache of the lock is (the soak tells cached holds by it), without a round trip. */
    @Test
    void toString_showsTheCachesState() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock cacher = client(server, LONG_LEASE, true).lock(name);
        DistributedLock plain = client(server, LONG_LEASE, false).lock(name + "-plain");
        assertFalse(cacher.toString().contains("cached"), cacher.toString());
        cacher.lock();
        assertTrue(cacher.toString().contains("cached by this client: held"), cacher.toString());
        cacher.unlock();
        assertTrue(cacher.toString().contains("cached by this client: idle"), cacher.toString());
        plain.lock();
        assertFalse(plain.toString().contains("cached"), plain.toString());
        plain.unlock();
    }

    /**
     * forceUnlock() by another client deletes the cache in Redis at once; the cacher learns of it at
     * its next renewal. A cached hold across the force, released locally before then (no round trip
     * to notice anything), overlapped the other client's hold: its holder is still told, by the
     * lost-hold listener once the cacher learns, with the hold's own token (design section 3).
     */
    @Test
    void forceUnlock_byAnotherClient_cachedHoldReleasedBeforeTheCacherLearns_isReportedLost() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        DistributedLock cacher = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(SHORT_LEASE).lockCaching(true).lostHoldListener(lost::add).build()).lock(name);
        DistributedLock other = client(server, SHORT_LEASE, false).lock(name);
        cacher.lock();
        long forcedToken = cacher.fencingToken();

        assertTrue(other.forceUnlock());
        assertTrue(other.tryLock(), "the other client takes the forced lock");
        try {
            cacher.unlock();   // the cacher may not know yet: a local release
        } catch (LostHoldException e) {
            // its renewal came first and told it at once: the listener heard too
        }

        LostHold report = lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertEquals(forcedToken, report == null ? null : report.fencingToken(), () -> "report " + report);
        other.unlock();
    }

    /**
     * As above, when the cacher closes before its next renewal (a long lease: none comes within the
     * test): close() gives the idle cache back, finds it gone, and tells the holder of the cached
     * hold taken and released after the force, whose token is below the other client's.
     */
    @Test
    void forceUnlock_byAnotherClient_thenTheCacherCloses_cachedHoldIsReportedLost() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers cachingClient = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(LONG_LEASE).lockCaching(true).lostHoldListener(lost::add).build());
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server, SHORT_LEASE, false).lock(name);
        cacher.lock();
        cacher.unlock();
        assertTrue(other.forceUnlock());
        assertTrue(other.tryLock(), "the other client takes the forced lock");

        long takenAfterTheForce = -1;
        if (cacher.tryLock()) {   // a local take (below the other's token), unless the renewal told the cacher first
            takenAfterTheForce = cacher.fencingToken();
            try {
                cacher.unlock();
            } catch (LostHoldException e) {
                // the renewal came first: told at once
            }
        }
        cachingClient.close();

        if (takenAfterTheForce >= 0) {
            assertTrue(takenAfterTheForce < other.fencingToken(), "the window of design section 3");
            // The hold before the force may be reported too (it was not confirmed either): looked past.
            List<LostHold> reports = new ArrayList<>();
            LostHold report;
            do {
                report = lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
                if (report != null) {
                    reports.add(report);
                }
            } while (report != null && report.fencingToken() != takenAfterTheForce);
            assertTrue(report != null, "reported lost: token " + takenAfterTheForce + ", reports " + reports);
        }
        other.unlock();
    }

    /** close() gives back what the client caches idle, so that another client takes it at once. */
    @Test
    void close_givesIdleCachesBack() throws Exception {
        RedisServer server = redis.startManaged();
        RedisSynchronizers cachingClient = client(server, LONG_LEASE, true);
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server, LONG_LEASE, false).lock(name);
        cacher.lock();
        long cached = cacher.fencingToken();
        cacher.unlock();

        cachingClient.close();

        assertFalse(other.isLocked());
        assertTrue(other.tryLock(), "free at once");
        assertTrue(other.fencingToken() > cached);
        other.unlock();
    }

    /**
     * Another client's {@code forceUnlock()} of a lock this client caches (idle) tells the cacher
     * at once: its threads stop taking the lock locally after that one message, not at the cache's
     * next renewal (here minutes away), so a thread of the cacher cannot take it while the client
     * that forced it holds it.
     */
    @Test
    void forceUnlock_byAnotherClient_ofAnIdleCache_stopsLocalTakesAtOnce() throws Exception {
        RedisServer server = redis.startManaged();
        Duration noRenewalInThisTest = Duration.ofMinutes(10);
        DistributedLock cacher = client(server, noRenewalInThisTest, true).lock(name);
        DistributedLock other = client(server, noRenewalInThisTest, false).lock(name);
        cacher.lock();
        cacher.unlock();
        assertFalse(cacher.isLocked(), "cached and idle, answered locally");

        assertTrue(other.forceUnlock());
        other.lock();
        try {
            Await.until("the cacher hears of the force", cacher::isLocked);
            assertFalse(cacher.tryLock(), "no local take while the other client holds the lock");
        } finally {
            other.unlock();
        }
        cacher.lock();
        cacher.unlock();
    }


    /**
     * A cache lost while idle (here its key deleted, as a failover to a replica that never had it
     * would) after a thread took it and released it locally, with no round trip: the thread's
     * {@code unlock()} returned normally, so the loss is reported to the listener when the watchdog
     * finds it, with that thread and the token it had, never silently.
     */
    @Test
    void cacheLostWhileIdle_afterLocalTakesSinceTheLastRenewal_reportsThemWithTheirTokens() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(Duration.ofMinutes(10)).lockCaching(true).lostHoldListener(lost::add).build());
        DistributedLock lock = client.lock(name);
        lock.lock();
        lock.unlock();
        lock.lock();
        long taken = lock.fencingToken();
        lock.unlock();
        opened.commands(server.uri()).del(prefix + ":lock:{" + name + "}");

        RedisInternals.renewNow(client);

        LostHold report = reportOf(lost, taken);
        assertEquals(ClientContext.currentThreadId(), report.threadId());
    }

    /**
     * Waits for the report of the hold with {@code token} among the reports of holds lost, each of
     * which must be {@code GONE}: every take released since the cache was last confirmed is reported.
     */
    private static LostHold reportOf(BlockingQueue<LostHold> lost, long token) throws InterruptedException {
        while (true) {
            LostHold report = lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
            assertTrue(report != null, "no report of the hold with token " + token);
            assertEquals(LostHold.Cause.GONE, report.cause(), () -> "report " + report);
            if (report.fencingToken() == token) {
                return report;
            }
        }
    }

    /**
     * The same loss, when every take ended before a renewal confirmed the cache: nothing to report
     * (the cache was in Redis throughout those takes), so no lost hold is reported.
     */
    @Test
    void cacheLostWhileIdle_takesAllEndedBeforeARenewalConfirmedIt_reportsNothing() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(Duration.ofMinutes(10)).lockCaching(true).lostHoldListener(lost::add).build());
        DistributedLock lock = client.lock(name);
        lock.lock();
        lock.unlock();
        lock.lock();
        lock.unlock();
        RedisInternals.renewNow(client);
        opened.commands(server.uri()).del(prefix + ":lock:{" + name + "}");

        RedisInternals.renewNow(client);
        lock.lock();
        lock.unlock();

        assertEquals(null, lost.poll(), "no hold overlapped anyone");
    }

    /**
     * Another client forces an idle cache free right after a local take of it ended: the cacher,
     * told by the forcer's message, gives it back, finds it gone, and reports that take lost.
     */
    @Test
    void forceUnlock_byAnotherClient_rightAfterALocalTake_reportsThatTakeLost() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        DistributedLock cacher = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(Duration.ofMinutes(10)).lockCaching(true).lostHoldListener(lost::add).build()).lock(name);
        DistributedLock other = client(server, Duration.ofMinutes(10), false).lock(name);
        cacher.lock();
        cacher.unlock();
        cacher.lock();
        long taken = cacher.fencingToken();
        cacher.unlock();

        assertTrue(other.forceUnlock());

        reportOf(lost, taken);
    }

}
