package dev.synchronizers.redis.quorum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.testkit.FaultProxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link LockHandle}s of a {@link Redlock}'s lock over three nodes, one or two of which do not
 * answer (their proxy is a blackhole) or no longer have the hold: a handle needs a quorum, not
 * every node, and a hold a quorum no longer has is lost and reported with its handle. The handle
 * contract on every kind and topology is {@code DistributedLockContractTest}'s (a Redlock's under
 * {@code -Pcluster}). No timing is asserted; the waits only turn a hang into a failure.
 */
@Tag("redis")
public class RedlockHandleTest extends RedlockTestBase {

    /** The watchdog lease of the clients here: shorter than {@link #LONG_LEASE}, which extend() sets. */
    private static final Duration LEASE = Duration.ofSeconds(10);

    RedlockHandleTest(TestNames names, Opened opened) {
        super(names, opened);
    }

    /* --------------- one node of three does not answer --------------- */

    /**
     * With one node of three not answering, acquire(), verify() and extend() succeed on the other
     * two, and release() too; the node that answers again is left with nothing of the hold.
     */
    @Test
    void handle_oneNodeOfThreeUnanswering_acquiresVerifiesExtendsAndReleasesOnTheQuorum() throws Exception {
        Redlock client = proxied(LEASE);
        DistributedLock lock = client.lock(name);
        proxies.get(2).blackhole(true);

        LockHandle handle = lock.acquire();
        assertTrue(handle.isHeld());
        assertTrue(handle.verify(), "a quorum has it");
        assertTrue(handle.extend(LONG_LEASE), "a quorum took the new lease");

        for (int i = 0; i < 2; i++) {
            long pttl = REDIS.get(i).pttl(lockKey());
            assertTrue(pttl > LEASE.toMillis(), "node " + i + " has the extended lease, not the watchdog's: " + pttl);
        }
        assertTrue(handle.verify());
        DistributedLock other = direct().lock(name);
        assertFalse(other.tryLock(), "held on a quorum");
        handle.release();
        assertFalse(handle.isHeld());
        loseKept(2);
        awaitFollowUpsFreeingEveryNode(client);
        assertTrue(other.tryLock(), "free on every node once released");
        other.unlock();
        assertTrue(lost.isEmpty(), "released, not lost: " + lost);
    }

    /* --------------- releaseAfter --------------- */

    /**
     * releaseAfter() whose answers come after the time it keeps the lock closed is over: the nodes
     * had the hold and set the kept lease, so it returns normally and nothing is reported; the lock
     * then frees itself. (A hold that needed its answers within that time was declared lost, given
     * back on every node and reported.)
     */
    @Test
    void releaseAfter_quorumAnswersAfterTheKeptTimeIsOver_letsGoWithoutALoss() throws Exception {
        Redlock client = proxied(LEASE);
        LockHandle handle = client.lock(name).acquire();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        proxies.forEach(FaultProxy::holdReplies);

        Background<Void> letGo = Background.start("releaseAfter", () -> {
            handle.releaseAfter(Duration.ofMillis(100));
            return null;
        });
        // Every node set the kept lease, and it is over there: their answers, held, come after it.
        Await.until("the kept lease ran out on every node", () -> REDIS.stream().allMatch(redis -> redis.exists(lockKey()) == 0));
        proxies.forEach(FaultProxy::pass);

        letGo.get();
        assertFalse(handle.isHeld());
        DistributedLock other = direct().lock(name);
        assertTrue(other.tryLock(30, TimeUnit.SECONDS), "free once the kept lease ran out");
        other.unlock();
        assertTrue(lost.isEmpty(), "let go, not lost: " + lost);
    }

    /* --------------- the hold gone from two nodes of three --------------- */

    /**
     * extend() when two nodes of three no longer have the hold (its lease ran out there, or they
     * restarted empty): false, the loss is reported with the handle, release() throws
     * LostHoldException, and what the last node had of it is given back.
     */
    @Test
    void extend_holdGoneFromTwoNodesOfThree_isFalseAndReportsTheLoss() throws Exception {
        Redlock client = client(LONG_LEASE);
        LockHandle handle = client.lock(name).acquire();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        REDIS.get(1).del(lockKey());
        REDIS.get(2).del(lockKey());

        assertFalse(handle.extend(LONG_LEASE));

        assertFalse(handle.isHeld());
        assertReportedLost(handle, LostHold.Cause.GONE);
        Await.until("node 0's share is given back", () -> ownerOn(0) == null);
        assertEquals(LostHold.Cause.GONE, assertThrows(LostHoldException.class, handle::release).lostCause());
        DistributedLock other = plain(LEASE).lock(name);
        assertTrue(other.tryLock());
        other.unlock();
    }

