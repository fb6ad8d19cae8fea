package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code fair-lock-leave.lua} against a real server, on holds and fair queues written by hand:
 * leaving the queue, giving back a lock handed over and not taken, and serving the next live
 * waiter whose client listens on its own channel when the leaver was next in line (or had the
 * lock) and the lock is free. The script serves the fair lock's line and the non-fair lock's alike.
 */
@Tag("redis")
class FairLockLeaveLuaTest extends LuaTestBase {

    private FairFixture fair;
    /** A place end no test reaches, read from the server's clock. */
    private long placeEnd;

    @BeforeEach
    void names() {
        fair = new FairFixture(lua, base);
        placeEnd = lua.farEnd();
    }

    private void held() {
        fair.hold(Map.of("holder", "1001"), LONG_LEASE_MS);
    }

    /**
     * Makes the lock handed to {@code owner-a} by a release with the last token issued, leased to
     * its place's end, as fair-lock-release.lua leaves it (owner-a out of the queue); returns the token.
     * The token key lives longer than a release leaves it, so that no test sees it expire.
     */
    private long handedToOwnerA() {
        long handed = lua.serverMicros();
        fair.lastToken(handed, LONG_LEASE_MS);
        fair.hold(Map.of("owner-a", Long.toString(handed)), LONG_LEASE_MS);
        return handed;
    }

    private long leave(String owner) throws Exception {
        return lua.<Long>run(Script.FAIR_LOCK_LEAVE, fair.keys(), owner);
    }

    /* --------------- leaving --------------- */

