package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.synchronizers.testkit.RedisExtension;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code semaphore-available.lua} against a real server, on totals and holdings written by hand:
 * the total less what live clients hold, after returning run-out leases' permits to the pool.
 */
@Tag("redis")
class SemaphoreAvailableLuaTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String total;
    private String holds;
    private String leases;

    @BeforeAll
    static void connect() {
        lua = LuaHarness.connect(redis.server().uri());
    }

    @AfterAll
    static void disconnect() {
        if (lua != null) {
            lua.close();
        }
    }

    @BeforeEach
    void names(TestInfo test) {
        String base = LuaHarness.uniqueName(test);
        total = base + ":total";
        holds = base + ":holds";
        leases = base + ":leases";
    }

    /** Books permits for a client whose lease ends at {@code leaseEndMs} (server time). */
    private void hold(String client, long permits, long leaseEndMs) {
        lua.redis.hincrby(holds, client, permits);
        lua.redis.hincrby(holds, ":sum", permits);
        lua.redis.zadd(leases, leaseEndMs, client);
        lua.redis.pexpire(holds, LONG_LEASE_MS);
        lua.redis.pexpire(leases, LONG_LEASE_MS);
    }

    private long farEnd() {
        return lua.serverMillis() + LONG_LEASE_MS;
    }

    private long available() throws Exception {
        return lua.<Long>run(Script.SEMAPHORE_AVAILABLE, new String[] {total, holds, leases});
    }

    @Test
    void available_nothingHeld_isTheTotal() throws Exception {
        lua.redis.set(total, "5");

        assertEquals(5L, available());

        assertEquals(0L, lua.redis.exists(holds, leases), "nothing is created");
    }

    @Test
    void available_liveHoldings_areSubtracted() throws Exception {
        lua.redis.set(total, "5");
        hold("c1", 2, farEnd());
        hold("c2", 1, farEnd());

        assertEquals(2L, available());

        assertEquals(Map.of("c1", "2", "c2", "1", ":sum", "3"), lua.redis.hgetall(holds), "nothing is changed");
        assertEquals(List.of("c1", "c2"), lua.redis.zrange(leases, 0, -1));
    }

    @Test
    void available_runOutLease_isPurgedAndItsPermitsCountAsFree() throws Exception {
        lua.redis.set(total, "5");
        hold("dead", 3, 0);   // stopped renewing long ago
        hold("live", 1, farEnd());

        assertEquals(4L, available());

        assertEquals(Map.of("live", "1", ":sum", "1"), lua.redis.hgetall(holds));
        assertEquals(List.of("live"), lua.redis.zrange(leases, 0, -1));
    }

    @Test
    void available_afterTheTotalShrankBelowWhatIsHeld_isNegative() throws Exception {
        lua.redis.set(total, "1");
        hold("c1", 3, farEnd());

        assertEquals(-2L, available());
    }

    @Test
    void available_absentTotal_isZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, available());

        assertEquals(0L, lua.redis.exists(total, holds, leases));
    }
}
