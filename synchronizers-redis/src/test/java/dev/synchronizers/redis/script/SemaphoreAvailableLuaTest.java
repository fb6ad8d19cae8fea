package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-available.lua} against a real server, on totals and holdings written by hand:
 * the total less what live clients hold, after returning run-out leases' permits to the pool.
 */
@Tag("redis")
class SemaphoreAvailableLuaTest extends LuaTestBase {

    private SemaphoreFixture sem;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
    }

    /** Books permits for a client whose lease ends at {@code leaseEndMs} (server time); the keys live long. */
    private void hold(String client, long permits, long leaseEndMs) {
        sem.hold(client, permits, leaseEndMs, LONG_LEASE_MS);
    }

    private long available() throws Exception {
        return lua.<Long>run(Script.SEMAPHORE_AVAILABLE, new String[] {sem.total, sem.holds, sem.leases});
    }

    @Test
    void available_nothingHeld_isTheTotal() throws Exception {
        lua.redis.set(sem.total, "5");

        assertEquals(5L, available());

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases), "nothing is created");
    }

    @Test
    void available_liveHoldings_areSubtracted() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c1", 2, lua.farEnd());
        hold("c2", 1, lua.farEnd());

        assertEquals(2L, available());

        assertEquals(Map.of("c1", "2", "c2", "1", ":sum", "3"), sem.holdings(), "nothing is changed");
        assertEquals(List.of("c1", "c2"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void available_runOutLease_isPurgedAndItsPermitsCountAsFree() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("dead", 3, 0);   // stopped renewing long ago
        hold("live", 1, lua.farEnd());

        assertEquals(4L, available());

        assertEquals(Map.of("live", "1", ":sum", "1"), sem.holdings());
        assertEquals(List.of("live"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void available_afterTheTotalShrankBelowWhatIsHeld_isNegative() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 3, lua.farEnd());

        assertEquals(-2L, available());
    }

    @Test
    void available_absentTotal_isZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, available());

        assertEquals(0L, lua.redis.exists(sem.total, sem.holds, sem.leases));
    }

    /**
     * A given-up mark (a grant at 0 permits) whose lease ran out is purged like any grant. Lua
     * writes minus zero as "-0", which HINCRBY refuses: the purge must not subtract by negation.
     */
    @Test
    void available_runOutGivenUpMark_isPurgedWithoutError() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("given-up", 0, 0);
        hold("live", 1, lua.farEnd());

        assertEquals(4L, available());

        assertEquals(Map.of("live", "1", ":sum", "1"), sem.holdings(), "the mark is gone");
    }
}