    /**
     * verify() when two nodes of three no longer have the hold: false, and the loss is reported
     * with the handle at once; release() throws LostHoldException.
     */
    @Test
    void verify_holdGoneFromTwoNodesOfThree_isFalseAndReportsTheLoss() throws Exception {
        Redlock client = client(LONG_LEASE);
        LockHandle handle = client.lock(name).acquire();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        REDIS.get(0).del(lockKey());
        REDIS.get(2).del(lockKey());

        assertFalse(handle.verify());

        assertFalse(handle.isHeld());
        assertReportedLost(handle, LostHold.Cause.GONE);
        assertThrows(LostHoldException.class, handle::close);
        Await.until("node 1's share is given back", () -> ownerOn(1) == null);
    }

    /* --------------- two nodes of three do not answer --------------- */

    /**
     * extend() when two nodes of three do not answer: nothing is known, so it throws
     * SynchronizerUnavailableException ("the store does not answer") rather than return; the hold
     * is renewed as before, which a quorum cannot take, so it is reported lost (UNRENEWABLE, with
     * the handle) when its lease could have run out, and its release() throws LostHoldException.
     */
    @Test
    void extend_twoNodesOfThreeUnanswering_throwsUnavailable_andTheLossIsReportedWithinTheLease() throws Exception {
        Redlock client = proxied(Duration.ofSeconds(2));
        LockHandle handle = client.lock(name).acquire();
        Await.until("every node holds it", () -> ownerOn(0) != null && ownerOn(1) != null && ownerOn(2) != null);
        proxies.get(1).blackhole(true);
        proxies.get(2).blackhole(true);

        SynchronizerUnavailableException thrown = assertThrows(SynchronizerUnavailableException.class,
                () -> handle.extend(LONG_LEASE));

        assertTrue(thrown.getMessage().contains("1 of 3"), thrown.getMessage());
        // What the contract promises: a hold no quorum renews is reported lost once its lease could
        // have run out (2 s here); waited for up to a generous bound.
        assertReportedLost(handle, LostHold.Cause.UNRENEWABLE);
        assertFalse(handle.isHeld());
        assertThrows(LostHoldException.class, handle::release);
        loseKept(1);
        loseKept(2);
        awaitFollowUpsFreeingEveryNode(client);
    }

    private void assertReportedLost(LockHandle handle, LostHold.Cause cause) {
        Await.until("the loss is reported", () -> !lost.isEmpty());
        LostHold reported = lost.remove();
        assertSame(handle, reported.handle(), "the report names the handle");
        assertEquals(cause, reported.cause());
        assertEquals(handle.fencingToken(), reported.fencingToken());
        assertEquals(-1, reported.threadId(), "no thread owns a handle's hold");
        assertTrue(lost.isEmpty(), "reported once: " + lost);
    }

    /* --------------- lost() and callLocked --------------- */

    /**
     * A Redlock handle's lost(): forced on every node by another client, and found gone by
     * verify(), it completes with the report the listener got; a handle released normally has it
     * cancelled; callLocked on a Redlock lock returns the body's value and releases.
     */
    @Test
    void lost_forcedEverywhere_completesWithTheReport_releasedCancelled_callLockedReleases() throws Exception {
        DistributedLock lock = client(LEASE).lock(name);
        LockHandle handle = lock.acquire();
        java.util.concurrent.CompletionStage<LostHold> stage = handle.lost();
        assertTrue(direct().lock(name).forceUnlock());

        assertFalse(handle.verify());

        LostHold report = stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertEquals(LostHold.Cause.GONE, report.cause());
        assertSame(handle, report.handle());
        Await.until("the listener is told", () -> report.equals(lost.peek()));
        lost.clear();

        LockHandle released = lock.acquire();
        released.release();
        assertThrows(java.util.concurrent.CancellationException.class,
                () -> released.lost().toCompletableFuture().get(30, TimeUnit.SECONDS));

        assertEquals("ran", lock.callLocked(Duration.ZERO, hold -> hold.isHeld() ? "ran" : "not held"));
        DistributedLock other = direct().lock(name);
        assertTrue(other.tryLock(), "released by callLocked");
        other.unlock();
        assertTrue(lost.isEmpty(), "nothing else lost: " + lost);
    }

    /** A Redlock closed while a handle holds: its lost() completes ABANDONED, the listener not told. */
    @Test
    void lost_heldWhenTheClientCloses_completesWithAbandoned() throws Exception {
        Redlock client = client(LEASE);
        LockHandle handle = client.lock(name).acquire();
        java.util.concurrent.CompletionStage<LostHold> stage = handle.lost();

        client.close();

        LostHold report = stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertEquals(LostHold.Cause.ABANDONED, report.cause());
        assertSame(handle, report.handle());
        assertFalse(handle.isHeld());
        assertTrue(lost.isEmpty(), "the listener is not told: " + lost);
    }
}
