package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ScoredValue;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code fair-lock-release.lua} against a real server, on holds and fair queues written by hand:
 * the tests of {@link FairUnlockLuaContract}, who may release, and the hand-over to the first live
 * fair waiter whose client listens on its own channel (a new token, a lease to the end of its
 * place, one grant message naming it, on that channel alone).
 */
@Tag("redis")
class FairLockReleaseLuaTest extends FairUnlockLuaContract {

    /** How far ahead of the server's clock a token written by hand is (about 17 minutes). */
    private static final long AHEAD_MICROS = 1_000_000_000L;

    @Override
    void assertUnlocks() throws Exception {
        assertEquals(List.of(1L, ""), release("owner-a", "1001"));
    }

    private List<Object> release(String owner, String token) throws Exception {
        return lua.run(Script.FAIR_LOCK_RELEASE, fair.keys(), owner, token);
    }

    /** Releases {@code owner-a}'s hold {@code 1001}, asserting that the reply names {@code served}. */
    private void releaseServing(String served) throws Exception {
        assertServed(served, release("owner-a", "1001"));
    }

    /** Asserts a reply {@code {1, served, token}}, the token being the one the lock now records for it. */
    private void assertServed(String served, List<Object> reply) {
        assertEquals(List.of(1L, served), reply.subList(0, 2));
        assertEquals(3, reply.size(), "the reply carries the token handed over");
        assertEquals(lua.redis.hget(fair.lock, served), Long.toString((Long) reply.get(2)),
                "the token handed over is the one the lock records");
    }

    /** Records a last token {@link #AHEAD_MICROS} ahead of the server's clock, its key living as an acquire sets it. */
    private long lastTokenAheadOfClock() {
        long last = lua.serverMicros() + AHEAD_MICROS;
        fair.lastToken(last, AHEAD_MICROS / 1_000 + 1_000);
        return last;
    }

    /* --------------- who may release --------------- */

