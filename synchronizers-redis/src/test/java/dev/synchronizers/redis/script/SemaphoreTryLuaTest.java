package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.testkit.RedisExtension;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code semaphore-try.lua} against a real server, on totals and holdings written by hand: a try
 * takes free permits regardless of any queue and never queues; 0 permits drains what is free.
 */
@Tag("redis")
class SemaphoreTryLuaTest {

    private static final long LEASE_MS = 60_000;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String total;
    private String holds;
    private String leases;
    /** A queue of the same semaphore, not a key of the script: a try ignores it. */
    private String queue;
    private String places;

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
        queue = base + ":queue";
        places = base + ":places";
    }

    private List<Object> tryAcquire(String client, long permits, long leaseMs) throws Exception {
        return lua.run(Script.SEMAPHORE_TRY, new String[] {total, holds, leases}, client, Long.toString(permits),
                Long.toString(leaseMs));
    }

    private List<Object> tryAcquire(String client, long permits) throws Exception {
        return tryAcquire(client, permits, LEASE_MS);
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

    /** Asserts the holdings are exactly {@code fields}, and the leases name exactly {@code clients}. */
    private void assertHoldings(Map<String, String> fields, Set<String> clients) {
        assertEquals(fields, lua.redis.hgetall(holds));
        assertEquals(clients, Set.copyOf(lua.redis.zrange(leases, 0, -1)));
    }

    /* --------------- taking --------------- */

    @Test
    void try_freePermits_takesThemAndWritesHoldsAndLease() throws Exception {
        lua.redis.set(total, "5");

        long before = lua.serverMillis();
        List<Object> reply = tryAcquire("c1", 2);
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 2L), reply);
        assertHoldings(Map.of("c1", "2", ":sum", "2"), Set.of("c1"));
        double end = lua.redis.zscore(leases, "c1");
        assertTrue(end >= before + LEASE_MS && end <= after + LEASE_MS,
                () -> "lease end " + end + ", expected within [" + (before + LEASE_MS) + ", " + (after + LEASE_MS) + "]");
        lua.assertTtlSetSince(holds, LEASE_MS, before);
        lua.assertTtlSetSince(leases, LEASE_MS, before);
    }

    @Test
    void try_withQueuedWaiters_bargesAndLeavesTheQueueAlone() throws Exception {
        lua.redis.set(total, "3");
        long end = farEnd();
        lua.redis.zadd(queue, 1, "c0:1");
        lua.redis.zadd(places, end, "c0:1");

        assertEquals(List.of(1L, 1L), tryAcquire("c1", 1));

        assertHoldings(Map.of("c1", "1", ":sum", "1"), Set.of("c1"));
        assertEquals(List.of("c0:1"), lua.redis.zrange(queue, 0, -1));
        assertEquals((double) end, lua.redis.zscore(places, "c0:1"));
    }

    @Test
    void try_clientAlreadyHolding_addsUp() throws Exception {
        lua.redis.set(total, "5");
        hold("c1", 2, farEnd());
        hold("c2", 1, farEnd());

        assertEquals(List.of(1L, 2L), tryAcquire("c1", 2));

        assertHoldings(Map.of("c1", "4", "c2", "1", ":sum", "5"), Set.of("c1", "c2"));
    }

    @Test
    void try_shorterLeaseLater_doesNotShortenTheKeys() throws Exception {
        lua.redis.set(total, "5");
        long before = lua.serverMillis();
        tryAcquire("c1", 1, LONG_LEASE_MS);

        assertEquals(List.of(1L, 1L), tryAcquire("c2", 1, LEASE_MS));

        lua.assertTtlSetSince(holds, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(leases, LONG_LEASE_MS, before);
    }

    /* --------------- refused --------------- */

    @Test
    void try_notEnough_returnsZeroZeroAndChangesNothing() throws Exception {
        lua.redis.set(total, "3");
        hold("holder", 2, farEnd());

        assertEquals(List.of(0L, 0L), tryAcquire("c1", 2));

        assertHoldings(Map.of("holder", "2", ":sum", "2"), Set.of("holder"));
        assertEquals(0L, lua.redis.exists(queue, places), "a try never queues");
    }

    @Test
    void try_moreThanTheTotal_returnsMinusOneAndTheTotal() throws Exception {
        lua.redis.set(total, "3");

        assertEquals(List.of(-1L, 3L), tryAcquire("c1", 4));

        assertEquals(0L, lua.redis.exists(holds, leases));
    }

    /* --------------- drain (0 permits) --------------- */

    @Test
    void try_drain_takesEveryAvailablePermit() throws Exception {
        lua.redis.set(total, "5");
        hold("holder", 2, farEnd());

        assertEquals(List.of(1L, 3L), tryAcquire("c1", 0));

        assertHoldings(Map.of("holder", "2", "c1", "3", ":sum", "5"), Set.of("holder", "c1"));
    }

    @Test
    void try_drainWithNothingAvailable_takesNoneAndWritesNothing() throws Exception {
        lua.redis.set(total, "2");
        hold("holder", 2, farEnd());

        assertEquals(List.of(1L, 0L), tryAcquire("c1", 0));

        assertHoldings(Map.of("holder", "2", ":sum", "2"), Set.of("holder"));
    }

    @Test
    void try_drainOfAZeroTotal_takesNoneAndCreatesNothing() throws Exception {
        lua.redis.set(total, "0");

        assertEquals(List.of(1L, 0L), tryAcquire("c1", 0));

        assertEquals(0L, lua.redis.exists(holds, leases));
    }

    @Test
    void try_drainAfterTheTotalShrankBelowWhatIsHeld_takesNone() throws Exception {
        lua.redis.set(total, "1");   // shrunk from 3 while holder kept its 3
        hold("holder", 3, farEnd());

        // Header: "{1, taken} ... (for 0: every available permit, possibly none)".
        assertEquals(List.of(1L, 0L), tryAcquire("c1", 0));

        assertHoldings(Map.of("holder", "3", ":sum", "3"), Set.of("holder"));
    }

    /* --------------- purge --------------- */

    @Test
    void try_expiredClientLease_returnsItsPermitsToThePool() throws Exception {
        lua.redis.set(total, "3");
        hold("dead", 3, 0);   // stopped renewing long ago

        assertEquals(List.of(1L, 2L), tryAcquire("c1", 2));

        assertHoldings(Map.of("c1", "2", ":sum", "2"), Set.of("c1"));
    }

    @Test
    void try_expiredClientLeaseStillNotEnough_isPurgedAndNothingTaken() throws Exception {
        lua.redis.set(total, "3");
        hold("dead", 1, 0);
        hold("live", 2, farEnd());

        assertEquals(List.of(0L, 0L), tryAcquire("c1", 2));

        assertHoldings(Map.of("live", "2", ":sum", "2"), Set.of("live"));
    }
}
