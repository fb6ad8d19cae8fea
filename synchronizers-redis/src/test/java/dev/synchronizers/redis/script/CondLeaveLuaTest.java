package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code cond-leave.lua} against a real server, on a condition written by hand: a signal passed
 * on is told {@code 'granted:<waiter>'} on the next waiter's client's channel alone.
 */
@Tag("redis")
class CondLeaveLuaTest extends LuaTestBase {

    @Test
    void leave_stillWaiting_leavesAndSignalsNobody() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "client-a:1:1", "client-b:7:1");
        cond.assertSignals(() -> assertEquals(1L,
                (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "client-a:1:1", "0", "30000")),
                List.of(), "client-a:1:1", "client-b:7:1");
        assertEquals(List.of("client-b:7:1"), lua.redis.zrange(cond.queue, 0, -1));
        assertNull(lua.redis.zscore(cond.places, "client-a:1:1"));
    }

    @Test
    void leave_signalledAndTaken_consumesTheSignal() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "client-b:7:1");
        lua.redis.zadd(cond.signalled, (double) lua.farEnd(), "client-a:1:1");
        cond.assertSignals(() -> assertEquals(2L,
                (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "client-a:1:1", "1", "30000")),
                List.of(), "client-a:1:1", "client-b:7:1");
        assertEquals(List.of("client-b:7:1"), lua.redis.zrange(cond.queue, 0, -1), "client-b:7:1 still waits");
        assertEquals(0L, lua.redis.exists(cond.signalled));
    }

    /** A waiter that timed out or was interrupted passes a signal it had on to the next waiter. */
    @Test
    void leave_signalledNotTaken_passesTheSignalOn() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "client-b:7:1");
        lua.redis.zadd(cond.signalled, (double) lua.farEnd(), "client-a:1:1");
        cond.assertSignals(() -> assertEquals(2L,
                (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "client-a:1:1", "0", "30000")),
                List.of("client-b:7:1"), "client-a:1:1");
        assertEquals(List.of("client-b:7:1"), lua.redis.zrange(cond.signalled, 0, -1));
        assertEquals(0L, lua.redis.exists(cond.queue));
    }

    /** Safe to repeat: a second run finds the waiter nowhere and passes nothing on again. */
    @Test
    void leave_repeated_changesNothingMore() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "client-b:7:1", "client-c:9:1");
        lua.redis.zadd(cond.signalled, (double) lua.farEnd(), "client-a:1:1");
        assertEquals(2L, (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "client-a:1:1", "0", "30000"));
        cond.assertSignals(() -> assertEquals(0L,
                (long) lua.run(Script.COND_LEAVE, cond.leaveKeys(), "client-a:1:1", "0", "30000")),
                List.of(), "client-a:1:1", "client-b:7:1", "client-c:9:1");
        assertEquals(List.of("client-c:9:1"), lua.redis.zrange(cond.queue, 0, -1), "only client-b:7:1 was signalled");
    }
}
