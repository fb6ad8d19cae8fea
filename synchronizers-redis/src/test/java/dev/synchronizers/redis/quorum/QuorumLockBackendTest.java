package dev.synchronizers.redis.quorum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.testkit.FaultProxy;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A {@link Redlock}'s lock over three standalone nodes, inspected and tampered with node by node,
 * and reached through a fault proxy per node where a reply must be lost or late: acquisition, the
 * fencing token a quorum settles, release, force, snapshots and queries, close, and bad input.
 * Whatever a lost or late reply leaves on a node is settled by a follow-up retried while its lease
 * lasts, so nothing is left held for a lease; no timing is asserted, the waits only turn a hang
 * into a failure. Renewal is in {@code RedlockRenewalTest}; killed, paused and restarted nodes and
 * clients in {@code fault.RedlockFaultTest}; the {@code DistributedLock} contract runs on a
 * Redlock in {@code -Pcluster}. A test whose javadoc begins "Review finding" checks a contract of
 * {@code DistributedLock} that a review found the Redlock lock did not keep.
 */
@Tag("redis")
class QuorumLockBackendTest extends RedlockTestBase {

    QuorumLockBackendTest(TestNames names, Opened opened) {
        super(names, opened);
    }

    /* --------------- acquire --------------- */

    /**
     * When lock() returns, a quorum of nodes hold it, record the token it returned and know it as
     * their last token; the remaining node's reply may still be on its way, and it holds it too soon.
     */
    /**
     * newCondition(): "UnsupportedOperationException if this Lock implementation does not support
     * conditions": a Redlock lock has none, named or not, and says why. (Here, not in the contract
     * suite, whose topology the cluster profile overrides.)
     */
    @Test
    void newCondition_throwsUnsupported_sayingWhy() {
        DistributedLock lock = client().lock(name);
        UnsupportedOperationException thrown = assertThrows(UnsupportedOperationException.class, lock::newCondition);
        assertTrue(thrown.getMessage().contains("Redlock"), thrown.getMessage());
        assertThrows(UnsupportedOperationException.class, () -> lock.newCondition("named"));
    }

    @Test
    void lock_everyNodeUp_aQuorumKnowsTheTokenAndEveryNodeHoldsIt() {
        DistributedLock lock = client().lock(name);
        lock.lock();
        long token = lock.fencingToken();
        int carrying = 0;
        int knowing = 0;
        for (RedisCommands<String, String> redis : REDIS) {
            String owner = ownerOn(redis, lockKey());
            if (owner != null && Long.parseLong(redis.hget(lockKey(), owner)) == token) {
                carrying++;
            }
            if (Long.parseLong(String.valueOf(redis.get(tokenKey())).replace("null", "0")) >= token) {
                knowing++;
            }
        }
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        assertTrue(carrying >= 2, "a quorum records the settled token: " + carrying);
        assertTrue(knowing >= 2, "a quorum knows it as their last token: " + knowing);
        lock.unlock();
        // unlock() returns once a quorum released it; the last node's release may still be on its way.
        dev.synchronizers.fixture.Await.until("released on every node",
                () -> REDIS.stream().allMatch(redis -> redis.exists(lockKey()) == 0));
    }

    /** A waiter of another client sleeps on its wake-up and gets the lock when it is released. */
    @Test
    void lock_heldByOtherClient_waiterWokenByTheRelease() throws Exception {
        DistributedLock holder = client().lock(name);
        DistributedLock waiting = client().lock(name);
        holder.lock();
        Background<Long> waiter = Background.start("waiter", () -> {
            waiting.lock();
            try {
                return waiting.fencingToken();
            } finally {
                waiting.unlock();
            }
        });
        dev.synchronizers.fixture.Await.until("the waiter sleeps on its wake-up",
                () -> RedisState.sleepsOnWakeup(waiter.thread()));
        long token = holder.fencingToken();
        holder.unlock();
        assertTrue(waiter.get() > token);
    }

