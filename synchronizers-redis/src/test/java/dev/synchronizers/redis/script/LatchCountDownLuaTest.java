package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code latch-count-down.lua} against a real server: each call decrements; the one that reaches
 * zero deletes the latch and publishes {@code released}; a latch at zero (absent) stays so, silently.
 */
@Tag("redis")
class LatchCountDownLuaTest extends LuaTestBase {

    private String latch;
    private String wakeups;

    @BeforeEach
    void names() {
        latch = base + ":latch";
        wakeups = base + ":wake";
    }

    private long countDown() throws Exception {
        return lua.<Long>run(Script.LATCH_COUNT_DOWN, new String[] {latch, wakeups});
    }

    @Test
    void countDown_aboveOne_decrementsAndPublishesNothing() throws Exception {
        lua.redis.set(latch, "3");

        lua.assertPublishes(wakeups, () -> assertEquals(2L, countDown()));

        assertEquals("2", lua.redis.get(latch));
    }

    @Test
    void countDown_fromOne_deletesTheLatchAndPublishesReleased() throws Exception {
        lua.redis.set(latch, "1");

        lua.assertPublishes(wakeups, () -> assertEquals(0L, countDown()), "released");

        assertEquals(0L, lua.redis.exists(latch), "a latch at zero leaves no key behind");
    }

    @Test
    void countDown_absentLatch_returnsZeroPublishesNothingAndCreatesNothing() throws Exception {
        lua.assertPublishes(wakeups, () -> assertEquals(0L, countDown()));

        assertEquals(0L, lua.redis.exists(latch));
    }

    @Test
    void countDown_toZeroAndBeyond_releasesExactlyOnce() throws Exception {
        lua.redis.set(latch, "3");

        lua.assertPublishes(wakeups, () -> {
            assertEquals(2L, countDown());
            assertEquals(1L, countDown());
            assertEquals(0L, countDown());
            assertEquals(0L, countDown());
            assertEquals(0L, countDown());
        }, "released");

        assertEquals(0L, lua.redis.exists(latch));
    }
}
