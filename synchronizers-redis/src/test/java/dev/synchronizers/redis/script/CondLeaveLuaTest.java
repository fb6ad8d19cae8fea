package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code cond-leave.lua} against a real server, on a condition written by hand. */
@Tag("redis")
class CondLeaveLuaTest extends LuaTestBase {

    @Test
    void leave_stillWaiting_leavesAndSignalsNobody() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "w-1", "w-2");
        lua.assertPublishes(cond.wake, () -> assertEquals(1L,
                (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "w-1", "0", "30000")));
        assertEquals(List.of("w-2"), lua.redis.zrange(cond.queue, 0, -1));
        assertNull(lua.redis.zscore(cond.places, "w-1"));
    }

    @Test
    void leave_signalledAndTaken_consumesTheSignal() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "w-2");
        lua.redis.zadd(cond.signalled, (double) lua.farEnd(), "w-1");
        lua.assertPublishes(cond.wake, () -> assertEquals(2L,
                (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "w-1", "1", "30000")));
        assertEquals(List.of("w-2"), lua.redis.zrange(cond.queue, 0, -1), "w-2 still waits");
        assertEquals(0L, lua.redis.exists(cond.signalled));
    }

    /** A waiter that timed out or was interrupted passes a signal it had on to the next waiter. */
    @Test
    void leave_signalledNotTaken_passesTheSignalOn() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "w-2");
        lua.redis.zadd(cond.signalled, (double) lua.farEnd(), "w-1");
        lua.assertPublishes(cond.wake, () -> assertEquals(2L,
                (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "w-1", "0", "30000")), "granted:w-2");
        assertEquals(List.of("w-2"), lua.redis.zrange(cond.signalled, 0, -1));
        assertEquals(0L, lua.redis.exists(cond.queue));
    }

    /** Safe to repeat: a second run finds the waiter nowhere and passes nothing on again. */
    @Test
    void leave_repeated_changesNothingMore() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "w-2", "w-3");
        lua.redis.zadd(cond.signalled, (double) lua.farEnd(), "w-1");
        assertEquals(2L, (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "w-1", "0", "30000"));
        assertEquals(0L, (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "w-1", "0", "30000"));
        assertEquals(List.of("w-3"), lua.redis.zrange(cond.queue, 0, -1), "only w-2 was signalled");
    }
}
