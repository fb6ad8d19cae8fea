package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code latch-set.lua} against a real server: a count is set only on a latch at zero (absent). */
@Tag("redis")
class LatchSetLuaTest extends LuaTestBase {

    private String latch;

    @BeforeEach
    void names() {
        latch = base + ":latch";
    }

    private long set(long count) throws Exception {
        return lua.<Long>run(Script.LATCH_SET, new String[] {latch}, Long.toString(count));
    }

    @Test
    void set_absentLatch_setsTheCountAndReturnsOne() throws Exception {
        assertEquals(1L, set(3));

        assertEquals("3", lua.redis.get(latch));
    }

    @Test
    void set_latchStillCountingDown_returnsZeroAndKeepsTheCount() throws Exception {
        lua.redis.set(latch, "2");

        assertEquals(0L, set(5));

        assertEquals("2", lua.redis.get(latch));
    }

    @Test
    void set_afterTheLatchReachedZero_setsItAgain() throws Exception {
        assertEquals(1L, set(1));
        assertEquals(0L, set(4));
        lua.redis.del(latch);   // the count down to zero, by hand: a latch at zero has no key

        assertEquals(1L, set(4));

        assertEquals("4", lua.redis.get(latch));
    }
}
