package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code fair-lock-release.lua} against a real server, on holds and fair queues written by hand:
 * the tests of {@link FairUnlockLuaContract}, who may release, and the hand-over to the first live
 * fair waiter (a new token, a lease to the end of its place, one grant message naming it).
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

        lua.assertPublishes(fair.wakeups, () -> assertEquals(List.of(0L, ""), release("owner-a", "1001")));

        assertKept(Map.of("owner-a", "1002"));
        assertEquals("1002", lua.redis.get(fair.token), "no token is issued");
        assertEquals(List.of("fair-b"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "fair-b")), fair.placeEnds());
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
    void release_queuedHeadWithoutAPlace_isDroppedAndNobodyIsServed() throws Exception {
        hold(Map.of("owner-a", "1001"));
        lua.redis.zadd(fair.queue, 1, "fair-halfway");   // queued, its place never written
        long end = lua.farEnd();
        fair.queued("fair-b", 2, end);

        lua.assertPublishes(fair.wakeups, this::assertUnlocks);

        assertEquals(0L, lua.redis.exists(fair.lock, fair.token), "nothing is handed over, no token issued");
        assertEquals(List.of("fair-b"), fair.queueOrder(), "the placeless waiter is dropped, the next one waits");
        assertEquals(List.of(ScoredValue.just(end, "fair-b")), fair.placeEnds());
    }

    @Test
    void release_withWaitingMarkAndQueuedFairWaiter_publishesReleasedThenTheGrant() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        long end = lua.farEnd();
        fair.queued("fair-b", 1, end);

        // assertHandedTo also checks that the mark went with the released hold.
        fair.assertHandsOver(() -> releaseServing("fair-b"), "fair-b", end, "released");
    }

    @Test
    void release_grantMessage_carriesTheTokenAsAPlainInteger() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long last = lastTokenAheadOfClock();
        fair.queued(lua.farEnd(), "fair-b");

        // Spelled out: a token of 16 digits, as Lua's tostring would not write it (no exponent, no ".0").
        lua.assertPublishes(fair.wakeups, () -> releaseServing("fair-b"), "granted:fair-b=" + (last + 1));

        assertEquals(Map.of("fair-b", Long.toString(last + 1)), lua.redis.hgetall(fair.lock));
    }

    private void assertKept(Map<String, String> fields) {
        assertEquals(fields, lua.redis.hgetall(fair.lock));
        lua.assertTtlAtMost(fair.lock, LEASE_MS);
    }
}
