package dev.synchronizers.redis.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
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
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The semaphore when a reply is lost or late: permits are counted per acquisition, so a lost
 * lease, a timed-out call or a late command never shrinks the pool, never lets one thread release
 * another's permit, and never leaves a phantom in the line. Each test pauses its own server
 * (SIGSTOP) past the command timeout: the commands sent meanwhile run when it resumes, after their
 * callers gave up on them, which is "the command ran but its reply was lost" made deterministic.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class SemaphoreUnknownOutcomesTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    SemaphoreUnknownOutcomesTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /* --------------- lost leases --------------- */

    /**
     * A permit reported lost while Redis still counted it (Redis stalled for most of a lease) is
     * given up for good: another thread's acquire afterwards does not re-lease it, so the pool is
     * whole again while that thread holds its own permit.
     */
    @Test
    void acquire_afterAPermitWasReportedUnrenewable_theLostPermitReturnsToThePool() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = client(server, 6_000, lost);
        DistributedSemaphore semaphore = client.semaphore(name);
        assertTrue(semaphore.trySetPermits(2));
        assertTrue(semaphore.tryAcquire(), "thread A takes a permit");
        LostHold report = lostWhileStalled(server, lost);
        assertEquals(LostHold.Cause.UNRENEWABLE, report.cause());
        Background<Boolean> threadB = Background.start("B", () -> semaphore.tryAcquire(1, 10, TimeUnit.SECONDS));
        assertTrue(threadB.get(), "thread B takes a permit");
        DistributedSemaphore observer = client(server, 30_000, new LinkedBlockingQueue<>()).semaphore(name);
        Await.until("the lost permit is back in the pool while B holds its own",
                () -> observer.availablePermits() == 1);
    }

    /**
     * The thread whose permit was lost cannot release another thread's permit: its release throws
     * {@link LostHoldException}, and the other thread's release still succeeds, so that thread's
     * permit stayed counted and renewed meanwhile.
     */
    @Test
    void release_byTheThreadWhosePermitWasLost_throwsAndLeavesTheOtherThreadsPermit() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = client(server, 6_000, lost);
        DistributedSemaphore semaphore = client.semaphore(name);
        assertTrue(semaphore.trySetPermits(2));
        assertTrue(semaphore.tryAcquire(), "thread A takes a permit");
        lostWhileStalled(server, lost);
        Background<Boolean> threadB = Background.start("B", () -> semaphore.tryAcquire(1, 10, TimeUnit.SECONDS));
        assertTrue(threadB.get(), "thread B takes a permit");
        assertThrows(LostHoldException.class, semaphore::release, "A's permit was lost");
        Background<Void> releaseB = Background.start("B-release", () -> {
            semaphore.release();
            return null;
        });
        releaseB.get();
        DistributedSemaphore observer = client(server, 30_000, new LinkedBlockingQueue<>()).semaphore(name);
        Await.until("every permit is back", () -> observer.availablePermits() == 2);
    }

    /* --------------- timed-out calls --------------- */

    /**
     * An acquire whose reply comes only after the caller gave up (Redis paused past the command
     * timeout) took a permit the caller never got: the client gives it back once the reply
     * arrives, long before the client's 60 s lease could return it. Lesson 2, for permits.
     */
    @Test
    void acquire_replyAfterTheTimeout_thePermitTakenIsGivenBack() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        RedisSynchronizers client = RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(60)).commandTimeout(Duration.ofMillis(300)).build();
        opened.add(client);
        DistributedSemaphore semaphore = client.semaphore(name);
        assertTrue(semaphore.trySetPermits(1));
        server.pause();
        try {
            assertThrows(SynchronizerUnavailableException.class, () -> semaphore.tryAcquire(1, 10, TimeUnit.SECONDS));
        } finally {
            server.resume();
        }
        String holds = prefix + ":semaphore:{" + name + "}:holds";
        Await.until("the permit is given back", () -> !"1".equals(admin.hget(holds, ":sum")));
        assertEquals(1, semaphore.availablePermits());
        assertTrue(semaphore.tryAcquire(), "and can be taken again");
        semaphore.release();
    }

    /** A {@code tryAcquire()} whose reply came after the timeout gives back the permit it took, long before its lease. */
    @Test
    void tryAcquire_replyAfterTheTimeout_thePermitTakenIsGivenBack() throws Exception {
        RedisServer server = redis.startManaged();
        RedisSynchronizers client = client(server, 60_000, new LinkedBlockingQueue<>());
        DistributedSemaphore semaphore = client.semaphore(name);
        assertTrue(semaphore.trySetPermits(3));
        assertTrue(semaphore.tryAcquire(), "a permit the client holds meanwhile, renewed");
        whileStalled(server, () -> assertThrows(SynchronizerUnavailableException.class, () -> semaphore.tryAcquire(1)));
        Await.until("the permit taken late is given back", () -> semaphore.availablePermits() == 2);
        semaphore.release();
        assertEquals(3, semaphore.availablePermits());
    }

    /** A {@code drainPermits()} whose reply came after the timeout gives back what it drained. */
    @Test
    void drainPermits_replyAfterTheTimeout_thePermitsDrainedAreGivenBack() throws Exception {
        RedisServer server = redis.startManaged();
        RedisSynchronizers client = client(server, 60_000, new LinkedBlockingQueue<>());
        DistributedSemaphore semaphore = client.semaphore(name);
        assertTrue(semaphore.trySetPermits(3));
        whileStalled(server, () -> assertThrows(SynchronizerUnavailableException.class, semaphore::drainPermits));
        Await.until("the drained permits are given back", () -> semaphore.availablePermits() == 3);
    }

    /**
     * A release whose reply is lost (it ran; then the connection broke) is booked at once and
     * retried; the retry releases nothing more, so another thread's permit stays counted and
     * that thread's own release still succeeds.
     */
    @Test
    void release_replyLostThenRetried_releasesOnce() throws Exception {
        RedisServer server = redis.startManaged();
        // Cached, so that the held release is one EVALSHA that runs (a NOSCRIPT answer would be held too).
        RedisCommands<String, String> admin = opened.commands(server.uri());
        for (Script script : Script.values()) {
            admin.scriptLoad(ScriptRegistry.text(script));
        }
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(60)).commandTimeout(Duration.ofMillis(500)).build());
        DistributedSemaphore semaphore = client.semaphore(name);
        DistributedSemaphore observer = client(server, 60_000, new LinkedBlockingQueue<>()).semaphore(name);
        assertTrue(semaphore.trySetPermits(2));
        assertTrue(semaphore.tryAcquire(), "thread X takes a permit");
        Background<Boolean> threadY = Background.start("Y", semaphore::tryAcquire);
        assertTrue(threadY.get(), "thread Y takes a permit");

        proxy.holdReplies();
        assertThrows(SynchronizerUnavailableException.class, semaphore::release, "X's release gets no reply");
        Await.until("X's release ran", () -> observer.availablePermits() == 1);
        assertEquals(1, RedisInternals.pendingRetries(client), "the release is to be retried");
        proxy.cutAll();
        proxy.pass();
        Await.until("the retried release has run", () -> {
            RedisInternals.renewNow(client);
            return RedisInternals.pendingRetries(client) == 0;
        });
        assertEquals(1, observer.availablePermits(), "the retried release released X's permit only");
        Background<Void> releaseY = Background.start("Y-release", () -> {
            semaphore.release();
            return null;
        });
        releaseY.get();
        assertEquals(2, observer.availablePermits());
    }

    /* --------------- queueing with a lost reply --------------- */

    /**
     * A timed {@code tryAcquire} whose first try queued the waiter but whose reply came too late
     * leaves no phantom in the line: the next release does not hand the permit to it, and a third
     * client gets the permit at once.
     */
    @Test
    void tryAcquire_queueingReplyLost_leavesNoPhantomInTheLine() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedSemaphore holder = client(server, 60_000, new LinkedBlockingQueue<>()).semaphore(name);
        DistributedSemaphore lateWaiter = client(server, 60_000, new LinkedBlockingQueue<>()).semaphore(name);
        DistributedSemaphore third = client(server, 60_000, new LinkedBlockingQueue<>()).semaphore(name);
        assertTrue(holder.trySetPermits(1));
        assertTrue(holder.tryAcquire());
        whileStalled(server, () -> assertThrows(SynchronizerUnavailableException.class,
                () -> lateWaiter.tryAcquire(1, 30, TimeUnit.SECONDS)));
        holder.release();
        assertTrue(third.tryAcquire(1, 20, TimeUnit.SECONDS), "the released permit went to a live waiter");
        third.release();
    }

    /* --------------- helpers --------------- */

    /** Stalls the server until the watchdog reports a hold lost, then resumes it; returns the report. */
    private static LostHold lostWhileStalled(RedisServer server, BlockingQueue<LostHold> lost) throws Exception {
        server.pause();
        LostHold report;
        try {
            report = lost.poll(30, TimeUnit.SECONDS);
        } finally {
            server.resume();
        }
        assertNotNull(report, "a lost hold was reported while Redis was stalled");
        return report;
    }

    /** Runs {@code call} (which must time out) while the server is stalled, then resumes it. */
    private static void whileStalled(RedisServer server, Runnable call) {
        server.pause();
        try {
            call.run();
        } finally {
            server.resume();
        }
    }

    private RedisSynchronizers client(RedisServer server, long leaseMillis, BlockingQueue<LostHold> lost) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .lease(Duration.ofMillis(leaseMillis)).commandTimeout(Duration.ofMillis(500))
                .lostHoldListener(lost::add).build();
        opened.add(client);
        return client;
    }
}
