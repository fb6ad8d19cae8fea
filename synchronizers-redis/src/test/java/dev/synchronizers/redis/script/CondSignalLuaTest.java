package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code cond-signal.lua} against a real server, on a lock and a condition written by hand: a
 * signalled waiter is told {@code 'granted:<waiter>'} on its client's channel alone, never on the
 * condition's shared channel.
 */
@Tag("redis")
class CondSignalLuaTest extends LuaTestBase {

    @Test
    void signal_one_signalsTheOldestLiveWaiterSkippingOnesWhosePlaceRanOut() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("client-o:1", 7);
        long past = lua.serverMillis() - 1;
        cond.waiting(past, "client-dead:3:1");
        long live = lua.farEnd();
        cond.waiting(live, "client-b:7:1", "client-c:9:1");
        cond.assertSignals(() -> {
            List<Object> reply = lua.run(Script.COND_SIGNAL, cond.signalKeys(), "client-o:1", "7", "s-1", "1", "30000");
            assertEquals(List.of(1L, "client-b:7:1"), reply);
        }, List.of("client-b:7:1"), "client-dead:3:1", "client-c:9:1", "client-o:1");
        assertEquals(List.of("client-c:9:1"), lua.redis.zrange(cond.queue, 0, -1),
                "the dead one dropped, client-c:9:1 still waits");
        assertEquals(live, lua.redis.zscore(cond.signalled, "client-b:7:1").longValue(),
                "the signal keeps the place's end");
    }

    /**
     * Waiters of three clients wait, every client listening on its own channel: signal() tells the
     * oldest one's client alone, once, though that client has a second waiter further back; the
     * other two clients hear nothing.
     */
    @Test
    void signal_one_waitersOfThreeClients_tellsTheOldestWaitersClientAloneOnce() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("client-o:1", 7);
        cond.waiting(lua.farEnd(), "client-c:9:1", "client-b:7:1", "client-d:4:1", "client-c:2:1");
        lua.assertPublishes(Map.of(
                cond.wake, List.of(),
                cond.channelOf("client-c:9:1"), List.of("granted:client-c:9:1"),
                cond.channelOf("client-b:7:1"), List.of(),
                cond.channelOf("client-d:4:1"), List.of()), () -> {
                    List<Object> reply = lua.run(Script.COND_SIGNAL, cond.signalKeys(), "client-o:1", "7", "s-1", "1",
                            "30000");
                    assertEquals(List.of(1L, "client-c:9:1"), reply);
                });
        assertEquals(List.of("client-b:7:1", "client-d:4:1", "client-c:2:1"), lua.redis.zrange(cond.queue, 0, -1),
                "the others still wait");
        assertEquals(List.of("client-c:9:1"), lua.redis.zrange(cond.signalled, 0, -1));
    }

    @Test
    void signal_all_signalsEveryWaiter() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("client-o:1", 7);
        cond.waiting(lua.farEnd(), "client-b:7:1", "client-c:9:1", "client-d:4:1");
        cond.assertSignals(() -> {
            List<Object> reply = lua.run(Script.COND_SIGNAL, cond.signalKeys(), "client-o:1", "7", "s-1", "0", "30000");
            assertEquals(List.of(1L, "client-b:7:1", "client-c:9:1", "client-d:4:1"), reply);
        }, List.of("client-b:7:1", "client-c:9:1", "client-d:4:1"), "client-o:1");
        assertEquals(0L, lua.redis.exists(cond.queue));
        assertEquals(3L, lua.redis.zcard(cond.signalled));
    }

    /** A repeat of a signal (its reply was lost) is recognised by its id and signals nobody. */
    @Test
    void signal_repeatedId_signalsNobodyAgain() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("client-o:1", 7);
        cond.waiting(lua.farEnd(), "client-b:7:1", "client-c:9:1");
        assertEquals(List.of(1L, "client-b:7:1"),
                lua.run(Script.COND_SIGNAL, cond.signalKeys(), "client-o:1", "7", "s-1", "1", "30000"));
        cond.assertSignals(() -> assertEquals(List.of(2L),
                lua.run(Script.COND_SIGNAL, cond.signalKeys(), "client-o:1", "7", "s-1", "1", "30000")),
                List.of(), "client-b:7:1", "client-c:9:1");
        assertEquals(List.of("client-c:9:1"), lua.redis.zrange(cond.queue, 0, -1));
        assertNotNull(lua.redis.pttl(cond.signals));
    }

    /** Not the holder: nothing changes; nobody waiting: the signal is not remembered. */
    @Test
    void signal_notHeldOrNobodyWaiting_leavesNoSignal() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("client-o:1", 7);
        cond.waiting(lua.farEnd(), "client-b:7:1");
        cond.assertSignals(() -> assertEquals(List.of(0L),
                lua.run(Script.COND_SIGNAL, cond.signalKeys(), "client-o:1", "8", "s-1", "1", "30000")),
                List.of(), "client-b:7:1");
        assertEquals(1L, lua.redis.zcard(cond.queue));
        lua.redis.del(cond.queue, cond.places);
        assertEquals(List.of(1L),
                lua.run(Script.COND_SIGNAL, cond.signalKeys(), "client-o:1", "7", "s-2", "1", "30000"));
        assertEquals(0L, lua.redis.exists(cond.signalled), "nothing kept for a later waiter");
    }

    /** A signal whose waiter never took it up within its lease passes on to the oldest live waiter. */
    @Test
    void signal_expiredSignalOfADeadWaiter_passesOnBeforeItsOwn() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("client-o:1", 7);
        lua.redis.zadd(cond.signalled, (double) (lua.serverMillis() - 1), "client-dead:3:1");
        lua.redis.pexpire(cond.signalled, LuaHarness.LONG_LEASE_MS);
        cond.waiting(lua.farEnd(), "client-b:7:1", "client-c:9:1");
        cond.assertSignals(() -> {
            List<Object> reply = lua.run(Script.COND_SIGNAL, cond.signalKeys(), "client-o:1", "7", "s-1", "1", "30000");
            assertEquals(List.of(1L, "client-c:9:1"), reply,
                    "client-b:7:1 took the dead waiter's signal, client-c:9:1 this one");
        }, List.of("client-b:7:1", "client-c:9:1"), "client-dead:3:1");
        assertEquals(List.of("client-b:7:1", "client-c:9:1"), lua.redis.zrange(cond.signalled, 0, -1));
    }
}
