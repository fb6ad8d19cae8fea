package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code latch-count-down.lua} against a real server: each call decrements; the one that reaches
 * zero deletes the latch and publishes {@code released}; a latch at zero (absent) stays so, silently.
 */
@Tag("redis")
class LatchCountDownLuaTest extends LuaTestBase {

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

    private long countDown() throws Exception {
        return lua.<Long>run(Script.LATCH_COUNT_DOWN, new String[] {latch, epoch, wakeups}, Long.toString(KEEP_MS));
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

    /** Reaching zero marks the crossing with the server's time, leased keep_ms, so late waiters still learn of it. */
    @Test
    void countDown_toZero_setsTheEpochToTheServerTimeForKeepMs() throws Exception {
        lua.redis.set(latch, "1");
        long beforeUs = lua.serverMillis() * 1000;

        assertEquals(0L, countDown());

        long first = Long.parseLong(lua.redis.get(epoch));
        assertTrue(first >= beforeUs, "the epoch is the crossing's server time: " + first);
        lua.assertTtlAtMost(epoch, KEEP_MS);
        assertTrue(lua.redis.pttl(epoch) > 0, "the epoch is leased");
    }

    /** Every crossing's epoch is later than the one before, even if the clock has not moved on. */
    @Test
    void countDown_secondCrossing_raisesTheEpoch() throws Exception {
        lua.redis.set(epoch, Long.toString(Long.MAX_VALUE / 1024));   // as if the clock had stepped back
        lua.redis.set(latch, "1");

        assertEquals(0L, countDown());

        assertEquals(Long.toString(Long.MAX_VALUE / 1024 + 1), lua.redis.get(epoch));
    }

    @Test
    void countDown_notReachingZero_leavesTheEpochAlone() throws Exception {
        lua.redis.set(latch, "2");

        assertEquals(1L, countDown());

        assertEquals(0L, lua.redis.exists(epoch));
    }
}
