package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-force-unlock.lua} against a real server, on holds and fair queues written by hand:
 * the tests of {@link FairUnlockLuaContract} (the wake-ups), and that it deletes any hold.
 */
@Tag("redis")
class LockForceUnlockLuaTest extends FairUnlockLuaContract {

    @Override
    void assertUnlocks(String woken) throws Exception {
        assertEquals(1L, forceUnlock());
    }

    private long forceUnlock() throws Exception {
        return lua.<Long>run(Script.LOCK_FORCE_UNLOCK, fair.keys());
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
}
