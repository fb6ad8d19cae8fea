package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code semaphore-set.lua} against a real server: the total is set once and persists. */
@Tag("redis")
class SemaphoreSetLuaTest extends LuaTestBase {

    private String total;
    private String holds;

    @BeforeEach
    void names() {
        total = base + ":total";
        holds = base + ":holds";
    }

    private long set(long permits) throws Exception {
        return lua.<Long>run(Script.SEMAPHORE_SET, new String[] {total, holds}, Long.toString(permits));
    }

    @Test
    void set_absentTotal_setsItWithoutTtlAndReturnsOne() throws Exception {
        assertEquals(1L, set(5));

        assertEquals("5", lua.redis.get(total));
        assertEquals(-1L, lua.redis.pttl(total), "the total persists until deleted");
    }

    @Test
    void set_totalAlreadySet_returnsZeroAndKeepsIt() throws Exception {
        lua.redis.set(total, "3");

        assertEquals(0L, set(5));

        assertEquals("3", lua.redis.get(total));
        assertEquals(-1L, lua.redis.pttl(total));
    }

    @Test
    void set_secondCall_isRefused() throws Exception {
        assertEquals(1L, set(2));

        assertEquals(0L, set(7));

        assertEquals("2", lua.redis.get(total));
    }

    @Test
    void set_zero_isSetAndCountsAsSet() throws Exception {
        assertEquals(1L, set(0));
        assertEquals("0", lua.redis.get(total));

        assertEquals(0L, set(4), "a total of zero is set all the same");

        assertEquals("0", lua.redis.get(total));
    }
}
