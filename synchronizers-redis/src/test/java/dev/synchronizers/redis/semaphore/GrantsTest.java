package dev.synchronizers.redis.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.semaphore.Grants.Grant;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The books of {@link Grants}: the order a plain release takes grants in, handle grants kept out of
 * it, lost grants reported and capped, and holds ended once. Needs no Redis: the {@link Grants.Keeper}
 * and the leases are stubs.
 */
class GrantsTest {

    private static final long ME = 1;
    private static final long OTHER = 2;

    /** Holds ended in the metrics, as "metric=released". */
    private final List<String> ended = new ArrayList<>();
    /** Leases whose renewal was stopped. */
    private final List<HoldLease> stopped = new ArrayList<>();

    private final Grants grants = new Grants("semaphore 's'", new Grants.Keeper() {
        @Override
        public boolean stopRenewing(HoldLease lease) {
            stopped.add(lease);
            return ((StubLease) lease).cause == null;
        }

        @Override
        public void holdEnded(Object metric, boolean released) {
            ended.add(metric + "=" + released);
        }
    });

    private Grant add(String id, long threadId, int permits) {
        return grants.add(new Grant(id, threadId, permits, false, id, null), grant -> new StubLease());
    }

    private Grant addHandle(String id, int permits) {
        return grants.add(new Grant(id, -1, permits, true, id, null), grant -> new StubLease());
    }

    private static List<String> ids(List<Grant> order) {
        return order.stream().map(grant -> grant.id).toList();
    }

    /* --------------- releaseOrder --------------- */

    /** "the thread's lost grants, its live ones, then other threads' lost grants and live ones" */
    @Test
    void releaseOrder_mixedGrants_ownLostOwnLiveOtherLostOtherLive() {
        add("other-live", OTHER, 1);
        Grant otherLost = add("other-lost", OTHER, 1);
        add("my-live", ME, 1);
        Grant myLost = add("my-lost", ME, 1);
        grants.lost(otherLost, LostHold.Cause.GONE);
        grants.lost(myLost, LostHold.Cause.LEASE_EXPIRED);

        assertEquals(List.of("my-lost", "my-live", "other-lost", "other-live"), ids(grants.releaseOrder(ME)));
        assertEquals(List.of("other-lost", "other-live", "my-lost", "my-live"), ids(grants.releaseOrder(OTHER)));
    }

    /** "each in acquisition order": oldest first within each group. */
    @Test
    void releaseOrder_sameGroup_oldestFirst() {
        add("a", ME, 1);
        add("b", OTHER, 1);
        add("c", ME, 1);
        add("d", OTHER, 1);

        assertEquals(List.of("a", "c", "b", "d"), ids(grants.releaseOrder(ME)));
    }

    /** "Never a handle's grant: that is its handle's to release." */
    @Test
    void releaseOrder_handleGrants_excluded() {
        addHandle("handle", 3);
        add("mine", ME, 1);

        assertEquals(List.of("mine"), ids(grants.releaseOrder(ME)));
        assertEquals(List.of("mine"), ids(grants.releaseOrder(-1)));
    }

    /* --------------- release --------------- */

    @Test
    void release_acrossGrants_takesOldestOwnFirstAndKeepsTheRest() {
        add("a", ME, 2);
        add("other", OTHER, 5);
        add("b", ME, 3);

        Grants.Taken taken = grants.release(ME, 4);

        assertEquals("a=0 b=1", taken.keep());
        assertNull(taken.lostCause());
        assertEquals(0, taken.lostPermits());
        assertEquals(List.of("b", "other"), ids(grants.releaseOrder(ME)));
        assertEquals(List.of("a=true"), ended, "only the emptied grant's hold ends, as released");
        assertEquals(1, stopped.size(), "only the emptied grant's lease stops");
    }

    @Test
    void release_moreThanOwn_takesOtherThreadsGrants() {
        add("mine", ME, 1);
        add("theirs", OTHER, 2);

        assertEquals("mine=0 theirs=1", grants.release(ME, 2).keep());
    }

    @Test
    void release_onlyHandleGrantsHeld_throwsNamingTheHandlesAndChangesNothing() {
        Grant handle = addHandle("handle", 3);
        add("mine", ME, 1);

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> grants.release(ME, 2));

