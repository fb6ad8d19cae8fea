package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code fair-lock-release.lua} against a real server, on holds and fair queues written by hand:
 * the tests of {@link FairUnlockLuaContract} (the wake-ups), and who may release.
 */
@Tag("redis")
class FairLockReleaseLuaTest extends FairUnlockLuaContract {

    @Override
    void assertUnlocks(String woken) throws Exception {
        assertEquals(List.of(1L, woken), release("owner-a", "1001"));
    }

    private List<Object> release(String owner, String token) throws Exception {
        return lua.run(Script.FAIR_LOCK_RELEASE, fair.keys(), owner, token);
    }

    /* --------------- who may release --------------- */

    @Test
    void release_rightOwnerAndToken_deletesHashAndReturnsOneAndNoWaiter() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(List.of(1L, ""), release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(fair.lock));
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

        assertEquals(0L, lua.redis.exists(fair.lock, fair.queue, fair.places));
    }

    /* --------------- wake-ups: non-fair waiters --------------- */

    @Test
    void release_wrongTokenWithWaiter_publishesNothingAndKeepsMark() throws Exception {
        hold(Map.of("owner-a", "1002", ":waiting", "1"));

        lua.assertPublishes(fair.wakeups, () -> assertEquals(List.of(0L, ""), release("owner-a", "1001")));

        assertKept(Map.of("owner-a", "1002", ":waiting", "1"));
    }

    /* --------------- wake-ups: fair waiters --------------- */

    @Test
    void release_wrongTokenWithQueuedFairWaiter_publishesNothingAndKeepsQueue() throws Exception {
        hold(Map.of("owner-a", "1002"));
        long end = lua.farEnd();
        fair.queued("fair-b", 1, end);

        lua.assertPublishes(fair.wakeups, () -> assertEquals(List.of(0L, ""), release("owner-a", "1001")));

        assertKept(Map.of("owner-a", "1002"));
        assertEquals(List.of("fair-b"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "fair-b")), fair.placeEnds());
    }

    private void assertKept(Map<String, String> fields) {
        assertEquals(fields, lua.redis.hgetall(fair.lock));
        lua.assertTtlAtMost(fair.lock, LEASE_MS);
    }
}
