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

    /** How long the epoch of a crossing is kept in these tests. */
    private static final long KEEP_MS = 60_000;

    private String latch;
    private String epoch;
    private String wakeups;

    @BeforeEach
    void names() {
        latch = base + ":latch";
        epoch = base + ":epoch";
        wakeups = base + ":wake";
    }

    private long delete() throws Exception {
        return lua.<Long>run(Script.LATCH_DELETE, new String[] {latch, epoch, wakeups}, Long.toString(KEEP_MS));
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

    /** A deletion marks a crossing like a count-down to zero does, for waiters that look late. */
    @Test
    void delete_latchCountingDown_setsTheEpoch() throws Exception {
        lua.redis.set(latch, "2");

        assertEquals(1L, delete());

        assertEquals(1L, lua.redis.exists(epoch));
    }
}