    /**
     * Review finding: waiting records are kept per thread, not per client.
     *
     * <p>Waiting threads of one client record, in the holder's hash on each node, how many threads of
     * that client wait: one record per client (":w:<client-uuid>", overwritten by each try), as
     * lock-acquire-waiting.lua and getQueueLength() document. A Redlock's owner strings carry an
     * attempt number, so the record is made per thread: during one long hold, every new thread
     * that ever waited adds a field (the hash grows without bound with virtual threads or short-
     * lived workers), and other clients' getQueueLength() counts every thread that waited once.
     */
    @Test
    void waitingRecords_tenThreadsOfOneClientTriedOneAfterAnother_oneRecordAndQueueLengthOfOne() throws Exception {
        Redlock holderClient = plain(Duration.ofSeconds(30));
        DistributedLock held = holderClient.lock(name);
        held.lock();
        DistributedLock waiting = plain(Duration.ofSeconds(30)).lock(name);
        for (int i = 0; i < 10; i++) {
            // Each gives up after its subscribed try, which records it as a waiter.
            assertFalse(Background.start("waiter-" + i, () -> waiting.tryLock(10, TimeUnit.MILLISECONDS)).get());
        }
        for (RedisCommands<String, String> redis : REDIS) {
            List<String> records = redis.hkeys(lockKey()).stream().filter(field -> field.startsWith(":w:")).toList();
            assertTrue(records.size() <= 1, "one waiting record per client, not per thread: " + records);
        }
        assertTrue(held.getQueueLength() <= 1,
                "one client's threads waited one after another: queue length " + held.getQueueLength());
        held.unlock();
    }

    /**
     * Review finding: a tiny fixed lease is never acquired.
     *
     * <p>A fixed lease of a few milliseconds is accepted (at least 1 ms), but it is no longer than the
     * drift allowance: the validity left is zero or less, so every attempt on a free lock is given
     * back. tryLock() on a free lock must not answer false; either it takes the lock or it refuses
     * the lease as bad input. (lock(3, MILLISECONDS) loops for ever, hammering the nodes.)
     */
    @Test
    void tryLock_fixedLeaseNoLongerThanTheDriftAllowance_freeLockIsNotRefused() throws Exception {
        DistributedLock lock = plain(Duration.ofSeconds(30)).lock(name);
        boolean acquired;
        try {
            acquired = lock.tryLock(0, 3, TimeUnit.MILLISECONDS);
        } catch (IllegalArgumentException rejected) {
            assertTrue(rejected.getMessage().contains("leaseTime"), rejected.getMessage());
            return;
        }
        assertTrue(acquired, "tryLock(0, 3 ms) on a free lock that nobody else asks for returned false");
    }

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

    /* --------------- acquire: NOSCRIPT --------------- */

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

    /* --------------- settle: the fencing token --------------- */

    /** Tokens of successive holds by two clients increase, and a quorum has each hold under one owner string. */
    @Test
    void lock_alternatingClients_tokensIncreaseAndEachHoldHasOneOwnerEverywhere() {
        DistributedLock mine = client().lock(name);
        DistributedLock theirs = client().lock(name);
        long last = 0;
        for (int i = 0; i < 30; i++) {
            DistributedLock next = i % 2 == 0 ? mine : theirs;
            next.lock();
            long token = next.fencingToken();
            assertTrue(token > last, "token " + token + " after " + last);
            List<String> owners = new ArrayList<>();
            for (RedisCommands<String, String> redis : REDIS) {
                String owner = ownerOn(redis, lockKey());
                if (owner != null) {
                    owners.add(owner);
                }
            }
            // A node whose grant was still on its way may have none, and one whose release of the
            // last hold was still on its way may have that one; a quorum has this hold's owner.
            long withThisHold = owners.stream().filter(owner -> owners.stream().filter(owner::equals).count() >= 2)
                    .count();
            assertTrue(withThisHold >= 2, "a quorum holds it under one owner string: " + owners);
            last = token;
            next.unlock();
        }
    }

