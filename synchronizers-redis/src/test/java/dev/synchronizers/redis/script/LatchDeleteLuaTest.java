package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code latch-delete.lua} against a real server: deleting a latch still counting down releases
 * its waiters; a latch at zero (absent) is left so, silently.
 */
@Tag("redis")
class LatchDeleteLuaTest extends LuaTestBase {

    private String latch;
    private String wakeups;

    @BeforeEach
    void names() {
        latch = base + ":latch";
        wakeups = base + ":wake";
    }

    private long delete() throws Exception {
        return lua.<Long>run(Script.LATCH_DELETE, new String[] {latch, wakeups});
    }

    @Test
    void delete_latchCountingDown_deletesItPublishesReleasedAndReturnsOne() throws Exception {
        lua.redis.set(latch, "3");

        lua.assertPublishes(wakeups, () -> assertEquals(1L, delete()), "released");

        assertEquals(0L, lua.redis.exists(latch));
    }

    @Test
    void delete_absentLatch_returnsZeroAndPublishesNothing() throws Exception {
        lua.assertPublishes(wakeups, () -> assertEquals(0L, delete()));

        assertEquals(0L, lua.redis.exists(latch));
    }

    @Test
    void delete_twice_releasesOnce() throws Exception {
        lua.redis.set(latch, "1");

        lua.assertPublishes(wakeups, () -> {
            assertEquals(1L, delete());
            assertEquals(0L, delete());
        }, "released");
    }
}