        assertEquals("semaphore 's': cannot release 2 permits: this client holds 1 outside handles (its handles"
                + " hold 3 more, which only PermitHandle.release() releases)", e.getMessage());
        assertEquals(3, handle.permits);
        assertEquals(List.of("mine"), ids(grants.releaseOrder(ME)));
        assertEquals(3, grants.permitsOfHandles());
        assertTrue(ended.isEmpty());
    }

    @Test
    void release_moreThanHeldWithoutHandles_throwsWithoutHandleNote() {
        add("mine", ME, 1);

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> grants.release(ME, 2));

        assertEquals("semaphore 's': cannot release 2 permits: this client holds 1", e.getMessage());
    }

    /** A lost grant is reached before a live one and reported, not sent. */
    @Test
    void release_reachesLostGrant_reportsItsPermitsAndSendsOnlyLiveOnes() {
        add("live", ME, 2);
        Grant lost = add("lost", ME, 1);
        grants.lost(lost, LostHold.Cause.LEASE_EXPIRED);

        Grants.Taken taken = grants.release(ME, 2);

        assertEquals("live=1", taken.keep());
        assertEquals(LostHold.Cause.LEASE_EXPIRED, taken.lostCause());
        assertEquals(1, taken.lostPermits());
        assertEquals(List.of("live"), ids(grants.releaseOrder(ME)));
    }

    /** A grant whose lease ended before its release stopped it counts as lost. */
    @Test
    void release_leaseEndedJustNow_countsAsLost() {
        Grant grant = add("g", ME, 1);
        ((StubLease) grant.lease).cause = LostHold.Cause.GONE;

        Grants.Taken taken = grants.release(ME, 1);

        assertEquals("", taken.keep());
        assertEquals(LostHold.Cause.GONE, taken.lostCause());
        assertTrue(ended.isEmpty(), "a lost grant's hold is not ended as released");
    }

    /* --------------- handles --------------- */

    @Test
    void releaseHandle_live_leavesTheBooksAndEndsItsHold() {
        Grant handle = addHandle("handle", 2);

        assertNull(grants.releaseHandle(handle));

        assertEquals(0, grants.permitsOfHandles());
        assertEquals(List.of("handle=true"), ended);
    }

    /** "A handle's grant reported lost leaves the books at once." */
    @Test
    void lost_handleGrant_leavesTheBooksAndItsReleaseReportsTheCause() {
        Grant handle = addHandle("handle", 2);

        grants.lost(handle, LostHold.Cause.GONE);

        assertEquals(0, grants.permitsOfHandles());
        assertEquals("held by this client: 0", grants.describe());
        assertEquals(LostHold.Cause.GONE, grants.releaseHandle(handle));
        assertEquals(List.of("handle=false"), ended, "its hold ended once, as lost");
    }

    /* --------------- lost --------------- */

    @Test
    void lost_beyondTheCap_forgetsTheOldestLostGrants() {
        int extra = 5;
        List<Grant> all = new ArrayList<>();
        for (int i = 0; i < Grants.MAX_LOST_GRANTS + extra; i++) {
            all.add(add("g" + i, ME, 1));
        }
        Grant live = add("live", ME, 1);
        for (Grant grant : all) {
            grants.lost(grant, LostHold.Cause.GONE);
        }

        List<String> order = ids(grants.releaseOrder(ME));

        assertEquals(Grants.MAX_LOST_GRANTS + 1, order.size());
        assertEquals("g" + extra, order.get(0), "the oldest lost grants were forgotten");
        assertEquals(live.id, order.get(order.size() - 1), "live grants are never forgotten");
    }

    /** A grant's hold ends in the metrics at most once. */
    @Test
    void lost_twiceOrThenRemoved_endsTheHoldOnce() {
        Grant grant = add("g", ME, 1);

        grants.lost(grant, LostHold.Cause.GONE);
        grants.lost(grant, LostHold.Cause.LEASE_EXPIRED);
        grants.removeUnreplicated("g");

        assertEquals(List.of("g=false"), ended);
    }

    /* --------------- removeUnreplicated, describe --------------- */

    @Test
    void removeUnreplicated_named_takesItOutStopsItsLeaseAndEndsItsHoldAsNotReleased() {
        Grant grant = add("g", ME, 2);
        add("other", ME, 1);

        grants.removeUnreplicated("g");

        assertEquals(List.of("other"), ids(grants.releaseOrder(ME)));
        assertEquals(List.of(grant.lease), stopped);
        assertEquals(List.of("g=false"), ended);
    }

    @Test
    void describe_liveHandleAndLost_showsEach() {
        add("live", ME, 2);
        addHandle("handle", 3);
        grants.lost(add("lost", OTHER, 4), LostHold.Cause.GONE);

        assertEquals("held by this client: 5 (3 by handles), lost: 4", grants.describe());
    }

    /** A lease the test ends by setting its cause. */
    private static final class StubLease implements HoldLease {
        volatile LostHold.Cause cause;

        @Override
        public LostHold.Cause endedBecause() {
            return cause;
        }

        @Override
        public boolean fixed() {
            return false;
        }

        @Override
        public long fixedMillis() {
            return 0;
        }

        @Override
        public long renewedNanos() {
            return 0;
        }
    }
}
