package dev.synchronizers.redis.quorum;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * {@link QuorumLease} over fake nodes: each node's "watchdog" is a list of the leases it was asked
 * to keep, whose {@code onLost} the test calls as a watchdog would report a lease that ended. No
 * Redis and no sleeps: validity is set by the start times the leases report, the lease being a
 * minute long.
 */
class QuorumLeaseTest {

    private static final long LEASE_MILLIS = 60_000;

    /** One lease a fake node keeps. */
    private static final class NodeLease implements HoldLease {
        final int node;
        final long fixedMillis;
        final long startNanos;
        final Consumer<LostHold.Cause> onLost;
        final BooleanSupplier takeBack;
        volatile long renewedNanos;
        volatile LostHold.Cause ended;
        volatile boolean stopped;

        NodeLease(int node, long fixedMillis, long startNanos, Consumer<LostHold.Cause> onLost,
                BooleanSupplier takeBack) {
            this.node = node;
            this.fixedMillis = fixedMillis;
            this.startNanos = startNanos;
            this.renewedNanos = startNanos;
            this.onLost = onLost;
            this.takeBack = takeBack;
        }

        /** As a node's watchdog reports a lease that ended other than by unregistering it. */
        void lose(LostHold.Cause cause) {
            ended = cause;
            onLost.accept(cause);
        }

        @Override
        public LostHold.Cause endedBecause() {
            return ended;
        }

        @Override
        public boolean fixed() {
            return fixedMillis > 0;
        }

        @Override
        public long fixedMillis() {
            return fixedMillis;
        }

        @Override
        public long renewedNanos() {
            return renewedNanos;
        }
    }

    /** A release sent to a node. */
    private record Release(int node, boolean giveBack) {
    }

    /** Three nodes, a quorum of two. */
    private static final class FakeNodes implements QuorumLease.Nodes {
        final List<NodeLease> kept = new ArrayList<>();
        final List<Release> releases = new ArrayList<>();

        @Override
        public int size() {
            return 3;
        }

        @Override
        public int quorum() {
            return 2;
        }

        @Override
        public long leaseMillis() {
            return LEASE_MILLIS;
        }

        @Override
        public long driftMillis(long millis) {
            return (long) Math.ceil(millis * 0.01) + 2;
        }

        @Override
        public synchronized HoldLease keep(int index, long fixedMillis, long startNanos, Thread owner,
                Consumer<LostHold.Cause> onLost, BooleanSupplier takeBack) {
            NodeLease lease = new NodeLease(index, fixedMillis, startNanos, onLost, takeBack);
            kept.add(lease);
            return lease;
        }

        @Override
        public void stopKeeping(int index, HoldLease lease) {
            ((NodeLease) lease).stopped = true;
        }

        @Override
        public synchronized CompletionStage<Long> release(int index, long deadlineNanos, boolean giveBack,
                BooleanSupplier mayHaveHeld) {
            releases.add(new Release(index, giveBack));
            return CompletableFuture.completedFuture(1L);
        }

        /** The lease node {@code index} keeps now: the last one it was asked to keep. */
        synchronized NodeLease current(int index) {
            NodeLease last = null;
            for (NodeLease lease : kept) {
                if (lease.node == index) {
                    last = lease;
                }
            }
            return last;
        }
    }

    private final FakeNodes nodes = new FakeNodes();
    private final List<LostHold.Cause> lost = new ArrayList<>();

    private QuorumLease started(long fixedMillis, boolean... granted) {
        QuorumLease lease = new QuorumLease(nodes, fixedMillis, System.nanoTime(), granted, Thread.currentThread());
        lease.start(lost::add);
        return lease;
    }

    @Test
    void start_renewedLease_keptOnEveryNode_theOnesThatDidNotGrantStartingExpired() {
        long before = System.nanoTime();
        started(0, true, true, false);

        assertEquals(3, nodes.kept.size());
        assertTrue(nodes.current(0).startNanos >= before, "a node that granted counts from the attempt");
        assertTrue(System.nanoTime() - nodes.current(2).startNanos > TimeUnit.MILLISECONDS.toNanos(LEASE_MILLIS),
                "a node that did not grant starts expired, to count once a renewal takes it");
        assertEquals(0, nodes.current(0).fixedMillis);
    }

