package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-force-unlock.lua} against a real server, on holds and fair queues written by hand:
 * the tests of {@link FairUnlockLuaContract}, that it deletes any hold, that it publishes
 * {@code released} on the shared channel for a waiting mark, and that it wakes the first live
 * waiter in line by name on its client's own channel, handing it nothing.
 */
@Tag("redis")
class LockForceUnlockLuaTest extends FairUnlockLuaContract {

    @Override
    void assertUnlocks() throws Exception {
        assertEquals(1L, forceUnlock());
    }

    private long forceUnlock() throws Exception {
        ForceReply reply = forced();
        assertEquals("", reply.cacher(), "no cache among the holds");
        return reply.released() ? 1L : 0L;
    }

    private ForceReply forced() throws Exception {
        return ForceReply.of(Script.LOCK_FORCE_UNLOCK, lua.<List<Object>>run(Script.LOCK_FORCE_UNLOCK, fair.forceUnlockKeys()));
    }

    @Test
    void forceUnlock_lockACacheHolds_namesTheCachingClientSoThatItIsToldAtOnce() throws Exception {
        hold(Map.of("client-7:cache", "1001", ":waiting", "1"));

        ForceReply reply = forced();

        assertEquals(new ForceReply(true, "client-7"), reply);
        assertEquals(0L, lua.redis.exists(fair.lock));
    }

    /* --------------- release --------------- */

    @Test
    void forceUnlock_heldLock_deletesWhateverHolderAndReturnsOne() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(fair.lock));
    }

    @Test
    void forceUnlock_heldWithoutTtl_deletesAndReturnsOne() throws Exception {
        lua.redis.hset(fair.lock, "owner-a", "1001");

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(fair.lock));
    }

    @Test
    void forceUnlock_freeLock_returnsZeroAndCreatesNothing() throws Exception {
        lua.assertPublishes(fair.wakeups, () -> assertEquals(0L, forceUnlock()));

        assertEquals(0L, lua.redis.exists(fair.lock));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void forceUnlock_freeLockWithQueuedFairWaiter_returnsZeroAndLeavesQueue() throws Exception {
        long end = lua.farEnd();
        fair.queued("fair-b", 1, end);

        fair.assertServesNobody(() -> assertEquals(0L, forceUnlock()), "fair-b");

        assertEquals(List.of(ScoredValue.just(end, "fair-b")), fair.placeEnds());
        assertEquals(List.of("fair-b"), fair.queueOrder());
    }

    @Test
    void forceUnlock_withQueuedFairWaiter_publishesItsOwner() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = lua.farEnd();
        fair.queued(end, "fair-b", "fair-c");

        // The first waiter is woken by name, on its client's channel alone.
        lua.assertPublishes(Map.of(fair.wakeups, List.of(), fair.channelOf("fair-b"), List.of("fair-b"),
                fair.channelOf("fair-c"), List.of()), () -> assertEquals(1L, forceUnlock()));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.token), "nothing is handed over");
        assertEquals(List.of("fair-b", "fair-c"), fair.queueOrder(),
                "the woken waiter keeps its place until it acquires");
        assertEquals(List.of(ScoredValue.just(end, "fair-b"), ScoredValue.just(end, "fair-c")), fair.placeEnds());
    }

    @Test
    void forceUnlock_expiredHeadOfQueue_isPurgedAndTheNextLiveWaiterIsWoken() throws Exception {
        hold(Map.of("owner-a", "1001"));
        fair.queued("fair-dead", 1, 0);   // a place that ended long ago
        fair.queued("fair-b", 2, lua.farEnd());

        // Had the dead waiter been woken, its client's channel would show it.
        lua.assertPublishes(Map.of(fair.channelOf("fair-dead"), List.of(), fair.channelOf("fair-b"), List.of("fair-b")),
                () -> assertEquals(1L, forceUnlock()));

        assertEquals(List.of("fair-b"), fair.queueOrder());
        assertEquals(List.of("fair-b"), lua.redis.zrange(fair.places, 0, -1));
    }

    @Test
    void forceUnlock_withWaitingMarkAndQueuedFairWaiter_publishesBoth() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        fair.queued("fair-b", 1, lua.farEnd());

        lua.assertPublishes(Map.of(fair.wakeups, List.of("released"), fair.channelOf("fair-b"), List.of("fair-b")),
                () -> assertEquals(1L, forceUnlock()));
    }

    @Test
    void forceUnlock_withWaitingMark_publishesReleased() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));

        lua.assertPublishes(fair.wakeups, this::assertUnlocks, "released");

        assertEquals(0L, lua.redis.exists(fair.lock));
    }

    /** Unlike a release, it names the first waiter whether its client listens or not, and keeps its place. */
    @Test
    void forceUnlock_firstWaitersClientNotListening_keepsItInLine() throws Exception {
        hold(Map.of("client-a:1", "1001"));
        long end = lua.farEnd();
        fair.queued(end, "client-gone:3", "client-b:7");

        lua.assertPublishes(fair.channelOf("client-b:7"), () -> assertEquals(1L, forceUnlock()));

        assertEquals(List.of("client-gone:3", "client-b:7"), fair.queueOrder());
    }
}