    /**
     * One node's clock runs a minute ahead (its last token is raised so): a hold whose quorum
     * includes it gets a token from that clock; the next hold, on a quorum without it, still gets a
     * greater one, because the first acquirer wrote its token back to the other nodes of its quorum.
     */
    @Test
    void fencingToken_nextQuorumWithoutTheFastNode_stillGreater() {
        long ahead = (System.currentTimeMillis() + 60_000) * 1000;
        REDIS.get(0).set(tokenKey(), Long.toString(ahead), io.lettuce.core.SetArgs.Builder.px(120_000));
        // Node 1 refuses the first acquirer (someone else's stale grant there): its quorum is {0, 2}.
        refuseOn(1);
        DistributedLock first = client().lock(name);
        assertTrue(first.tryLock());
        long fast = first.fencingToken();
        assertTrue(fast > ahead, "the fast node's proposal wins: " + fast);
        first.unlock();
        dev.synchronizers.fixture.Await.until("released on nodes 0 and 2",
                () -> ownerOn(REDIS.get(0), lockKey()) == null && ownerOn(REDIS.get(2), lockKey()) == null);
        REDIS.get(1).del(lockKey());
        // Node 0 refuses the next acquirer: its quorum is {1, 2}, and only node 2 saw the first token.
        refuseOn(0);
        DistributedLock next = client().lock(name);
        assertTrue(next.tryLock());
        assertTrue(next.fencingToken() > fast, next.fencingToken() + " after " + fast);
        next.unlock();
        REDIS.get(0).del(lockKey(), tokenKey());
    }