    @Test
    void leave_queuedOwner_removesItFromQueueAndPlacesAndReturnsOne() throws Exception {
        held();
        fair.queued(placeEnd, "owner-a", "owner-b", "owner-c");

        assertEquals(1L, leave("owner-b"));

        assertEquals(List.of("owner-a", "owner-c"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-a"), ScoredValue.just(placeEnd, "owner-c")),
                fair.placeEnds());
        assertEquals(Map.of("holder", "1001"), lua.redis.hgetall(fair.lock), "the hold is not touched");
    }

    @Test
    void leave_onlyWaiter_theQueueVanishes() throws Exception {
        held();
        fair.queued(placeEnd, "owner-a");

        assertEquals(1L, leave("owner-a"));

        assertEquals(0L, lua.redis.exists(fair.queue, fair.places));
    }

    @Test
    void leave_ownerNotQueuedOnFreeLock_returnsZeroAndServesNobody() throws Exception {
        fair.queued(placeEnd, "owner-a");

        fair.assertServesNobody(() -> assertEquals(0L, leave("owner-x")), "owner-a");

        assertEquals(0L, lua.redis.exists(fair.lock, fair.token), "the waiter is not handed the lock");
        assertEquals(List.of("owner-a"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-a")), fair.placeEnds());
    }

    @Test
    void leave_emptyQueue_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, leave("owner-a"));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.token, fair.queue, fair.places));
    }

    /* --------------- a queued leaver: who is served --------------- */

    @Test
    void leave_headOfQueueOnFreeLock_handsTheLockToTheNextWithANewTokenAndTellsItByName() throws Exception {
        fair.queued(placeEnd, "owner-a", "owner-b", "owner-c");

        fair.assertHandsOver(() -> assertEquals(1L, leave("owner-a")), "owner-b", placeEnd);

        assertEquals(List.of("owner-c"), fair.queueOrder(), "the served waiter leaves the queue");
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-c")), fair.placeEnds());
    }

    @Test
    void leave_headOfQueueOnFreeLock_leasesTheHandedHoldToTheNextWaitersPlaceEnd() throws Exception {
        long endB = lua.serverMillis() + 90_000;
        fair.queued("owner-a", 1, placeEnd);
        fair.queued("owner-b", 2, endB);
        fair.queued("owner-c", 3, placeEnd);

        // The PTTL's bounds are checked against endB in assertHandedTo.
        fair.assertHandsOver(() -> assertEquals(1L, leave("owner-a")), "owner-b", endB);
    }

    @Test
    void leave_headOfQueueOnFreeLockNextExpired_skipsItAndServesTheNextLive() throws Exception {
        fair.queued("owner-a", 1, placeEnd);
        fair.queued("owner-dead", 2, 0);   // a place that ended long ago
        fair.queued("owner-c", 3, placeEnd);

        fair.assertHandsOver(() -> assertEquals(1L, leave("owner-a")), "owner-c", placeEnd);

        assertEquals(0L, lua.redis.exists(fair.queue, fair.places), "the dead waiter is purged, owner-c served");
    }

    @Test
    void leave_headOfQueueOnFreeLockNextWithoutAPlace_dropsItAndServesTheNextLive() throws Exception {
        fair.queued("owner-a", 1, placeEnd);
        lua.redis.zadd(fair.queue, 2, "owner-halfway");   // queued, its place never written
        fair.queued("owner-c", 3, placeEnd);

        // The placeless waiter's client listens too: it is dropped untold, not served.
        try (LuaHarness.Subscription halfway = lua.subscribe(fair.channelOf("owner-halfway"))) {
            fair.assertHandsOver(() -> assertEquals(1L, leave("owner-a")), "owner-c", placeEnd);
            halfway.assertNothingMore(lua.redis);
        }

        assertEquals(0L, lua.redis.exists(fair.queue, fair.places), "the placeless waiter is dropped, owner-c served");
    }

    @Test
    void leave_headOfQueueOnFreeLockNextClientNotListening_dropsItAndServesTheNextListening() throws Exception {
        fair.queued(placeEnd, "client-a:1", "client-gone:3", "client-c:9", "client-d:2");

        fair.assertHandsOver(() -> assertEquals(1L, leave("client-a:1")), "client-c:9", placeEnd);

        assertEquals(List.of("client-d:2"), fair.queueOrder(), "the deaf waiter is dropped, client-c:9 served");
        assertEquals(List.of(ScoredValue.just(placeEnd, "client-d:2")), fair.placeEnds());
    }

    @Test
    void leave_headOfQueueOnFreeLockNobodyListening_leavesTheLockFreeAndTheLineEmpty() throws Exception {
        fair.queued(placeEnd, "client-a:1", "client-b:7", "client-c:9");

        assertEquals(1L, leave("client-a:1"));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.token, fair.queue, fair.places),
                "nobody is handed the lock, no token issued, nobody who could not hear a grant stays in line");
    }

    @Test
    void leave_headOfQueueOnHeldLock_servesNobody() throws Exception {
        held();
        fair.queued(placeEnd, "owner-a", "owner-b");

        fair.assertServesNobody(() -> assertEquals(1L, leave("owner-a")), "owner-b");

        assertEquals(Map.of("holder", "1001"), lua.redis.hgetall(fair.lock), "the hold is not touched");
        assertEquals(0L, lua.redis.exists(fair.token), "no token is issued");
        assertEquals(List.of("owner-b"), fair.queueOrder());
    }

    @Test
    void leave_notHeadOnFreeLock_servesNobody() throws Exception {
        fair.queued(placeEnd, "owner-a", "owner-b", "owner-c");

        fair.assertServesNobody(() -> assertEquals(1L, leave("owner-b")), "owner-a", "owner-c");

        assertEquals(0L, lua.redis.exists(fair.lock, fair.token), "nobody is handed the lock, no token issued");
        assertEquals(List.of("owner-a", "owner-c"), fair.queueOrder(), "the head keeps its place");
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-a"), ScoredValue.just(placeEnd, "owner-c")),
                fair.placeEnds());
    }

    @Test
    void leave_lastWaiterOnFreeLock_publishesNothing() throws Exception {
        fair.queued(placeEnd, "owner-a");

        lua.assertPublishes(fair.wakeups, () -> assertEquals(1L, leave("owner-a")));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.token, fair.queue, fair.places));
    }

    /* --------------- an owner handed the lock gives it back --------------- */

    @Test
    void leave_ownerHandedTheLock_returnsTwoAndPassesItToTheNextLiveWaiterWithANewToken() throws Exception {
        long handedToA = handedToOwnerA();
        fair.queued(placeEnd, "owner-b", "owner-c");

        long handedToB = fair.assertHandsOver(() -> assertEquals(2L, leave("owner-a")), "owner-b", placeEnd);

        assertTrue(handedToB > handedToA, () -> "token " + handedToB + " handed on after " + handedToA);
        assertEquals(List.of("owner-c"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-c")), fair.placeEnds());
    }

    @Test
    void leave_ownerHandedTheLockLastTokenAheadOfClock_passesItOnWithTheTokenRightAfterIt() throws Exception {
        long last = lua.serverMicros() + 1_000_000_000L;
        fair.lastToken(last, 1_001_000);
        fair.hold(Map.of("owner-a", Long.toString(last)), LONG_LEASE_MS);
        fair.queued(placeEnd, "owner-b");

        // Spelled out: a token of 16 digits, as a plain integer.
        lua.assertPublishes(fair.channelOf("owner-b"), () -> assertEquals(2L, leave("owner-a")),
                "granted:owner-b=" + (last + 1));

        assertEquals(Map.of("owner-b", Long.toString(last + 1)), lua.redis.hgetall(fair.lock));
        assertEquals(Long.toString(last + 1), lua.redis.get(fair.token));
        assertEquals(0L, lua.redis.exists(fair.queue, fair.places));
    }

    @Test
    void leave_ownerHandedTheLockNextExpired_skipsItAndServesTheNextLive() throws Exception {
        handedToOwnerA();
        fair.queued("owner-dead", 1, 0);
        fair.queued("owner-c", 2, placeEnd);

        fair.assertHandsOver(() -> assertEquals(2L, leave("owner-a")), "owner-c", placeEnd);

        assertEquals(0L, lua.redis.exists(fair.queue, fair.places));
    }

    @Test
    void leave_ownerHandedTheLockNobodyWaits_returnsTwoAndFreesTheLock() throws Exception {
        long handed = handedToOwnerA();

        lua.assertPublishes(fair.wakeups, () -> assertEquals(2L, leave("owner-a")));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.queue, fair.places));
        assertEquals(Long.toString(handed), lua.redis.get(fair.token), "no token is issued");
    }
}