    @Test
    void release_rightOwnerAndToken_deletesHashAndReturnsOneAndNoWaiter() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(List.of(1L, ""), release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(fair.lock));
        assertEquals(0L, lua.redis.exists(fair.token), "no token is issued when nobody is served");
        assertEquals(0L, lua.redis.exists(fair.queue, fair.places), "an empty queue is not created");
    }

    @Test
    void release_wrongToken_returnsZeroAndKeepsHold() throws Exception {
        // A late release of an older hold of the same owner, whose newer hold has token 1002.
        hold(Map.of("owner-a", "1002"));

        assertEquals(List.of(0L, ""), release("owner-a", "1001"));

        assertKept(Map.of("owner-a", "1002"));
    }

    @Test
    void release_wrongOwner_returnsZeroAndKeepsHold() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(List.of(0L, ""), release("owner-b", "1001"));

        assertKept(Map.of("owner-a", "1001"));
    }

    @Test
    void release_freeLock_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.token, fair.queue, fair.places));
    }

    @Test
    void release_wrongTokenWithWaiter_publishesNothingAndKeepsMark() throws Exception {
        hold(Map.of("owner-a", "1002", ":waiting", "1"));

        lua.assertPublishes(fair.wakeups, () -> assertEquals(List.of(0L, ""), release("owner-a", "1001")));

        assertKept(Map.of("owner-a", "1002", ":waiting", "1"));
    }

    @Test
    void release_wrongTokenWithQueuedFairWaiter_publishesNothingAndHandsNothingOver() throws Exception {
        hold(Map.of("owner-a", "1002"));
        fair.lastToken(1002, LONG_LEASE_MS);
        long end = lua.farEnd();
        fair.queued("fair-b", 1, end);

        fair.assertServesNobody(() -> assertEquals(List.of(0L, ""), release("owner-a", "1001")), "fair-b");

        assertKept(Map.of("owner-a", "1002"));
        assertEquals("1002", lua.redis.get(fair.token), "no token is issued");
        assertEquals(List.of("fair-b"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "fair-b")), fair.placeEnds());
    }

    /* --------------- a waiting mark --------------- */

    /** The fair lock's waiters wait in line, each told on its client's channel: a mark wakes nobody. */
    @Test
    void release_withWaitingMark_publishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));

        lua.assertPublishes(fair.wakeups, this::assertUnlocks);

        assertEquals(0L, lua.redis.exists(fair.lock), "the mark goes with the hold");
    }

    /* --------------- hand-over to the first live fair waiter --------------- */

    @Test
    void release_withQueuedFairWaiter_handsItTheLockWithANewTokenAndTellsItByName() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = lua.farEnd();
        fair.queued(end, "fair-b", "fair-c");

        fair.assertHandsOver(() -> releaseServing("fair-b"), "fair-b", end);

        assertEquals(List.of("fair-c"), fair.queueOrder(), "the served waiter leaves the queue");
        assertEquals(List.of(ScoredValue.just(end, "fair-c")), fair.placeEnds(), "and its place");
    }

    @Test
    void release_onlyFairWaiterServed_theQueueVanishes() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = lua.farEnd();
        fair.queued(end, "fair-b");

        fair.assertHandsOver(() -> releaseServing("fair-b"), "fair-b", end);

        assertEquals(0L, lua.redis.exists(fair.queue, fair.places));
    }

    @Test
    void release_handedHold_isLeasedUntilTheServedWaitersPlaceWouldHaveEnded() throws Exception {
        hold(Map.of("owner-a", "1001"));
        // Neither the released hold's lease nor the later place of the waiter behind.
        long endB = lua.serverMillis() + 90_000;
        fair.queued("fair-b", 1, endB);
        fair.queued("fair-c", 2, lua.farEnd());

        // The PTTL's bounds are checked against endB in assertHandedTo.
        fair.assertHandsOver(() -> releaseServing("fair-b"), "fair-b", endB);
    }

    @Test
    void release_handedToken_isAboveTheReleasedOneAndTheLastIssued() throws Exception {
        // The hold released had the last token issued, at the server's time.
        long released = lua.serverMicros();
        fair.lastToken(released, 1_000);
        hold(Map.of("owner-a", Long.toString(released)));
        long end = lua.farEnd();
        fair.queued(end, "fair-b");

        long handed = fair.assertHandsOver(
                () -> assertServed("fair-b", release("owner-a", Long.toString(released))),
                "fair-b", end);

        assertTrue(handed > released, () -> "token " + handed + " handed over after " + released);
    }

    @Test
    void release_lastTokenAheadOfClock_handsOverTheTokenRightAfterIt() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long last = lastTokenAheadOfClock();
        long end = lua.farEnd();
        fair.queued(end, "fair-b");

        long handed = fair.assertHandsOver(() -> releaseServing("fair-b"), "fair-b", end);

        assertEquals(last + 1, handed, "max(server time, last token + 1)");
    }

    @Test
    void release_expiredHeadOfQueue_isSkippedAndTheNextLiveWaiterIsHandedTheLock() throws Exception {
        hold(Map.of("owner-a", "1001"));
        fair.queued("fair-dead", 1, 0);   // a place that ended long ago
        long end = lua.farEnd();
        fair.queued("fair-b", 2, end);

        // Had the dead waiter been served, the hash would name it and its grant would come first.
        fair.assertHandsOver(() -> releaseServing("fair-b"), "fair-b", end);

        assertEquals(0L, lua.redis.exists(fair.queue, fair.places), "the dead waiter is purged, fair-b served");
    }

    @Test
    void release_queuedHeadWithoutAPlace_isDroppedAndTheNextLiveWaiterIsHandedTheLock() throws Exception {
        hold(Map.of("owner-a", "1001"));
        lua.redis.zadd(fair.queue, 1, "fair-halfway");   // queued, its place never written
        long end = lua.farEnd();
        fair.queued("fair-b", 2, end);
        fair.queued("fair-c", 3, end);

        // The placeless waiter's client listens too: it is dropped untold, not served.
        try (LuaHarness.Subscription halfway = lua.subscribe(fair.channelOf("fair-halfway"))) {
            fair.assertHandsOver(() -> releaseServing("fair-b"), "fair-b", end);
            halfway.assertNothingMore(lua.redis);
        }

        assertEquals(List.of("fair-c"), fair.queueOrder(), "the placeless waiter is dropped, fair-b served");
        assertEquals(List.of(ScoredValue.just(end, "fair-c")), fair.placeEnds());
    }

    @Test
    void release_withWaitingMarkAndQueuedFairWaiter_publishesOnlyTheGrant() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        long end = lua.farEnd();
        fair.queued("fair-b", 1, end);

        // assertHandsOver checks that the shared channel got nothing; assertHandedTo that the mark
        // went with the released hold.
        fair.assertHandsOver(() -> releaseServing("fair-b"), "fair-b", end);
    }

    /* --------------- one message, to a client that listens --------------- */

    /**
     * A waiter whose client does not listen on its channel (gone, cut off) cannot learn of a
     * grant: it leaves the line untold, and the next waiter whose client listens is served.
     */
    @Test
    void release_headsClientNotListening_isDroppedAndTheNextListeningWaiterServed() throws Exception {
        hold(Map.of("client-a:1", "1001"));
        long end = lua.farEnd();
        fair.queued(end, "client-gone:3", "client-b:7", "client-c:9");

        fair.assertHandsOver(() -> assertServed("client-b:7", release("client-a:1", "1001")), "client-b:7", end);

        assertEquals(List.of("client-c:9"), fair.queueOrder(), "the deaf waiter is dropped, client-b:7 served");
        assertEquals(List.of(ScoredValue.just(end, "client-c:9")), fair.placeEnds());
    }

    @Test
    void release_noQueuedClientListening_freesTheLockAndEmptiesTheLine() throws Exception {
        hold(Map.of("client-a:1", "1001"));
        fair.lastToken(1001, LONG_LEASE_MS);
        fair.queued(lua.farEnd(), "client-b:7", "client-c:9");

        assertEquals(List.of(1L, ""), release("client-a:1", "1001"));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.queue, fair.places),
                "the lock is free and nobody who could not hear a grant stays in line");
        assertEquals("1001", lua.redis.get(fair.token), "no token is issued");
    }

    @Test
    void release_manyClientsQueuedAndListening_sendsOneMessageToTheFirst() throws Exception {
        hold(Map.of("client-a:1", "1001"));
        long end = lua.farEnd();
        List<String> waiters = List.of("client-b:7", "client-c:9", "client-d:2", "client-e:5");
        fair.queued(end, waiters.toArray(String[]::new));
        long[] handed = new long[1];
        // Every client listens; the shared channel and the channels of all but the first get nothing.
        Map<String, List<String>> others = new LinkedHashMap<>();
        others.put(fair.wakeups, List.of());
        for (String waiter : waiters.subList(1, waiters.size())) {
            others.put(fair.channelOf(waiter), List.of());
        }

        // The first waiter's grant is checked after the run, its token being the script's.
        try (LuaHarness.Subscription first = lua.subscribe(fair.channelOf("client-b:7"))) {
            lua.assertPublishes(others, () -> {
                List<Object> reply = release("client-a:1", "1001");
                assertServed("client-b:7", reply);
                handed[0] = (Long) reply.get(2);
            });
            assertEquals(FairFixture.granted("client-b:7", handed[0]), first.next());
            first.assertNothingMore(lua.redis);
        }

        assertEquals(waiters.subList(1, waiters.size()), fair.queueOrder(), "the others keep their places");
    }

    @Test
    void release_grantMessage_carriesTheTokenAsAPlainInteger() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long last = lastTokenAheadOfClock();
        fair.queued(lua.farEnd(), "fair-b");

        // Spelled out: a token of 16 digits, as Lua's tostring would not write it (no exponent, no ".0").
        lua.assertPublishes(fair.channelOf("fair-b"), () -> releaseServing("fair-b"), "granted:fair-b=" + (last + 1));

        assertEquals(Map.of("fair-b", Long.toString(last + 1)), lua.redis.hgetall(fair.lock));
    }

    private void assertKept(Map<String, String> fields) {
        assertEquals(fields, lua.redis.hgetall(fair.lock));
        lua.assertTtlAtMost(fair.lock, LEASE_MS);
    }
}