    @Test
    void start_fixedLease_keptOnlyWhereGranted_endingTheDriftAllowanceEarlier() {
        started(10_000, true, false, true);

        assertEquals(2, nodes.kept.size());
        assertNull(nodes.current(1));
        assertEquals(10_000 - (100 + 2), nodes.current(0).fixedMillis);
    }

    @Test
    void start_twice_throws() {
        QuorumLease lease = started(0, true, true, true);

        assertThrows(IllegalStateException.class, () -> lease.start(lost::add));
    }

    @Test
    void constructor_grantsForAnotherNumberOfNodes_throws() {
        assertThrows(IllegalArgumentException.class,
                () -> new QuorumLease(nodes, 0, System.nanoTime(), new boolean[] {true, true}, Thread.currentThread()));
    }

    @Test
    void nodeLost_oneOfThree_staysHeld_andTheNodeIsKeptAgainStartingExpired() {
        QuorumLease lease = started(0, true, true, true);

        nodes.current(0).lose(LostHold.Cause.GONE);

        assertNull(lease.endedBecause());
        assertTrue(lost.isEmpty());
        assertEquals(4, nodes.kept.size(), "node 0 is kept again, to take the hold back there");
        assertTrue(System.nanoTime() - nodes.current(0).startNanos > TimeUnit.MILLISECONDS.toNanos(LEASE_MILLIS));
        assertTrue(nodes.releases.isEmpty(), "nothing is given back while the hold stands");
    }

    @Test
    void nodeLost_twoOfThree_losesTheHoldOnce_stopsEveryLease_andGivesBackEverywhere() {
        QuorumLease lease = started(0, true, true, true);

        nodes.current(0).lose(LostHold.Cause.GONE);
        nodes.current(1).lose(LostHold.Cause.UNRENEWABLE);
        nodes.current(2).lose(LostHold.Cause.GONE);   // after the hold ended: ignored

        assertEquals(List.of(LostHold.Cause.UNRENEWABLE), lost);
        assertEquals(LostHold.Cause.UNRENEWABLE, lease.endedBecause());
        assertTrue(nodes.current(2).stopped);
        assertEquals(List.of(new Release(0, false), new Release(1, false), new Release(2, false)), nodes.releases);
    }

    @Test
    void nodeLost_abandoned_losesTheHoldAtOnce_withoutGivingBack() {
        QuorumLease lease = started(0, true, true, true);

        nodes.current(1).lose(LostHold.Cause.ABANDONED);

        assertEquals(List.of(LostHold.Cause.ABANDONED), lost);
        assertEquals(LostHold.Cause.ABANDONED, lease.endedBecause());
        assertTrue(nodes.releases.isEmpty(), "an abandoned hold's leases simply run out");
    }

    @Test
    void nodeLost_aSecondNodeWhileTheFirstIsNotTakenBack_losesTheHold() {
        QuorumLease lease = started(0, true, true, true);
        nodes.current(1).lose(LostHold.Cause.GONE);   // kept again, starting expired: not valid there

        nodes.current(0).lose(LostHold.Cause.GONE);   // node 2 alone is no quorum

        assertEquals(List.of(LostHold.Cause.GONE), lost);
        assertEquals(LostHold.Cause.GONE, lease.endedBecause());
    }

    @Test
    void nodeLost_aSecondNodeAfterTheFirstWasTakenBack_staysHeld() {
        QuorumLease lease = started(0, true, true, true);
        nodes.current(1).lose(LostHold.Cause.GONE);
        nodes.current(1).renewedNanos = System.nanoTime();   // a renewal took it back there

        nodes.current(0).lose(LostHold.Cause.GONE);

        assertNull(lease.endedBecause());
        assertTrue(lost.isEmpty());
    }

