package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-try.lua} against a real server, on totals and holdings written by hand: a try
 * takes free permits regardless of any queue and never queues; 0 permits drains what is free.
 */
@Tag("redis")
class SemaphoreTryLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    /** The semaphore's keys; its queue is not a key of the script: a try ignores it. */
    private SemaphoreFixture sem;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
    }

    private List<Object> tryAcquire(String client, long permits, long leaseMs) throws Exception {
        return lua.run(Script.SEMAPHORE_TRY, new String[] {sem.total, sem.holds, sem.leases}, client,
                Long.toString(permits), Long.toString(leaseMs));
    }

    private List<Object> tryAcquire(String client, long permits) throws Exception {
        return tryAcquire(client, permits, LEASE_MS);
    }

    /** Books permits for a client whose lease ends at {@code leaseEndMs} (server time); the keys live long. */
    private void hold(String client, long permits, long leaseEndMs) {
        sem.hold(client, permits, leaseEndMs, LONG_LEASE_MS);
    }

    /** Asserts the holdings are exactly {@code fields}, and the leases name exactly {@code clients}. */
    private void assertHoldings(Map<String, String> fields, Set<String> clients) {
        assertEquals(fields, sem.holdings());
        assertEquals(clients, Set.copyOf(lua.redis.zrange(sem.leases, 0, -1)));
    }

    /* --------------- taking --------------- */

    @Test
    void try_freePermits_takesThemAndWritesHoldsAndLease() throws Exception {
        lua.redis.set(sem.total, "5");

        long before = lua.serverMillis();
        List<Object> reply = tryAcquire("c1", 2);
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 2L), reply);
        assertHoldings(Map.of("c1", "2", ":sum", "2"), Set.of("c1"));
        double end = lua.redis.zscore(sem.leases, "c1");
        assertTrue(end >= before + LEASE_MS && end <= after + LEASE_MS,
                () -> "lease end " + end + ", expected within [" + (before + LEASE_MS) + ", " + (after + LEASE_MS) + "]");
        lua.assertTtlSetSince(sem.holds, LEASE_MS, before);
        lua.assertTtlSetSince(sem.leases, LEASE_MS, before);
    }

    @Test
    void try_withQueuedWaiters_bargesAndLeavesTheQueueAlone() throws Exception {
        lua.redis.set(sem.total, "3");
        long end = lua.farEnd();
        lua.redis.zadd(sem.queue, 1, "c0:1");
        lua.redis.zadd(sem.places, end, "c0:1");

        assertEquals(List.of(1L, 1L), tryAcquire("c1", 1));

        assertHoldings(Map.of("c1", "1", ":sum", "1"), Set.of("c1"));
        assertEquals(List.of("c0:1"), sem.queueOrder());
        assertEquals((double) end, lua.redis.zscore(sem.places, "c0:1"));
    }

    /** The same try sent twice (a replay) takes once: the second run reports what the first took. */
    @Test
    void try_sameGrantTwice_takesOnce() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c2:1:1", 1, lua.farEnd());

        assertEquals(List.of(1L, 2L), tryAcquire("c1:1:1", 2));
        assertEquals(List.of(1L, 2L), tryAcquire("c1:1:1", 2));

        assertHoldings(Map.of("c1:1:1", "2", "c2:1:1", "1", ":sum", "3"), Set.of("c1:1:1", "c2:1:1"));
    }

    /** A try that runs after its acquisition was given up (semaphore-leave.lua) changes nothing. */
    @Test
    void try_afterTheAcquisitionWasGivenUp_returnsMinusTwoAndTakesNothing() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c1:1:1", 0, lua.farEnd());

        assertEquals(List.of(-2L, 0L), tryAcquire("c1:1:1", 2));

        assertEquals("0", lua.redis.hget(sem.holds, ":sum"));
    }

    @Test
    void try_shorterLeaseLater_doesNotShortenTheKeys() throws Exception {
        lua.redis.set(sem.total, "5");
        long before = lua.serverMillis();
        tryAcquire("c1", 1, LONG_LEASE_MS);

        assertEquals(List.of(1L, 1L), tryAcquire("c2", 1, LEASE_MS));

        lua.assertTtlSetSince(sem.holds, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(sem.leases, LONG_LEASE_MS, before);
    }

    /* --------------- refused --------------- */

    @Test
    void try_notEnough_returnsZeroZeroAndChangesNothing() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 2, lua.farEnd());

        assertEquals(List.of(0L, 0L), tryAcquire("c1", 2));

        assertHoldings(Map.of("holder", "2", ":sum", "2"), Set.of("holder"));
        assertEquals(0L, lua.redis.exists(sem.queue, sem.places), "a try never queues");
    }

    @Test
    void try_moreThanTheTotal_returnsMinusOneAndTheTotal() throws Exception {
        lua.redis.set(sem.total, "3");

        assertEquals(List.of(-1L, 3L), tryAcquire("c1", 4));

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases));
    }

    /* --------------- drain (0 permits) --------------- */

    @Test
    void try_drain_takesEveryAvailablePermit() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("holder", 2, lua.farEnd());

        assertEquals(List.of(1L, 3L), tryAcquire("c1", 0));

        assertHoldings(Map.of("holder", "2", "c1", "3", ":sum", "5"), Set.of("holder", "c1"));
    }

    @Test
    void try_drainWithNothingAvailable_takesNoneAndWritesNothing() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("holder", 2, lua.farEnd());

        assertEquals(List.of(1L, 0L), tryAcquire("c1", 0));

        assertHoldings(Map.of("holder", "2", ":sum", "2"), Set.of("holder"));
    }

    @Test
    void try_drainOfAZeroTotal_takesNoneAndCreatesNothing() throws Exception {
        lua.redis.set(sem.total, "0");

        assertEquals(List.of(1L, 0L), tryAcquire("c1", 0));

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases));
    }

    @Test
    void try_drainAfterTheTotalShrankBelowWhatIsHeld_takesNone() throws Exception {
        lua.redis.set(sem.total, "1");   // shrunk from 3 while holder kept its 3
        hold("holder", 3, lua.farEnd());

        // Header: "{1, taken} ... (for 0: every available permit, possibly none)".
        assertEquals(List.of(1L, 0L), tryAcquire("c1", 0));

        assertHoldings(Map.of("holder", "3", ":sum", "3"), Set.of("holder"));
    }

    /* --------------- purge --------------- */

    @Test
    void try_expiredClientLease_returnsItsPermitsToThePool() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("dead", 3, 0);   // stopped renewing long ago

        assertEquals(List.of(1L, 2L), tryAcquire("c1", 2));

        assertHoldings(Map.of("c1", "2", ":sum", "2"), Set.of("c1"));
    }

    @Test
    void try_expiredClientLeaseStillNotEnough_isPurgedAndNothingTaken() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("dead", 1, 0);
        hold("live", 2, lua.farEnd());

        assertEquals(List.of(0L, 0L), tryAcquire("c1", 2));

        assertHoldings(Map.of("live", "2", ":sum", "2"), Set.of("live"));
    }
}