    /** Gives node {@code index} a foreign hold of the lock, so that it refuses every acquirer. */
    private void refuseOn(int index) {
        REDIS.get(index).hset(lockKey(), "someone:1:1", "1");
        REDIS.get(index).pexpire(lockKey(), 60_000);
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

    /* --------------- release --------------- */

    /**
     * A release a node cannot take (its proxy swallows everything) is queued for retries by that
     * node's follow-ups and counted once as a retry, as docs/observability.md says of
     * {@code synchronizers.followups{action=retry}}; the backend used to count it a second time.
     */
    @Test
    void release_oneNodeUnreachable_queuedForRetriesAndCountedOnce() throws Exception {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        Redlock client = opened.add(Redlock.builder()
                .nodes(proxies.stream().map(FaultProxy::uri).toArray(String[]::new))
                .keyPrefix(prefix).lease(LONG_LEASE).commandTimeout(TIMEOUT).meterRegistry(registry).build());
        DistributedLock lock = client.lock(name);
        lock.lock();
        proxies.get(2).blackhole(true);

        lock.unlock();   // nodes 0 and 1 make the quorum; node 2's release times out

        Await.until("node 2's release is queued for retries",
                () -> registry.get("synchronizers.followups.pending").gauge().value() == 1.0);
        assertEquals(1.0, registry.get("synchronizers.followups").tag("action", "retry").counter().count());
        proxies.get(2).blackhole(false);
        Await.until("the retry frees node 2", () -> ownerOn(2) == null);
    }

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

    /* --------------- force --------------- */

    /** forceUnlock() raises every node's token, so the holder's watchdog cannot take the hold back: it learns it is gone. */
    @Test
    void forceUnlock_holderInOtherClient_notTakenBackAndReportedGone() {
        Redlock holderClient = client();
        DistributedLock held = holderClient.lock(name);
        held.lock();
        assertTrue(client().lock(name).forceUnlock());

        RedisInternals.renewNow(holderClient);

        assertFalse(held.isHeldByCurrentThread(), "lost at this renewal, not when the first grant's lease runs out");
        for (RedisCommands<String, String> redis : REDIS) {
            assertEquals(0, redis.exists(lockKey()), "not taken back");
        }
        // Listeners run on a watchdog thread, after the tick.
        dev.synchronizers.fixture.Await.until("the listener is told", () -> !lost.isEmpty());
        LostHold hold = lost.poll();
        assertTrue(hold != null, "reported lost");
        assertEquals(LostHold.Cause.GONE, hold.cause());
        assertThrows(LostHoldException.class, held::unlock);
    }

    /**
     * Review finding: forceUnlock() answers true for a key on a minority of nodes.
     *
     * <p>forceUnlock() returns true only if the lock was held (DistributedLock's javadoc); a Redlock's
     * lock is held while a quorum of nodes hold it, and isLocked() says so. A key on one node of
     * three (an attempt under way, or a grant whose give-back has not landed) is not a hold.
     */
    @Test
    void forceUnlock_keyOnOneNodeOnly_returnsFalseAsIsLockedSaysNotHeld() {
        DistributedLock lock = plain(Duration.ofSeconds(30)).lock(name);
        REDIS.get(2).hset(lockKey(), "someone:1:1", "5");
        REDIS.get(2).pexpire(lockKey(), 10_000);
        assertFalse(lock.isLocked());
        boolean forced = lock.forceUnlock();
        REDIS.forEach(redis -> redis.del(lockKey()));
        assertFalse(forced, "forceUnlock() reports a lock as held that isLocked() just called free");
    }

    /* --------------- snapshot and queries --------------- */

    /** A key on one node of three (an attempt under way) is not a hold. */
    @Test
    void isLocked_keyOnOneNodeOnly_isFalse() {
        DistributedLock lock = client().lock(name);
        REDIS.get(2).hset(lockKey(), "someone:1:1", "5");
        REDIS.get(2).pexpire(lockKey(), 10_000);
        assertFalse(lock.isLocked());
        assertTrue(lock.snapshot().holders().isEmpty());
        REDIS.get(2).del(lockKey());
    }

    /** A snapshot names the holder's client, thread and token, with its lease, renewed by this client. */
    @Test
    void snapshot_held_namesTheHolder() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        lock.lock();
        // A node whose grant was still on its way when lock() returned records its own proposal
        // until the settled token reaches it; the snapshot's token is the largest a node records.
        dev.synchronizers.fixture.Await.until("every node records the settled token",
                () -> REDIS.stream().allMatch(redis -> recordsToken(redis, lock.fencingToken())));
        LockSnapshot snapshot = lock.snapshot();
        assertEquals(1, snapshot.holders().size());
        LockSnapshot.Holder holder = snapshot.holders().get(0);
        assertEquals(client.clientId(), holder.clientId());
        assertEquals(Machinery.currentThreadId(), holder.threadId());
        assertEquals(lock.fencingToken(), holder.fencingToken());
        assertTrue(holder.leaseRemainingMillis() > 0 && holder.leaseRemainingMillis() <= 30_000);
        assertEquals(LockSnapshot.Renewal.RENEWED, holder.renewal());
        assertEquals(0, snapshot.queueLength());
        lock.unlock();
        assertFalse(lock.snapshot().isLocked());
    }

    /** Whether the node's holder, if any, records {@code token}. */
    private boolean recordsToken(RedisCommands<String, String> redis, long token) {
        String owner = ownerOn(redis, lockKey());
        return owner != null && Long.toString(token).equals(redis.hget(lockKey(), owner));
    }

