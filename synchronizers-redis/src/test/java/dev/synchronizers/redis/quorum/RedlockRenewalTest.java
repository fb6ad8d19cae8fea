package dev.synchronizers.redis.quorum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.redis.child.RedlockHolderMain;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The renewal of a {@link Redlock}'s holds on three standalone nodes, some reached through a fault
 * proxy per node; the tests tick the watchdogs by hand ({@link RedisInternals#renewNow(Redlock)}).
 * A node that lost a hold is taken back while no newer token was issued there; a hold renewed on
 * fewer than a quorum is lost and reported, and what is left of it on the nodes is given back; an
 * abandoned hold and a fixed lease are not renewed; a node out of reach is logged once. A test
 * whose javadoc begins "Review finding" checks a contract of {@code DistributedLock} that a review
 * found the Redlock lock did not keep.
 */
@Tag("redis")
class RedlockRenewalTest extends RedlockTestBase {

    RedlockRenewalTest(TestNames names, Opened opened) {
        super(names, opened);
    }

    /* --------------- taking a hold back --------------- */

    /** A node that lost the hold (restarted empty) gets it back at the next renewal, with its token; nothing is reported lost. */
    @Test
    void renewal_nodeLostItsData_holdTakenBackThere() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        // lock() returns once a quorum confirmed; node 1 may be the one whose grant is still on its way.
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        RedisInternals.renewNow(client);   // every node renewed: each one counts
        String owner = ownerOn(REDIS.get(1), lockKey());
        REDIS.get(1).del(lockKey(), tokenKey());

        RedisInternals.renewNow(client);

        assertEquals(Long.toString(token), REDIS.get(1).hget(lockKey(), owner), "taken back with the settled token");
        assertEquals(Long.toString(token), REDIS.get(1).get(tokenKey()));
        assertTrue(REDIS.get(1).pttl(lockKey()) > 0, "with a lease");
        assertTrue(lost.isEmpty(), "nothing lost: " + lost);
        assertTrue(lock.isHeldByCurrentThread());
        lock.unlock();
    }

    /**
     * A node where another acquisition held the lock for a while (a stale grant, a release that had
     * not landed yet) counts again once a renewal takes the hold back there, so the hold then
     * survives losing another node.
     */
    @Test
    void renewal_nodeHeldByAnotherForAWhile_takenBackOnceFreeAndCountsAgain() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        RedisInternals.renewNow(client);
        // A node whose last token is not above the hold's (redlock-renew.lua's condition for a
        // take-back): a node whose grant came late may have proposed more, and is never taken back
        // once it loses the hold. The token key lives a second past its issue, so on a slow machine
        // it may be gone already, which counts as not above; the quorum that settled has such nodes.
        int taken = 0;
        while (!notAbove(REDIS.get(taken).get(tokenKey()), token)) {
            taken++;
        }
        int other = (taken + 1) % 3;
        String owner = ownerOn(REDIS.get(taken), lockKey());
        REDIS.get(taken).hdel(lockKey(), owner);
        REDIS.get(taken).hset(lockKey(), "someone:1:1", "1");

        RedisInternals.renewNow(client);   // gone there
        REDIS.get(taken).del(lockKey());   // the other acquisition ends
        RedisInternals.renewNow(client);   // taken back

        assertEquals(Long.toString(token), REDIS.get(taken).hget(lockKey(), owner));
        REDIS.get(other).del(lockKey());
        REDIS.get(other).set(tokenKey(), Long.toString(token + 1_000_000));
        RedisInternals.renewNow(client);   // the other node: gone for good; two nodes still a quorum

        assertTrue(lock.isHeldByCurrentThread());
        assertTrue(lost.isEmpty(), "nothing lost: " + lost);
        lock.unlock();
        REDIS.get(other).del(tokenKey());
    }

    /* --------------- losing a hold --------------- */

    /**
     * A node that issued a newer token after losing the hold (another acquirer tried there) is not
     * taken back: the hold stays on the other quorum; when a second node goes the same way, the hold
     * is lost, reported GONE, and unlock() throws.
     */
    @Test
    void renewal_newerTokenOnTwoNodes_lostBelowQuorumAndReported() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        RedisInternals.renewNow(client);   // every node renewed: each one counts
        REDIS.get(0).del(lockKey());
        REDIS.get(0).set(tokenKey(), Long.toString(token + 1_000_000));

        RedisInternals.renewNow(client);

        assertEquals(0, REDIS.get(0).exists(lockKey()), "not taken back past a newer token");
        assertTrue(lost.isEmpty(), "two of three still hold it: " + lost);
        assertTrue(lock.isHeldByCurrentThread());

        REDIS.get(2).del(lockKey());
        REDIS.get(2).set(tokenKey(), Long.toString(token + 1_000_000));
        RedisInternals.renewNow(client);

        assertFalse(lock.isHeldByCurrentThread(), "lost at this renewal, not when the first grant's lease runs out");

        // Listeners run on a watchdog thread, after the tick.
        dev.synchronizers.fixture.Await.until("the listener is told", () -> !lost.isEmpty());
        LostHold hold = lost.poll();
        assertTrue(hold != null, "reported lost");
        assertEquals(LostHold.Cause.GONE, hold.cause());
        assertEquals(token, hold.fencingToken());
        assertEquals("redlock", hold.kind());
        assertFalse(lock.isHeldByCurrentThread());
        dev.synchronizers.fixture.Await.until("what the last node had is given back, not left to run out",
                () -> REDIS.get(1).exists(lockKey()) == 0);
        LostHoldException thrown = assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(LostHold.Cause.GONE, thrown.lostCause());
    }

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
     * Review finding: a holder paused past its lease is never told, once resumed, that its hold
     * was lost.
     *
     * <p>The holder's JVM is paused (a long GC, a frozen VM) past its lease; meanwhile another client
     * takes the lock, with a greater token, and releases it, and its last token runs out on the
     * nodes a second later. The resumed holder must be told that its hold was lost ("nothing is
     * lost silently": topologies.md, "one whose holder was paused past its validity is reported when
     * the holder resumes"). Its watchdogs instead find the lock free on every node with no newer
     * last token, take the hold back everywhere (redlock-renew.lua's reply 2), and it goes on
     * believing it held the lock all along, though another client held it in between.
     */
    @Test
    void holderPausedPastItsLease_anotherHeldAndReleasedMeanwhile_resumedHolderIsToldItLostTheHold()
            throws Exception {
        String uris = NODES.stream().map(RedisServer::uri).collect(Collectors.joining(","));
        try (ChildJvm holder = ChildJvm.start(RedlockHolderMain.class, uris, prefix, name, "1500", "1000",
                NODES.get(0).uri(), prefix + "-store")) {
            long oldToken = Long.parseLong(holder.awaitLine("LOCKED", Duration.ofSeconds(60)).split(" ")[1]);
            holder.pause();
            long newToken;
            try {
                DistributedLock lock = plain(Duration.ofSeconds(30)).lock(name);
                lock.lock();   // once the paused holder's lease ran out on a quorum
                newToken = lock.fencingToken();
                lock.unlock();
                Await.until("the lock and its last token are gone from every node",
                        () -> REDIS.stream().allMatch(redis -> redis.exists(lockKey(), tokenKey()) == 0));
            } finally {
                holder.resume();
            }
            assertTrue(newToken > oldToken, newToken + " after " + oldToken);
            String told;
            try {
                told = holder.awaitLine("LOST", Duration.ofSeconds(20));
            } catch (IllegalStateException silent) {
                List<String> onNodes = REDIS.stream().map(redis -> String.valueOf(redis.hgetall(lockKey()))).toList();
                throw new AssertionError("the resumed holder was never told its hold was lost (its old token "
                        + oldToken + ", the next holder's " + newToken + "); the nodes now hold: " + onNodes, silent);
            }
            assertTrue(told.startsWith("LOST"), told);
        }
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
        CountDownLatch resume = holdWatchdogs(List.of(RedisInternals.nodes(client).get(0)));
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

    /* --------------- abandoned holds and fixed leases --------------- */

    /**
     * A holding thread that ends without unlocking is reported (ABANDONED) and its hold is no longer
     * renewed, also once every node's lease was registered again (each node lost the hold for a
     * while and was taken back).
     */
    @Test
    void abandoned_afterEveryNodeWasTakenBack_reportedAndNotRenewed() throws Exception {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch end = new java.util.concurrent.CountDownLatch(1);
        Background<Void> holder = Background.start("holder", () -> {
            lock.lock();
            locked.countDown();
            end.await();
            return null;   // ends holding it
        });
        locked.await();
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        RedisInternals.renewNow(client);
        String owner = ownerOn(REDIS.get(0), lockKey());
        for (RedisCommands<String, String> redis : REDIS) {
            String token = redis.hget(lockKey(), owner);
            redis.hdel(lockKey(), owner);
            redis.hset(lockKey(), "someone:1:1", "1");
            RedisInternals.renewNow(client);   // gone on this node
            redis.del(lockKey());
            redis.set(tokenKey(), token);       // no newer token was issued here
            RedisInternals.renewNow(client);   // taken back
            assertEquals(token, redis.hget(lockKey(), owner));
        }
        end.countDown();
        holder.get();

        RedisInternals.renewNow(client);

        dev.synchronizers.fixture.Await.until("the listener is told", () -> !lost.isEmpty());
        assertEquals(LostHold.Cause.ABANDONED, lost.poll().cause());
        assertEquals(0, RedisInternals.watchdogEntries(client), "no node renews it any more");
    }

    /** A fixed lease is not renewed and is held on the granting nodes only for its length. */
    @Test
    void lock_fixedLease_endsWithItsLeaseOnEveryNode() throws Exception {
        DistributedLock lock = client().lock(name);
        // Long enough that the quorum tryLock() returned on still has it when it is looked at.
        long fixedMillis = 5_000;
        assertTrue(lock.tryLock(0, fixedMillis, TimeUnit.MILLISECONDS));
        int withTheFixedLease = 0;
        for (RedisCommands<String, String> redis : REDIS) {
            // Not there (-2) is no failure on a node beyond the quorum: its grant may still be on
            // its way. Never a key without a lease, or with a longer one (a renewal).
            long pttl = redis.pttl(lockKey());
            assertTrue(pttl == -2 || pttl > 0 && pttl <= fixedMillis, "the fixed lease wherever it is held: " + pttl);
            if (pttl > 0) {
                withTheFixedLease++;
            }
        }
        assertTrue(withTheFixedLease >= 2, "a quorum holds it with the fixed lease: " + withTheFixedLease + " of 3");
        dev.synchronizers.fixture.Await.until("the lease runs out on every node",
                () -> REDIS.stream().allMatch(redis -> redis.exists(lockKey()) == 0));
        assertFalse(lock.isHeldByCurrentThread());
        LostHoldException thrown = assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(LostHold.Cause.LEASE_EXPIRED, thrown.lostCause());
    }

    /* --------------- a node out of reach --------------- */

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

    /* --------------- helpers --------------- */

    private static boolean lockWithin30s(DistributedLock lock) {
        try {
            return lock.tryLock(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Whether a node's last token ({@code null} once its key expired) is at most {@code token}. */
    private static boolean notAbove(String last, long token) {
        return last == null || Long.parseLong(last) <= token;
    }
}
