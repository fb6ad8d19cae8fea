package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code cond-await.lua} against a real server, on a lock and a condition written by hand. */
@Tag("redis")
class CondAwaitLuaTest extends LuaTestBase {

    @Test
    void await_holderRegisters_queuedBehindEarlierWaitersWithALeasedPlace() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("owner", 7);
        cond.waiting(lua.farEnd(), "w-earlier");
        long before = lua.serverMillis();
        Long reply = lua.run(Script.COND_AWAIT, cond.awaitKeys(), "owner", "7", "w-new", "30000");
        long after = lua.serverMillis();
        assertEquals(1L, reply);
        assertEquals(List.of("w-earlier", "w-new"), lua.redis.zrange(cond.queue, 0, -1));
        lua.assertEndWithin(cond.places, "w-new", before + 30_000, after + 30_000);
        assertEquals(1L, (long) lua.run(Script.COND_AWAIT, cond.awaitKeys(), "owner", "7", "w-new", "30000"),
                "a repeat changes nothing");
        assertEquals(2L, lua.redis.zcard(cond.queue));
    }

    /** The hold is checked in the same script: a caller whose hold is gone (or another token) registers nothing. */
    @Test
    void await_tokenNotTheHolds_changesNothing() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("owner", 7);
        assertEquals(0L, (long) lua.run(Script.COND_AWAIT, cond.awaitKeys(), "owner", "6", "w", "30000"));
        assertEquals(0L, (long) lua.run(Script.COND_AWAIT, cond.awaitKeys(), "other", "7", "w", "30000"));
        assertEquals(0L, lua.redis.exists(cond.queue, cond.places));
    }

    /** A waiter already signalled (a repeat after the signal) is not queued again. */
    @Test
    void await_alreadySignalled_isNotQueuedAgain() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.held("owner", 7);
        lua.redis.zadd(cond.signalled, (double) lua.farEnd(), "w");
        assertEquals(1L, (long) lua.run(Script.COND_AWAIT, cond.awaitKeys(), "owner", "7", "w", "30000"));
        assertNull(lua.redis.zscore(cond.queue, "w"));
        assertNotNull(lua.redis.zscore(cond.signalled, "w"));
    }
}