    /**
     * Review finding: snapshot() waits for a paused node.
     *
     * <p>A snapshot (and getQueueLength(), hasQueuedThreads()) needs a quorum of the nodes: with one
     * node of three paused, the two others answer at once and the call should not wait out the
     * command timeout for the third (the acquire path decides on a quorum for the same reason).
     */
    @Test
    void snapshot_oneNodePaused_answersFromTheQuorum() throws Exception {
        Redlock client = Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(120))
                .build();
        opened.add(client);
        DistributedLock lock = client.lock(name);
        lock.lock();
        NODES.get(2).pause();
        try {
            Background<Integer> holders = Background.start("snapshot", () -> lock.snapshot().holders().size());
            assertEquals(1, holders.get(), "the holder, seen on the quorum");
        } finally {
            NODES.get(2).resume();
        }
        lock.unlock();
    }

    /* --------------- close --------------- */

    /** A closed client refuses new locks and calls with IllegalStateException. */
    @Test
    void close_thenCalls_throwIllegalState() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        client.close();
        assertThrows(IllegalStateException.class, () -> client.lock(name));
        assertThrows(IllegalStateException.class, lock::tryLock);
        assertNull(ownerOn(REDIS.get(0), lockKey()));
    }

    /**
     * Review finding: close() leaves a waiter asleep for the holder's lease.
     *
     * <p>Closing the client wakes its waiters, which fail with IllegalStateException (as
     * RedisSynchronizers.close() documents), rather than trying once more and sleeping for the
     * holder's whole lease, or failing as if the nodes were unreachable.
     */
    @Test
    void close_whileAThreadWaitsForAnotherClientsHold_waiterFailsWithIllegalState() throws Exception {
        DistributedLock held = plain(Duration.ofSeconds(60)).lock(name);
        held.lock();
        Redlock waitingClient = Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix)
                .lease(Duration.ofSeconds(60))
                .build();
        DistributedLock waiting = waitingClient.lock(name);
        Background<Void> waiter = Background.start("waiter", () -> {
            waiting.lock();
            return null;
        });
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));

        waitingClient.close();

        Throwable failure = waiter.failure();
        held.unlock();
        assertInstanceOf(IllegalStateException.class, failure, "the waiter failed with " + failure);
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

    /* --------------- bad input --------------- */

    /** Bad arguments throw, naming the argument, and nothing is connected or written. */
    @Test
    void builder_badArguments_throwNamingThem() {
        String a = NODES.get(0).uri();
        String b = NODES.get(1).uri();
        String c = NODES.get(2).uri();
        assertMessage("nodes", assertThrows(IllegalArgumentException.class, () -> Redlock.create(a, b)));
        assertMessage("twice", assertThrows(IllegalArgumentException.class, () -> Redlock.create(a, b, a)));
        assertMessage("nodes", assertThrows(IllegalArgumentException.class, () -> Redlock.create(a, b, "not a uri")));
        assertMessage("nodes", assertThrows(IllegalArgumentException.class,
                () -> Redlock.create(a, b, "redis-sentinel://127.0.0.1:26379#mymaster")));
        assertMessage("nodes", assertThrows(NullPointerException.class, () -> Redlock.create(a, b, null)));
        assertMessage("clockDriftFactor", assertThrows(IllegalArgumentException.class,
                () -> Redlock.builder().clockDriftFactor(0.5)));
        assertMessage("clockDriftFactor", assertThrows(IllegalArgumentException.class,
                () -> Redlock.builder().clockDriftFactor(Double.NaN)));
        assertMessage("lease", assertThrows(IllegalArgumentException.class,
                () -> Redlock.builder().lease(Duration.ofMillis(29))));
        assertMessage("commandTimeout", assertThrows(IllegalArgumentException.class,
                () -> Redlock.builder().commandTimeout(Duration.ZERO)));
        assertMessage("nodes", assertThrows(IllegalStateException.class, () -> Redlock.builder().build()));
        assertMessage("drift", assertThrows(IllegalStateException.class,
                () -> Redlock.builder().nodes(a, b, c).lease(Duration.ofMillis(40)).clockDriftFactor(0.49).build()));
        Redlock client = client();
        assertMessage("name", assertThrows(IllegalArgumentException.class, () -> client.lock("")));
        DistributedLock lock = client.lock(name);
        assertMessage("leaseTime", assertThrows(IllegalArgumentException.class, () -> lock.lock(0, TimeUnit.SECONDS)));
        for (RedisCommands<String, String> redis : REDIS) {
            List<String> keys = new ArrayList<>();
            redis.scan(keys::add, ScanArgs.Builder.matches(prefix + ":*"));
            assertTrue(keys.isEmpty(), "nothing written: " + keys);
        }
    }

    private static void assertMessage(String expected, Throwable thrown) {
        assertTrue(String.valueOf(thrown.getMessage()).contains(expected),
                "message names " + expected + ": " + thrown.getMessage());
    }
}