    @Test
    void mayTakeBack_whileTheOthersHoldIt_counts() {
        started(0, true, true, true);
        nodes.current(0).lose(LostHold.Cause.GONE);

        assertTrue(nodes.current(0).takeBack.getAsBoolean());
    }

    @Test
    void mayTakeBack_afterRelease_isRefused_andGivenBackOnThatNode() {
        QuorumLease lease = started(0, true, true, true);
        NodeLease first = nodes.current(2);

        assertTrue(lease.release());

        assertFalse(first.takeBack.getAsBoolean());
        assertEquals(List.of(new Release(2, true)), nodes.releases);
    }

    @Test
    void release_notesWhichNodesHeldIt_andStopsEveryLease() {
        QuorumLease lease = started(0, true, true, false);

        assertTrue(lease.release());

        assertArrayEquals(new boolean[] {true, true, false}, lease.validAtRelease());
        assertTrue(nodes.current(0).stopped && nodes.current(1).stopped && nodes.current(2).stopped);
        assertNull(lease.endedBecause(), "released is not lost");
        assertFalse(lease.release(), "ended once");
    }

    @Test
    void release_afterTheHoldWasLost_returnsFalse_andKeepsTheCause() {
        QuorumLease lease = started(0, true, true, true);
        nodes.current(0).lose(LostHold.Cause.GONE);
        nodes.current(1).lose(LostHold.Cause.GONE);

        assertFalse(lease.release());

        assertEquals(LostHold.Cause.GONE, lease.endedBecause());
        assertArrayEquals(new boolean[3], lease.validAtRelease());
    }

    @Test
    void lateGrant_beforeStart_countsOnceStarted() {
        QuorumLease lease = new QuorumLease(nodes, 0, System.nanoTime(), new boolean[] {true, false, false}, Thread.currentThread());
        lease.lateGrant(1);
        lease.start(lost::add);

        // Node 2 lost: nodes 0 and 1 (its grant late, but counted) still make a quorum.
        nodes.current(2).lose(LostHold.Cause.GONE);

        assertNull(lease.endedBecause());
        assertTrue(lost.isEmpty());
    }

    @Test
    void lateGrant_afterTheNodesFirstLeaseEnded_doesNotCount() {
        QuorumLease lease = started(0, true, true, false);
        nodes.current(2).lose(LostHold.Cause.GONE);   // kept again, starting expired
        lease.lateGrant(2);

        nodes.current(1).lose(LostHold.Cause.GONE);   // node 0 alone is no quorum

        assertEquals(List.of(LostHold.Cause.GONE), lost);
    }

    @Test
    void endedBecause_fixedLeasePastItsValidityByTheLocalClock_isLeaseExpired() {
        long sent = System.nanoTime() - TimeUnit.SECONDS.toNanos(2);
        QuorumLease lease = new QuorumLease(nodes, 1_000, sent, new boolean[] {true, true, true}, Thread.currentThread());
        lease.start(lost::add);

        assertTrue(lease.expiredByClock());
        assertEquals(LostHold.Cause.LEASE_EXPIRED, lease.endedBecause());
        assertTrue(lost.isEmpty(), "a fixed lease that ran out is not reported");
    }

    @Test
    void declareLost_endsOnce_andTellsTheLockOnce() {
        QuorumLease lease = started(0, true, true, true);

        lease.declareLost(LostHold.Cause.GONE);
        lease.declareLost(LostHold.Cause.GONE);
        nodes.current(0).lose(LostHold.Cause.GONE);

        assertEquals(List.of(LostHold.Cause.GONE), lost);
        assertTrue(nodes.current(1).stopped);
        assertTrue(nodes.releases.isEmpty(), "a forced hold is gone everywhere already");
    }

    @Test
    void renewedNanos_isTheStartOfTheQuorumsValidity() {
        QuorumLease lease = started(0, true, true, true);
        long now = System.nanoTime();
        nodes.current(0).renewedNanos = now + 3;
        nodes.current(1).renewedNanos = now + 1;
        nodes.current(2).renewedNanos = now + 2;

        assertEquals(now + 2, lease.renewedNanos());
    }
}
