package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code cond-signal.lua} against a real server, on a lock and a condition written by hand. */
@Tag("redis")
class CondSignalLuaTest extends LuaTestBase {

    @Test
    void signal_one_signalsTheOldestLiveWaiterSkippingOnesWhosePlaceRanOut() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("owner", 7);
        long past = lua.serverMillis() - 1;
        cond.waiting(past, "w-dead");
        long live = lua.farEnd();
        cond.waiting(live, "w-1", "w-2");
        lua.assertPublishes(cond.wake, () -> {
            List<Object> reply = lua.run(Script.COND_SIGNAL, cond.signalKeys(), "owner", "7", "s-1", "1", "30000");
            assertEquals(List.of(1L, "w-1"), reply);
        }, "granted:w-1");
        assertEquals(List.of("w-2"), lua.redis.zrange(cond.queue, 0, -1), "the dead one dropped, w-2 still waits");
        assertEquals(live, lua.redis.zscore(cond.signalled, "w-1").longValue(), "the signal keeps the place's end");
    }

    @Test
    void signal_all_signalsEveryWaiter() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("owner", 7);
        cond.waiting(lua.farEnd(), "w-1", "w-2", "w-3");
        lua.assertPublishes(cond.wake, () -> {
            List<Object> reply = lua.run(Script.COND_SIGNAL, cond.signalKeys(), "owner", "7", "s-1", "0", "30000");
            assertEquals(List.of(1L, "w-1", "w-2", "w-3"), reply);
        }, "granted:w-1", "granted:w-2", "granted:w-3");
        assertEquals(0L, lua.redis.exists(cond.queue));
        assertEquals(3L, lua.redis.zcard(cond.signalled));
    }

    /** A repeat of a signal (its reply was lost) is recognised by its id and signals nobody. */
    @Test
    void signal_repeatedId_signalsNobodyAgain() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("owner", 7);
        cond.waiting(lua.farEnd(), "w-1", "w-2");
        assertEquals(List.of(1L, "w-1"), lua.run(Script.COND_SIGNAL, cond.signalKeys(), "owner", "7", "s-1", "1", "30000"));
        assertEquals(List.of(2L), lua.run(Script.COND_SIGNAL, cond.signalKeys(), "owner", "7", "s-1", "1", "30000"));
        assertEquals(List.of("w-2"), lua.redis.zrange(cond.queue, 0, -1));
        assertNotNull(lua.redis.pttl(cond.signals));
    }

    /** Not the holder: nothing changes; nobody waiting: the signal is not remembered. */
    @Test
    void signal_notHeldOrNobodyWaiting_leavesNoSignal() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("owner", 7);
        cond.waiting(lua.farEnd(), "w-1");
        assertEquals(List.of(0L), lua.run(Script.COND_SIGNAL, cond.signalKeys(), "owner", "8", "s-1", "1", "30000"));
        assertEquals(1L, lua.redis.zcard(cond.queue));
        lua.redis.del(cond.queue, cond.places);
        assertEquals(List.of(1L), lua.run(Script.COND_SIGNAL, cond.signalKeys(), "owner", "7", "s-2", "1", "30000"));
        assertEquals(0L, lua.redis.exists(cond.signalled), "nothing kept for a later waiter");
    }

    /** A signal whose waiter never took it up within its lease passes on to the oldest live waiter. */
    @Test
    void signal_expiredSignalOfADeadWaiter_passesOnBeforeItsOwn() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("owner", 7);
        lua.redis.zadd(cond.signalled, (double) (lua.serverMillis() - 1), "w-dead");
        lua.redis.pexpire(cond.signalled, LuaHarness.LONG_LEASE_MS);
        cond.waiting(lua.farEnd(), "w-1", "w-2");
        List<Object> reply = lua.run(Script.COND_SIGNAL, cond.signalKeys(), "owner", "7", "s-1", "1", "30000");
        assertEquals(List.of(1L, "w-2"), reply, "w-1 took the dead waiter's signal, w-2 this one");
        assertEquals(List.of("w-1", "w-2"), lua.redis.zrange(cond.signalled, 0, -1));
    }
}
