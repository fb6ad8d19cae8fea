package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.topology.PubSubElsewhere;
import dev.synchronizers.redis.topology.StandaloneTopology;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lost-hold reports of a cached lock that hang on a give-back's reply (issue 31, C1 and C2): a
 * take released from the cache without a round trip is reported lost when the cache turns out to
 * be gone, whichever sending of the give-back Redis answers, conservatively when none is, and
 * before {@code close()} returns when the client closes meanwhile.
 *
 * <p>The history each test builds is the documented window of lock caching: the cacher takes the
 * lock and releases it locally (the take is not confirmed by a renewal yet); another client forces
 * the lock free and takes it; the force's ask reaches the cacher (Pub/Sub straight to the server)
 * while the cacher's command connection (through a {@link FaultProxy}) holds its replies.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockCacheReportsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** No renewal runs in these tests on its own: every confirmation or retry is one they ask for. */
    private static final Duration LONG_LEASE = Duration.ofSeconds(120);
    /** The caching client's command timeout through the proxy: what a stalled reply costs it. */
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final long PATIENCE_SECONDS = 30;

    private final Opened opened;
    private final String prefix;
    private final String name;

    LockCacheReportsTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /**
     * C1: the ask's give-back is in flight, unanswered, when the application closes the client.
     * Before, close() waited only for the give-backs it sent itself and then stopped the watchdog,
     * whose thread the report was queued for: the take released from the lost cache was never
     * reported. Now close() delivers the report before it returns, conservatively (UNRENEWABLE),
     * since no answer came.
     */
    @Test
    void close_whileTheAskedBackGiveBackIsUnanswered_reportsTheUnconfirmedTakeBeforeReturning() throws Exception {
        Fixture f = new Fixture();
        long token = f.takeAndReleaseLocally();

        f.proxy.holdReplies();
        f.forceAndAwaitTheAsk();
        f.cachingClient.close();

        LostHold report = f.lost.poll();
        assertNotNull(report, "the unconfirmed take is reported before close() returns");
        assertEquals(token, report.fencingToken());
        assertEquals(LostHold.Cause.UNRENEWABLE, report.cause(), "no answer came: reported as unrenewable");
    }

    /**
     * C1 with the answer in time: the give-back's reply comes while close() waits, and the report
     * says what Redis said (the cache was gone), before close() returns.
     */
    @Test
    void close_whileTheAskedBackGiveBackIsLate_reportsWhatItsAnswerSaysBeforeReturning() throws Exception {
        Fixture f = new Fixture();
        long token = f.takeAndReleaseLocally();

        f.proxy.delay(Duration.ofMillis(300));
        f.forceAndAwaitTheAsk();
        f.cachingClient.close();

        LostHold report = f.lost.poll();
        assertNotNull(report, "the unconfirmed take is reported before close() returns");
        assertEquals(token, report.fencingToken());
        assertEquals(LostHold.Cause.GONE, report.cause());
    }

    /**
     * C2: the give-back's first sending times out (the cacher's connection stalls for a command
     * timeout) and a retry is queued; the connection recovers and the retry finds the cache gone.
     * Before, only the first sending's reply could settle the report, and the cache was already
     * forgotten, so no renewal found it gone either: nothing was reported while the client stayed
     * open. Now the retry's answer settles it.
     */
    @Test
    void askedBackGiveBack_firstSendingUnanswered_theRetrysAnswerReportsTheUnconfirmedTake() throws Exception {
        Fixture f = new Fixture();
        long token = f.takeAndReleaseLocally();

        f.proxy.holdReplies();
        f.forceAndAwaitTheAsk();
        Await.until("the give-back's first sending timed out and a retry is queued",
                () -> RedisInternals.pendingRetries(f.cachingClient) == 1);
        f.proxy.pass();
        RedisInternals.renewNow(f.cachingClient);   // the tick that sends the retry

        LostHold report = f.lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertNotNull(report, "the retry's answer reports the take");
        assertEquals(token, report.fencingToken());
        assertEquals(LostHold.Cause.GONE, report.cause());
        assertEquals(0, RedisInternals.pendingRetries(f.cachingClient));
    }

    /**
     * C2's other shape: an asked-back holder's unlock() gives the cache back and the give-back goes
     * unanswered, so unlock() fails with SynchronizerUnavailableException; the earlier take released
     * from the cache, and the take whose unlock() could not say, are both reported once the retry
     * finds the cache gone. Before, neither ever was.
     */
    @Test
    void unlockOfAnAskedBackTake_giveBackUnanswered_theRetrysAnswerReportsEveryUnconfirmedTake() throws Exception {
        Fixture f = new Fixture();
        long earlier = f.takeAndReleaseLocally();
        f.cacher.lock();
        long inside = f.cacher.fencingToken();

        f.forceAndAwaitTheAsk();
        f.proxy.holdReplies();
        assertThrows(SynchronizerUnavailableException.class, f.cacher::unlock, "the give-back is not answered");
        assertEquals(0, f.cacher.getHoldCount(), "the hold is dropped locally");
        f.proxy.pass();
        RedisInternals.renewNow(f.cachingClient);

        List<Long> reported = new ArrayList<>();
        while (reported.size() < 2) {
            LostHold report = f.lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
            assertNotNull(report, "both takes reported; so far " + reported);
            assertEquals(LostHold.Cause.GONE, report.cause());
            reported.add(report.fencingToken());
        }
        assertTrue(reported.containsAll(List.of(earlier, inside)), "reported " + reported);
    }

    /** One caching client through a proxy (its Pub/Sub straight to the server) and another client. */
    private final class Fixture {
        final RedisServer server = opened.add(redis.startManaged());
        final FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        final BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        final RedisSynchronizers cachingClient;
        final DistributedLock cacher;
        final DistributedLock other;

        Fixture() {
            RedisCommands<String, String> admin = opened.commands(server.uri());
            for (Script script : Script.values()) {
                admin.scriptLoad(ScriptRegistry.text(script));   // no NOSCRIPT round trip under a fault
            }
            PubSubElsewhere split = opened.add(PubSubElsewhere.to(server.uri()));
            split.setOptions(StandaloneTopology.clientOptions(TIMEOUT));   // as a client the library makes
            cachingClient = opened.add(RedisSynchronizers.builder().client(split, RedisURI.create(proxy.uri()))
                    .keyPrefix(prefix).lease(LONG_LEASE).commandTimeout(TIMEOUT).lockCaching(true)
                    .lostHoldListener(lost::add).build());
            cacher = cachingClient.lock(name);
            other = opened.add(RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix).lease(LONG_LEASE)
                    .build()).lock(name);
        }

        /** Takes the lock into the cache and releases it locally: a take no renewal has confirmed. */
        long takeAndReleaseLocally() {
            cacher.lock();
            long token = cacher.fencingToken();
            cacher.unlock();
            assertEquals(1, RedisInternals.cachedLocks(cachingClient), "cached");
            return token;
        }

        /** Forces the lock free from the other client, which takes it; waits until the cacher heard the ask. */
        void forceAndAwaitTheAsk() throws InterruptedException {
            assertTrue(other.forceUnlock());
            assertTrue(other.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client takes the forced lock");
            Await.until("the cacher heard the ask", () -> askHeard());
        }

        private boolean askHeard() {
            String state = cacher.toString();
            return RedisInternals.cachedLocks(cachingClient) == 0 || state.contains("asked back");
        }
    }
}
