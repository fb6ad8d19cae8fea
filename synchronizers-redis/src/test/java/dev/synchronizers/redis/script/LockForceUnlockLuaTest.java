package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-force-unlock.lua} against a real server, on holds and fair queues written by hand:
 * the tests of {@link FairUnlockLuaContract}, that it deletes any hold, and that it wakes the first
 * live fair waiter by name, handing it nothing.
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

        lua.assertPublishes(fair.wakeups, () -> assertEquals(0L, forceUnlock()));

        assertEquals(List.of(ScoredValue.just(end, "fair-b")), fair.placeEnds());
        assertEquals(List.of("fair-b"), fair.queueOrder());
    }

    @Test
    void forceUnlock_withQueuedFairWaiter_publishesItsOwner() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = lua.farEnd();
        fair.queued(end, "fair-b", "fair-c");

        // The first waiter is woken by name.
        lua.assertPublishes(fair.wakeups, () -> assertEquals(1L, forceUnlock()), "fair-b");

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

        // Had the dead waiter been published, its message would come first.
        lua.assertPublishes(fair.wakeups, () -> assertEquals(1L, forceUnlock()), "fair-b");

        assertEquals(List.of("fair-b"), fair.queueOrder());
        assertEquals(List.of("fair-b"), lua.redis.zrange(fair.places, 0, -1));
    }

    @Test
    void forceUnlock_withWaitingMarkAndQueuedFairWaiter_publishesBoth() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        fair.queued("fair-b", 1, lua.farEnd());

        lua.assertPublishes(fair.wakeups, () -> assertEquals(1L, forceUnlock()), "released", "fair-b");
    }
}
