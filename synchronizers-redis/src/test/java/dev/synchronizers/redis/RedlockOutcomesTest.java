package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * A {@link Redlock} whose nodes' replies are lost or late, each node behind its own
 * {@link FaultProxy}: commands that ran without their caller hearing of it, and follow-ups that
 * never arrived. Every such state change is settled by a follow-up retried while its lease lasts,
 * so nothing is left held for a lease, and a hold is never believed held once fewer than a quorum
 * of nodes renewed it.
 *
 * <p>"Ran, reply lost" is {@link FaultProxy#holdReplies()} until the command is seen in Redis, then
 * the connection cut. "Never arrived" is {@link FaultProxy#blackhole(boolean)} and the connection
 * cut before it is turned off. No timing is asserted: the waits only turn a hang into a failure.
 */
@Tag("redis")
class RedlockOutcomesTest {

    private static final AtomicInteger PREFIXES = new AtomicInteger();
    private static RedlockNodes nodes;
    private static List<RedisServer> NODES;
    private static List<RedisCommands<String, String>> REDIS;
    /** Longer than any test: a grant left behind would outlast it, so only a follow-up can end it. */
    private static final Duration LONG_LEASE = Duration.ofSeconds(60);
    /**
     * The clients' command timeout: long enough that the test sees a command run and cuts the
     * follow-up off before the caller gives up on the command's reply.
     */
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** A command timeout no held reply of the NOSCRIPT tests comes near: the held call is answered, never timed out. */
    private static final Duration NEVER_TIMES_OUT = Duration.ofSeconds(60);
    /**
     * The NOSCRIPT tests' lease: its watchdog ticks (every third of it) never come during a test,
     * so the only renewal is the one the test sends, and a grant left behind outlasts the test.
     */
    private static final Duration TEN_MINUTES = Duration.ofMinutes(10);
    private static final Pattern CALLS = Pattern.compile("\\bcalls=(\\d+)");
    /**
     * The command timeout of an acquisition kept in flight while another client takes and releases
     * the lock: it must still be waiting for its write-back's replies when they are let through.
     */
    private static final Duration LATE_TIMEOUT = Duration.ofSeconds(15);

    private final Opened opened = new Opened();
    private final Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
    private final List<FaultProxy> proxies = new ArrayList<>();
    private String prefix;
    private String name;

    @BeforeAll
    static void startNodes() {
        nodes = RedlockNodes.start(3);
        NODES = nodes.servers();
        REDIS = nodes.redis();
        loadScripts();
    }

    /**
     * Caches every script on every node, so that a held call is one EVALSHA that runs (a NOSCRIPT
     * answer would be held too); again after each test, since the NOSCRIPT tests flush a node.
     */
    private static void loadScripts() {
        for (RedisCommands<String, String> redis : REDIS) {
            for (Script script : Script.values()) {
                redis.scriptLoad(ScriptRegistry.text(script));
            }
        }
    }

    @AfterAll
    static void stopNodes() {
        nodes.close();
    }

    @BeforeEach
    void setUp(TestInfo test) {
        prefix = "rlo" + PREFIXES.incrementAndGet();
        name = test.getTestMethod().orElseThrow().getName();
        for (RedisServer node : NODES) {
            proxies.add(opened.add(FaultProxy.start(node.port())));
        }
    }

    @AfterEach
    void close() throws Exception {
        for (FaultProxy proxy : proxies) {
            proxy.blackhole(false);
            proxy.pass();
        }
        opened.closeAll();
        loadScripts();
    }

    /** A client whose every node is reached through this test's proxies. */
    private Redlock proxied(Duration lease) {
        return proxied(lease, TIMEOUT);
    }

    private Redlock proxied(Duration lease, Duration timeout) {
        return opened.add(Redlock.builder()
                .nodes(proxies.stream().map(FaultProxy::uri).toArray(String[]::new))
                .keyPrefix(prefix).lease(lease).commandTimeout(timeout).lostHoldListener(lost::add).build());
    }

    /** A client that reaches the nodes directly. */
    private Redlock direct() {
        return opened.add(Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix).lease(LONG_LEASE).commandTimeout(TIMEOUT).build());
    }

    private String lockKey() {
        return prefix + ":redlock:{" + name + "}";
    }

    /** The owner field of the lock's hash on node {@code i}, or null if it has no holder. */
    private String ownerOn(int i) {
        return REDIS.get(i).hkeys(lockKey()).stream().filter(field -> !field.startsWith(":")).findFirst().orElse(null);
    }

    /** Cuts every connection through node {@code i}'s proxy, losing what it kept, and lets traffic through again. */
    private void loseKept(int i) {
        proxies.get(i).cutAll();
        proxies.get(i).blackhole(false);
        proxies.get(i).pass();
    }

    /**
     * Ticks the client's watchdogs until no node has the lock and every follow-up it retries has
     * been taken. Not until the retries alone: a follow-up is queued when its command fails, which
     * may come a moment after the connection it was sent on is cut.
     */
    private void awaitFollowUpsFreeingEveryNode(Redlock client) {
        // What the contract promises: follow-ups are retried while the hold's lease lasts (60 s
        // here, for every client these tests pass), so that a node is freed before its key would
        // expire by itself. Waited for up to just short of that, not for the default 30 s: a retry
        // may wait for its node's connection to come back (Lettuce's reconnect back-off), and a
        // key that outlives the wait is still a failure.
        Await.until("the retried follow-ups free every node", LONG_LEASE.minusSeconds(8), () -> {
            RedisInternals.renewNow(client);
            return ownerOn(0) == null && ownerOn(1) == null && ownerOn(2) == null
                    && RedisInternals.pendingRetries(client) == 0;
        });
    }

    /* --------------- acquire --------------- */

    /**
     * An attempt that ran on two of three nodes whose replies were lost, and whose give-backs to
     * them never arrived: the caller is told the outcome is unknown, and the give-backs are retried
     * until taken, so another client gets the lock without waiting out the 60 s lease.
     */
    @Test
    void tryLock_grantsOnTwoNodesUnheardAndTheirGiveBacksLost_theRetriedGiveBacksFreeTheLock() throws Exception {
        Redlock client = proxied(LONG_LEASE);
        DistributedLock lock = client.lock(name);
        proxies.get(1).holdReplies();
        proxies.get(2).holdReplies();
        Background<Boolean> attempt = Background.start("attempt", lock::tryLock);
        Await.until("the attempt ran on nodes 1 and 2", () -> ownerOn(1) != null && ownerOn(2) != null);
        proxies.get(1).blackhole(true);
        proxies.get(2).blackhole(true);

        Throwable failure = attempt.failure();
        assertInstanceOf(SynchronizerUnavailableException.class, failure);
        assertTrue(failure.getMessage().contains("only 1 of 3 nodes answered"), failure.getMessage());
        loseKept(1);
        loseKept(2);
        assertEquals(ownerOn(1), ownerOn(2), "the unheard grants are still there, held for the failed attempt");
        awaitFollowUpsFreeingEveryNode(client);

        DistributedLock other = direct().lock(name);
        assertTrue(other.tryLock(), "the lock is free at once, not after the failed attempt's lease");
        other.unlock();
        assertTrue(lost.isEmpty(), "a failed attempt is no hold, so none is lost: " + lost);
    }

    /**
     * An attempt whose grant on one node was unheard (the reply came after the decision) still
     * acquires on the two others; the late grant is part of the hold, and unlock() ends it there
     * too.
     */
    @Test
    void lock_oneNodesGrantLate_acquiresOnTheOthersAndUnlockEndsTheLateGrantToo() {
        Redlock client = proxied(LONG_LEASE);
        DistributedLock lock = client.lock(name);
        proxies.get(2).holdReplies();
        lock.lock();
        Await.until("the grant ran on node 2", () -> ownerOn(2) != null);
        proxies.get(2).pass();
        long token = lock.fencingToken();
        assertTrue(token > 0);

        lock.unlock();
        // unlock() returns once a quorum released it: the others are freed by their releases (or
        // their retries) eventually, which is what to wait for.
        Await.until("the releases reached every node", () -> ownerOn(0) == null && ownerOn(1) == null && ownerOn(2) == null);
        DistributedLock other = direct().lock(name);
        assertTrue(other.tryLock());
        assertTrue(other.fencingToken() > token, "the next holder's token is greater");
        other.unlock();
    }

    /**
     * The history of issue 20: an acquisition's grant on the node that proposed its token (node 0,
     * whose clock runs ahead) ends while the acquisition is in flight (deleted here, as a clock that
     * jumps ahead or a force would end it). Another client takes the lock on nodes 0 and 2 with a
     * greater token and releases it; then the late replies arrive. The late acquisition must not
     * count node 0 unasked: otherwise lock() returns a hold that only node 1 has, under a token
     * smaller than the other client's, and a third client takes the lock on nodes 0 and 2 too.
     */
    @Test
    void lock_proposersGrantEndsWhileTheAttemptIsInFlight_noSmallerTokenAndNoSecondHolder() throws Exception {
        Redlock late = proxied(LONG_LEASE, LATE_TIMEOUT);
        raiseLastToken(0);
        proxies.get(0).holdReplies();
        proxies.get(1).holdReplies();
        proxies.get(2).blackhole(true);
        LateHolder holder = LateHolder.start(late.lock(name));
        Await.until("the grants ran on nodes 0 and 1", () -> ownerOn(0) != null && ownerOn(1) != null);
        REDIS.get(0).del(lockKey());

        long otherToken = holdAndRelease(direct().lock(name));
        Await.until("the other client's hold is released on nodes 0 and 2", () -> ownerOn(0) == null && ownerOn(2) == null);
        proxies.get(0).pass();
        proxies.get(1).pass();

        assertNoSmallerTokenAndNoSecondHolder(holder, otherToken, late);
    }

    /**
     * The same history through a grant whose reply comes after the decision: nodes 1 and 2 (whose
     * clock runs ahead) grant an acquisition, node 2's grant ends, and another client takes and
     * releases the lock on nodes 0 and 2, so node 0 learns the other client's token. Then node 0
     * grants the late acquisition, proposing more than that, but its reply is late: the acquisition
     * settles on the smaller token of nodes 1 and 2. Node 0 must not count under that token.
     */
    @Test
    void lock_lateGrantProposedMoreThanTheSettledToken_notCountedSoNoSmallerToken() throws Exception {
        Redlock late = proxied(LONG_LEASE, LATE_TIMEOUT);
        long ahead = raiseLastToken(2);
        proxies.get(0).blackhole(true);
        proxies.get(1).holdReplies();
        proxies.get(2).holdReplies();
        LateHolder holder = LateHolder.start(late.lock(name));
        Await.until("the grants ran on nodes 1 and 2", () -> ownerOn(1) != null && ownerOn(2) != null);
        REDIS.get(2).del(lockKey());

        long otherToken = holdAndRelease(direct().lock(name));
        Await.until("the other client's hold is released on nodes 0 and 2", () -> ownerOn(0) == null && ownerOn(2) == null);
        proxies.get(0).holdReplies();
        proxies.get(0).blackhole(false);
        Await.until("the late grant ran on node 0", () -> ownerOn(0) != null);
        String owner = ownerOn(0);
        proxies.get(1).pass();
        proxies.get(2).pass();
        // Node 1 carries the settled token (node 2's proposal) once the acquisition was decided without node 0.
        Await.until("the acquisition settled on nodes 1 and 2's largest proposal",
                () -> Long.toString(ahead + 1).equals(REDIS.get(1).hget(lockKey(), owner)));
        proxies.get(0).pass();

        assertNoSmallerTokenAndNoSecondHolder(holder, otherToken, late);
    }

    /**
     * Raises node {@code i}'s last token a minute ahead of the clock, as a node whose clock runs
     * ahead would have it; its next proposal is one more.
     *
     * @return the raised last token
     */
    private long raiseLastToken(int i) {
        long ahead = (System.currentTimeMillis() + 60_000) * 1000;
        REDIS.get(i).set(lockKey() + ":token", Long.toString(ahead), io.lettuce.core.SetArgs.Builder.px(120_000));
        return ahead;
    }

    /** Takes {@code lock}, notes its token and releases it, on the calling thread. */
    private static long holdAndRelease(DistributedLock lock) {
        lock.lock();
        try {
            return lock.fencingToken();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Once the late acquisition returns: its token is greater than that of the hold that came and
     * went meanwhile, and a quorum holds it, so a third client cannot take the lock.
     */
    private void assertNoSmallerTokenAndNoSecondHolder(LateHolder holder, long otherToken, Redlock late)
            throws Exception {
        long token = holder.token.get(30, TimeUnit.SECONDS);
        DistributedLock third = direct().lock(name);
        boolean thirdGotIt = Background.start("third client", () -> {
            boolean got = third.tryLock();
            if (got) {
                third.unlock();
            }
            return got;
        }).get();
        List<String> owners = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            owners.add(ownerOn(i));
        }
        holder.unlock.countDown();
        holder.thread.get();
        assertTrue(token > otherToken && !thirdGotIt, "the late acquisition returned token " + token
                + " after the other client's " + otherToken + "; a third client took the lock too: " + thirdGotIt
                + "; owners on the nodes: " + owners);
        loseKept(0);
        loseKept(2);
        awaitFollowUpsFreeingEveryNode(late);
    }

    /** A thread that takes a lock, reports its token, and releases it when told. */
    private record LateHolder(CompletableFuture<Long> token, CountDownLatch unlock, Background<Void> thread) {
        static LateHolder start(DistributedLock lock) {
            CompletableFuture<Long> token = new CompletableFuture<>();
            CountDownLatch unlock = new CountDownLatch(1);
            Background<Void> thread = Background.start("late holder", () -> {
                lock.lock();
                try {
                    token.complete(lock.fencingToken());
                    unlock.await();
                } finally {
                    lock.unlock();
                }
                return null;
            });
            return new LateHolder(token, unlock, thread);
        }
    }

    /**
     * The client is closed while a thread's lock() has its acquire on every node and waits for the
     * replies: the thread fails with IllegalStateException, as Redlock.close() says for waiters, not
     * with SynchronizerUnavailableException as if the nodes could not be reached.
     */
    @Test
    void lock_clientClosedWhileTheAttemptIsInFlight_failsWithIllegalState() throws Exception {
        Redlock client = proxied(LONG_LEASE);
        DistributedLock lock = client.lock(name);
        proxies.forEach(FaultProxy::holdReplies);
        Background<Void> caller = Background.start("caller", () -> {
            lock.lock();
            return null;
        });
        Await.until("the attempt ran on every node", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);

        client.close();

        Throwable failure = caller.failure();
        assertInstanceOf(IllegalStateException.class, failure, "the caller failed with " + failure);
        assertTrue(failure.getMessage().contains("closed"), "the client's own exception: " + failure);
        for (int i = 0; i < 3; i++) {
            REDIS.get(i).del(lockKey());   // a closed client gives back nothing: its grants would outlast the test
        }
    }

    /* --------------- release --------------- */

    /**
     * An unlock() whose releases to two of three nodes never arrived: the caller is told the
     * outcome is unknown, the hold is over in this JVM, and the releases are retried until the
     * nodes take them, so another client gets the lock without waiting out the lease.
     */
    @Test
    void unlock_releasesToTwoNodesLost_throwsUnavailableAndTheRetriedReleasesFreeTheLock() {
        Redlock client = proxied(LONG_LEASE);
        DistributedLock lock = client.lock(name);
        lock.lock();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        proxies.get(1).blackhole(true);
        proxies.get(2).blackhole(true);

        SynchronizerUnavailableException e = assertThrows(SynchronizerUnavailableException.class, lock::unlock);
        assertTrue(e.getMessage().contains("only 1 of 3 nodes answered"), e.getMessage());
        assertFalse(lock.isHeldByCurrentThread(), "the hold is dropped locally");
        assertEquals(0, lock.getHoldCount());
        loseKept(1);
        loseKept(2);
        assertEquals(ownerOn(1), ownerOn(2), "the releases that never arrived left the hold on nodes 1 and 2");
        awaitFollowUpsFreeingEveryNode(client);

        DistributedLock other = direct().lock(name);
        assertTrue(other.tryLock(), "the lock is free at once, not after the released hold's lease");
        other.unlock();
        assertTrue(lost.isEmpty(), "the hold was released, not lost: " + lost);
    }

    /**
     * An unlock() whose release to one node of three never arrived succeeds (a quorum released it);
     * the remaining node is released by the retry.
     */
    @Test
    void unlock_releaseToOneNodeLost_succeedsAndTheRetryReleasesThatNode() {
        Redlock client = proxied(LONG_LEASE);
        DistributedLock lock = client.lock(name);
        lock.lock();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        proxies.get(2).blackhole(true);

        lock.unlock();
        assertFalse(lock.isHeldByCurrentThread());
        loseKept(2);
        assertTrue(ownerOn(2) != null, "the release never reached node 2");
        awaitFollowUpsFreeingEveryNode(client);
        assertTrue(lost.isEmpty(), "the hold was released, not lost: " + lost);
    }

    /**
     * A holder paused past its validity resumes, and its thread calls unlock() before its
     * watchdogs run (they resume in a race with it; here they are held back): the nodes let the
     * lease go but one, which still has it (its lease began later), one answers that it has not,
     * and one does not answer. The hold may have been lost meanwhile, so unlock() throws
     * LostHoldException (GONE), as the single-server lock's does for a lost hold, and the loss is
     * reported. Before, the node that did not answer counted as having had the hold to the end,
     * and unlock() returned normally: the loss went unreported.
     */
    @Test
    void unlock_pausedPastItsValidityAndOneNodeUnanswered_throwsLostHold() throws Exception {
        Redlock client = proxied(Duration.ofSeconds(1));
        DistributedLock lock = client.lock(name);
        lock.lock();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        CountDownLatch resume = pauseWatchdogs(client);
        try {
            REDIS.get(2).pexpire(lockKey(), LONG_LEASE.toMillis());
            // Gone from nodes 0 and 1 by the servers' clock, so past its validity by the local one.
            Await.until("the lease ran out on nodes 0 and 1", () -> ownerOn(0) == null && ownerOn(1) == null);
            proxies.get(1).blackhole(true);

            LostHoldException e = assertThrows(LostHoldException.class, lock::unlock);
            assertEquals(LostHold.Cause.GONE, e.lostCause());
        } finally {
            resume.countDown();
        }
        Await.until("the loss is reported", () -> !lost.isEmpty());
        assertEquals(LostHold.Cause.GONE, lost.remove().cause());
    }

    /**
     * As above with a fixed lease: unlock() once it is over by the local clock (less the drift
     * allowance), before the watchdogs report its end, throws LostHoldException (LEASE_EXPIRED)
     * when a quorum does not confirm the release, even though one node did not answer.
     */
    @Test
    void unlock_fixedLeaseOverByTheLocalClockAndOneNodeUnanswered_throwsLostHold() throws Exception {
        Redlock client = opened.add(Redlock.builder()
                .nodes(proxies.stream().map(FaultProxy::uri).toArray(String[]::new))
                .keyPrefix(prefix).lease(LONG_LEASE).clockDriftFactor(0.45).commandTimeout(TIMEOUT).build());
        DistributedLock lock = client.lock(name);
        assertTrue(lock.tryLock(0, 4, TimeUnit.SECONDS));
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        CountDownLatch resume = pauseWatchdogs(client);
        try {
            // The nodes keep it for 4 s from their grant; by the local clock it is over after 2.2 s.
            Await.until("the fixed lease is over by the local clock", () -> !lock.isHeldByCurrentThread());
            REDIS.get(0).del(lockKey());
            REDIS.get(2).pexpire(lockKey(), LONG_LEASE.toMillis());
            proxies.get(1).blackhole(true);

            LostHoldException e = assertThrows(LostHoldException.class, lock::unlock);
            assertEquals(LostHold.Cause.LEASE_EXPIRED, e.lostCause());
        } finally {
            resume.countDown();
        }
    }

    /**
     * Holds every node's watchdog thread until the returned latch is counted down, as a paused JVM
     * holds them while its other threads resume first; returns once every one is held.
     */
    private static CountDownLatch pauseWatchdogs(Redlock client) throws InterruptedException {
        return holdWatchdogs(client.nodes);
    }

    /** Holds these nodes' watchdog threads until the returned latch is counted down; returns once they are held. */
    private static CountDownLatch holdWatchdogs(List<RedlockNode> nodes) throws InterruptedException {
        CountDownLatch resume = new CountDownLatch(1);
        CountDownLatch held = new CountDownLatch(nodes.size());
        for (RedlockNode node : nodes) {
            node.watchdog().executor().execute(() -> {
                held.countDown();
                try {
                    resume.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        held.await();
        return resume;
    }

    /* --------------- renewal --------------- */

    /**
     * Renewals that reach only one node of three: the hold is reported lost as UNRENEWABLE (it
     * cannot be known held by a quorum once their leases may have run out), unlock() throws, and
     * the next holder, once the nodes let the lease go, gets a greater token. Renewals that reach
     * two of three keep it.
     */
    @Test
    void renewal_reachesOnlyOneNode_holdReportedUnrenewableAndUnlockThrows() {
        Redlock client = proxied(Duration.ofSeconds(3));
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        proxies.get(2).blackhole(true);
        // Ticks while node 2 does not answer for longer than a lease: two of three keep renewing it.
        DistributedLock probe = direct().lock(name);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
        while (System.nanoTime() < until) {
            RedisInternals.renewNow(client);
        }
        assertTrue(lost.isEmpty(), "two of three nodes renewed it: " + lost);
        assertTrue(lock.isHeldByCurrentThread());
        assertFalse(probe.tryLock(), "a quorum still holds it for its holder");

        proxies.get(1).blackhole(true);
        Await.until("the hold is reported lost", () -> {
            RedisInternals.renewNow(client);
            return !lost.isEmpty();
        });
        LostHold report = lost.remove();
        assertEquals(LostHold.Cause.UNRENEWABLE, report.cause());
        assertEquals(token, report.fencingToken());
        LostHoldException e = assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(LostHold.Cause.UNRENEWABLE, e.lostCause());
        assertFalse(lock.isHeldByCurrentThread());

        DistributedLock next = direct().lock(name);
        assertTrue(lockWithin30s(next), "the nodes let the lost hold's lease go");
        assertTrue(next.fencingToken() > token, "the next holder's token is greater");
        next.unlock();
    }

    /**
     * A hold lost below a quorum (two nodes issued newer tokens, as a force elsewhere would) is
     * given back on the node that still has it. When that give-back's reply is lost, it is retried:
     * otherwise the node keeps the lock for the rest of the 60 s lease, and any quorum that needs
     * it (one of the other two nodes down) is stopped that long.
     */
    @Test
    void lostHold_giveBackToTheNodeStillHoldingItLost_theRetryFreesThatNode() {
        Redlock client = proxied(LONG_LEASE);
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        proxies.get(2).blackhole(true);
        for (int i = 0; i < 2; i++) {
            REDIS.get(i).del(lockKey());
            REDIS.get(i).set(lockKey() + ":token", Long.toString(token + 1_000_000));
        }

        Await.until("the hold is reported lost", () -> {
            RedisInternals.renewNow(client);
            return !lost.isEmpty();
        });
        assertEquals(LostHold.Cause.GONE, lost.remove().cause());
        loseKept(2);
        assertTrue(ownerOn(2) != null, "the give-back never reached node 2");
        awaitFollowUpsFreeingEveryNode(client);
        assertThrows(LostHoldException.class, lock::unlock);
    }

    /**
     * Node 0's watchdog thread is held up (as its tick is while it waits for a stalled node 0's
     * replies, up to the command timeout) while nodes 1 and 2 find the hold gone: their watchdogs
     * decide that it is lost, and the report must not wait for node 0's watchdog. Before, listeners
     * without an executor (and the wake-up chores) ran on node 0's watchdog thread, so the report
     * waited for it.
     */
    @Test
    void lostHold_nodeZerosWatchdogHeldUp_reportedWithoutWaitingForIt() throws Exception {
        Redlock client = proxied(Duration.ofSeconds(3));
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        CountDownLatch resume = holdWatchdogs(List.of(client.nodes.get(0)));
        try {
            for (int i = 1; i < 3; i++) {
                REDIS.get(i).del(lockKey());
                REDIS.get(i).set(lockKey() + ":token", Long.toString(token + 1_000_000));
            }
            Await.until("the hold is reported lost while node 0's watchdog is held up", () -> !lost.isEmpty());
        } finally {
            resume.countDown();
        }
        assertEquals(LostHold.Cause.GONE, lost.remove().cause());
        assertThrows(LostHoldException.class, lock::unlock);
    }

    /**
     * A node that stays unreachable while a hold lasts logs one warning for its failed renewals,
     * not one every tick, and one line once they are answered again; the hold is kept by the two
     * others meanwhile.
     */
    @Test
    void renewal_nodeUnreachableForManyTicks_oneWarningAndOneLineWhenItAnswersAgain() throws Exception {
        Redlock client = proxied(LONG_LEASE, Duration.ofMillis(300));
        DistributedLock lock = client.lock(name);
        lock.lock();
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, log), true, StandardCharsets.UTF_8));
        try {
            proxies.get(2).blackhole(true);
            for (int tick = 0; tick < 4; tick++) {
                RedisInternals.renewNow(client);
            }
            loseKept(2);
            Await.until("node 2 renews again", () -> {
                RedisInternals.renewNow(client);
                return log.toString(StandardCharsets.UTF_8).contains("watchdog renews again");
            });
        } finally {
            System.setErr(stderr);
        }
        String lines = log.toString(StandardCharsets.UTF_8);
        assertEquals(1, count(lines, " WARN ", "watchdog could not renew"), lines);
        assertEquals(1, count(lines, " INFO ", "watchdog renews again"), lines);
        assertTrue(lost.isEmpty(), "two of three nodes renewed it throughout: " + lost);
        lock.unlock();
    }

    /* --------------- NOSCRIPT --------------- */

    /**
     * A renewal that meets NOSCRIPT on a node whose script cache was flushed, with unlock()'s
     * release queued behind it on that node's connection, must not run after the release: sent
     * again then, it would find the lock free there and take the released hold back, and node 2
     * would stay held by nobody (for the whole lease, before the fix). Once the renewal's reply is
     * in (it has run, sent again or not), node 2 is free.
     */
    @Test
    void renewal_noScriptWithUnlocksReleaseQueuedBehindIt_doesNotTakeTheReleasedHoldBack() throws Exception {
        Redlock client = proxied(TEN_MINUTES, NEVER_TIMES_OUT);
        DistributedLock lock = client.lock(name);
        lock.lock();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        flushScriptsButGiveBack(2);
        proxies.get(2).holdReplies();
        Background<Void> tick = Background.start("tick", () -> {
            RedisInternals.renewNow(client);
            return null;
        });
        Await.until("node 2 got the renewal", () -> scriptCalls(2) >= 1);

        lock.unlock();
        Await.until("node 2 ran the release queued behind the renewal", () -> ownerOn(2) == null);
        proxies.get(2).pass();
        tick.get();

        assertNull(ownerOn(2), "the renewal ran after the release on node 2 and took the released hold back");
        assertTrue(lost.isEmpty(), "the hold was released, not lost: " + lost);
    }

    /**
     * An attempt that two nodes refuse gives back on the third, whose reply has not come; there the
     * acquire met NOSCRIPT (its script cache was flushed) and the give-back queued behind it ran
     * first. The acquire, sent again after its NOSCRIPT answer, grants the failed attempt the lock
     * on node 2: that late grant is given back too, so node 2 does not keep a dead grant for the
     * whole lease.
     */
    @Test
    void tryLock_acquireMeetsNoScriptWithItsGiveBackQueuedBehindIt_theLateGrantIsGivenBack() throws Exception {
        Redlock client = proxied(TEN_MINUTES, NEVER_TIMES_OUT);
        DistributedLock lock = client.lock(name);
        for (int i = 0; i < 2; i++) {
            REDIS.get(i).hset(lockKey(), "another-client:1:1", "1");
            REDIS.get(i).pexpire(lockKey(), TEN_MINUTES.toMillis());
        }
        flushScriptsButGiveBack(2);
        proxies.get(2).holdReplies();

        assertFalse(lock.tryLock(), "nodes 0 and 1 refuse it");
        Await.until("node 2 ran the give-back queued behind the acquire", () -> scriptCalls(2) >= 2);
        assertNull(ownerOn(2), "the acquire has not run on node 2 yet");
        proxies.get(2).pass();
        Await.until("node 2 ran the acquire sent again, if it was", () -> scriptCalls(2) >= 3);

        Await.until("node 2 is free", () -> ownerOn(2) == null);
        assertTrue(lost.isEmpty(), "a failed attempt is no hold, so none is lost: " + lost);
    }

    /**
     * As above, but the acquire sent again after its NOSCRIPT answer runs on node 2 and its reply
     * is lost (the connection drops): the give-back sent at the decision ran before it, and the
     * late grant is no "yes" for the attempt to give back again. It must still be given back:
     * before the fix nothing did, and node 2 stayed held by nobody for the whole lease.
     */
    @Test
    void tryLock_acquireSentAgainAfterNoScriptRunsAndItsReplyIsLost_theLateGrantIsGivenBack() throws Exception {
        Redlock client = proxied(TEN_MINUTES, LATE_TIMEOUT);
        DistributedLock lock = client.lock(name);
        for (int i = 0; i < 2; i++) {
            REDIS.get(i).hset(lockKey(), "another-client:1:1", "1");
            REDIS.get(i).pexpire(lockKey(), TEN_MINUTES.toMillis());
        }
        flushScriptsButGiveBack(2);
        FaultProxy node2 = proxies.get(2);
        int before = node2.commandsReceived();
        node2.blackhole(true);

        assertFalse(lock.tryLock(), "nodes 0 and 1 refuse it");
        Await.until("node 2's proxy keeps the acquire and the give-back behind it",
                () -> node2.commandsReceived() >= before + 2);
        // The next EVAL is the acquire sent again once its NOSCRIPT answer is in: it runs, unheard.
        node2.dropReplies(1, "EVAL");
        node2.blackhole(false);
        Await.until("the acquire sent again ran on node 2 and its reply was dropped", () -> node2.droppedReplies() >= 1);
        assertTrue(ownerOn(2) != null, "the late grant is on node 2");
        loseKept(2);

        Await.until("node 2 is free", () -> {
            RedisInternals.renewNow(client);
            return ownerOn(2) == null;
        });
        assertTrue(lost.isEmpty(), "a failed attempt is no hold, so none is lost: " + lost);
    }

    /**
     * Empties node {@code i}'s script cache, as a restart or a failover would, but caches the
     * give-back again, so that the release or give-back queued behind a script that meets NOSCRIPT
     * runs at once even where it is sent by SHA (as it was before the fix); and counts the node's
     * script calls from zero.
     */
    private void flushScriptsButGiveBack(int i) {
        REDIS.get(i).scriptFlush();
        REDIS.get(i).scriptLoad(ScriptRegistry.text(Script.LOCK_GIVE_BACK));
        REDIS.get(i).configResetstat();
    }

    /** How many script calls node {@code i} has run (EVAL and EVALSHA, NOSCRIPT answers included) since its stats were reset. */
    private static long scriptCalls(int i) {
        long calls = 0;
        for (String line : REDIS.get(i).info("commandstats").split("\\r?\\n")) {
            if (line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:")) {
                Matcher m = CALLS.matcher(line);
                if (m.find()) {
                    calls += Long.parseLong(m.group(1));
                }
            }
        }
        return calls;
    }

    private static long count(String lines, String level, String text) {
        return lines.lines().filter(line -> line.contains(level) && line.contains(text)).count();
    }

    /** Writes to two streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        Tee(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public synchronized void write(int b) throws IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
            first.write(bytes, offset, length);
            second.write(bytes, offset, length);
        }

        @Override
        public synchronized void flush() throws IOException {
            first.flush();
            second.flush();
        }
    }

    private static boolean lockWithin30s(DistributedLock lock) {
        try {
            return lock.tryLock(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
