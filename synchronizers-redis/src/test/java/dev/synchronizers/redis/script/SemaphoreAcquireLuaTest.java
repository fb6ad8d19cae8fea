package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-acquire.lua} against a real server, on totals, holdings and queues written by
 * hand: the holdings and leases an acquire writes, the queue a short attempt joins (FIFO, places
 * leased in server time), the wait it is told, and the purge of expired leases and places. With
 * permits left over after it is served, it wakes the next in line by name (a waiter woken together
 * with it by a release may have tried too early); otherwise it publishes nothing.
 *
 * <p>Times are checked against the server's clock read just before and after a call: a lease the
 * script sets at its own {@code TIME} ends between the two readings plus the lease.
 */
@Tag("redis")
class SemaphoreAcquireLuaTest extends LuaTestBase {

    /** The lease on permits of most attempts: shorter than {@link LuaHarness#LONG_LEASE_MS}. */
    private static final long LEASE_MS = 60_000;
    /** The place lease of most attempts: shorter than {@link #LEASE_MS}. */
    private static final long PLACE_MS = 30_000;

    private SemaphoreFixture sem;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
    }

    private String[] keys() {
        return new String[] {sem.total, sem.holds, sem.leases, sem.queue, sem.places, sem.wakeups};
    }

    private List<Object> acquire(String client, String waiter, long permits, long leaseMs, long placeMs)
            throws Exception {
        return lua.run(Script.SEMAPHORE_ACQUIRE, keys(), client, waiter, Long.toString(permits),
                Long.toString(leaseMs), Long.toString(placeMs));
    }

    private List<Object> acquire(String client, String waiter, long permits) throws Exception {
        return acquire(client, waiter, permits, LEASE_MS, PLACE_MS);
    }

    /** Attempts for a waiter that must be queued (the reply's first element is 0); returns the wait. */
    private long queuedAttempt(String client, String waiter, long permits, long placeMs) throws Exception {
        List<Object> reply = acquire(client, waiter, permits, LEASE_MS, placeMs);
        assertEquals(0L, reply.get(0), () -> waiter + " should be queued, replied " + reply);
        return (Long) reply.get(1);
    }

    /** Books permits for a client whose lease ends at {@code leaseEndMs} (server time); the keys live long. */
    private void hold(String client, long permits, long leaseEndMs) {
        sem.hold(client, permits, leaseEndMs, LONG_LEASE_MS);
    }

    /** Queues a waiter at {@code order} whose place ends at {@code placeEndMs} (server time); the keys live long. */
    private void queued(String waiter, long order, long placeEndMs) {
        sem.queued(waiter, order, placeEndMs);
        lua.redis.pexpire(sem.queue, LONG_LEASE_MS);
        lua.redis.pexpire(sem.places, LONG_LEASE_MS);
    }

    private static void assertWithin(String what, double value, long fromMs, long toMs) {
        assertTrue(value >= fromMs && value <= toMs,
                () -> what + " is " + value + ", expected within [" + fromMs + ", " + toMs + "]");
    }

    /* --------------- more than the total --------------- */

    @Test
    void acquire_moreThanTheTotal_returnsMinusOneAndTheTotalAndWritesNothing() throws Exception {
        lua.redis.set(sem.total, "3");

        assertEquals(List.of(-1L, 3L), acquire("c1", "c1:1", 4));

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases, sem.queue, sem.places), "nothing is held or queued");
        assertEquals("3", lua.redis.get(sem.total));
    }

    @Test
    void acquire_absentTotal_countsAsZero() throws Exception {
        assertEquals(List.of(-1L, 0L), acquire("c1", "c1:1", 1));

        assertEquals(0L, lua.redis.exists(sem.total, sem.holds, sem.leases, sem.queue, sem.places));
    }

    @Test
    void acquire_queuedWaiterAfterTheTotalShrank_returnsMinusOneAndLeavesTheQueue() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 3, lua.farEnd());
        queuedAttempt("c1", "c1:1", 2, PLACE_MS);
        queuedAttempt("c2", "c2:1", 1, PLACE_MS);
        lua.redis.set(sem.total, "1");   // shrunk by hand

        assertEquals(List.of(-1L, 1L), acquire("c1", "c1:1", 2));

        assertEquals(List.of("c2:1"), sem.queueOrder(), "the refused waiter is not left queued");
        assertEquals(List.of("c2:1"), lua.redis.zrange(sem.places, 0, -1));
        assertEquals(Map.of("holder", "3", ":sum", "3"), lua.redis.hgetall(sem.holds));
    }

    /* --------------- free permits, empty queue --------------- */

    @Test
    void acquire_freePermitsEmptyQueue_acquiresAndWritesHoldsAndLease() throws Exception {
        lua.redis.set(sem.total, "5");

        long before = lua.serverMillis();
        List<Object> reply = acquire("c1", "c1:1", 2);
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 3L), reply, "acquired, 3 left for others");
        assertEquals(Map.of("c1", "2", ":sum", "2"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("c1"), lua.redis.zrange(sem.leases, 0, -1));
        assertWithin("c1's lease end", lua.redis.zscore(sem.leases, "c1"), before + LEASE_MS, after + LEASE_MS);
        lua.assertTtlSetSince(sem.holds, LEASE_MS, before);
        lua.assertTtlSetSince(sem.leases, LEASE_MS, before);
        assertEquals(0L, lua.redis.exists(sem.queue, sem.places), "the waiter is not queued");
        assertEquals("5", lua.redis.get(sem.total));
        assertEquals(-1L, lua.redis.pttl(sem.total), "the total keeps no TTL");
    }

    @Test
    void acquire_allPermits_leavesZero() throws Exception {
        lua.redis.set(sem.total, "3");

        assertEquals(List.of(1L, 0L), acquire("c1", "c1:1", 3));

        assertEquals(Map.of("c1", "3", ":sum", "3"), lua.redis.hgetall(sem.holds));
    }

    @Test
    void acquire_twoThreadsOfOneClient_addUpUnderTheClient() throws Exception {
        lua.redis.set(sem.total, "5");

        assertEquals(List.of(1L, 3L), acquire("c1", "c1:1", 2));
        assertEquals(List.of(1L, 2L), acquire("c1", "c1:2", 1));

        assertEquals(Map.of("c1", "3", ":sum", "3"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("c1"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void acquire_twoClients_eachHasItsFieldAndLease() throws Exception {
        lua.redis.set(sem.total, "5");

        assertEquals(List.of(1L, 3L), acquire("c1", "c1:1", 2));
        assertEquals(List.of(1L, 2L), acquire("c2", "c2:1", 1));

        assertEquals(Map.of("c1", "2", "c2", "1", ":sum", "3"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("c1", "c2"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void acquire_shorterLeaseLater_doesNotShortenTheKeys() throws Exception {
        lua.redis.set(sem.total, "5");
        long before = lua.serverMillis();
        acquire("c1", "c1:1", 1, LONG_LEASE_MS, PLACE_MS);

        long second = lua.serverMillis();
        assertEquals(1L, acquire("c2", "c2:1", 1, LEASE_MS, PLACE_MS).get(0));
        long after = lua.serverMillis();

        lua.assertTtlSetSince(sem.holds, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(sem.leases, LONG_LEASE_MS, before);
        assertWithin("c2's lease end", lua.redis.zscore(sem.leases, "c2"), second + LEASE_MS, after + LEASE_MS);
    }

    @Test
    void acquire_withEmptyQueue_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "5");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 4L), acquire("c1", "c1:1", 1)));
    }

    /* --------------- not enough: queueing --------------- */

    @Test
    void acquire_notEnough_queuesAtTheTailWithAPlaceLeasedInServerTime() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 2, lua.farEnd());

        long before = lua.serverMillis();
        queuedAttempt("c1", "c1:1", 2, PLACE_MS);
        long after = lua.serverMillis();

        assertEquals(List.of("c1:1"), sem.queueOrder());
        assertWithin("c1:1's place end", lua.redis.zscore(sem.places, "c1:1"), before + PLACE_MS, after + PLACE_MS);
        lua.assertTtlSetSince(sem.queue, PLACE_MS, before);
        lua.assertTtlSetSince(sem.places, PLACE_MS, before);
        assertEquals(Map.of("holder", "2", ":sum", "2"), lua.redis.hgetall(sem.holds), "nothing is acquired");
        assertEquals(List.of("holder"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void acquire_threeWaitersWhileShort_queueInArrivalOrder() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());

        for (String waiter : List.of("c3:1", "c1:1", "c2:1")) {
            queuedAttempt(waiter.substring(0, 2), waiter, 1, PLACE_MS);
        }

        // Not alphabetical: the order they came in.
        assertEquals(List.of("c3:1", "c1:1", "c2:1"), sem.queueOrder());
        List<ScoredValue<String>> scores = lua.redis.zrangeWithScores(sem.queue, 0, -1);
        assertTrue(scores.get(0).getScore() < scores.get(1).getScore()
                && scores.get(1).getScore() < scores.get(2).getScore(), () -> "arrival scores " + scores);
        assertEquals(3L, lua.redis.zcard(sem.places), "every queued waiter has a place");
    }

    @Test
    void acquire_queuedWaiterTriesAgain_keepsItsPositionAndRefreshesItsPlace() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        queuedAttempt("c1", "c1:1", 1, PLACE_MS);
        queuedAttempt("c2", "c2:1", 1, PLACE_MS);
        Double arrival = lua.redis.zscore(sem.queue, "c1:1");

        // A longer place lease on the retry: the new end cannot be mistaken for the old one.
        long before = lua.serverMillis();
        queuedAttempt("c1", "c1:1", 1, LONG_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(List.of("c1:1", "c2:1"), sem.queueOrder());
        assertEquals(arrival, lua.redis.zscore(sem.queue, "c1:1"), "the arrival order is kept");
        assertWithin("c1:1's place end", lua.redis.zscore(sem.places, "c1:1"), before + LONG_LEASE_MS,
                after + LONG_LEASE_MS);
        lua.assertTtlSetSince(sem.queue, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(sem.places, LONG_LEASE_MS, before);
    }

    /* --------------- not enough: the wait --------------- */

    @Test
    void acquire_firstInLine_waitsUntilTheEarliestHolderLeaseEnds() throws Exception {
        lua.redis.set(sem.total, "3");
        long now = lua.serverMillis();
        long earliest = now + 10_000;   // sooner than PLACE_MS
        hold("h1", 1, now + 20_000);
        hold("h2", 1, earliest);
        hold("h3", 1, lua.farEnd());

        long before = lua.serverMillis();
        long wait = queuedAttempt("c1", "c1:1", 1, PLACE_MS);
        long after = lua.serverMillis();

        assertWithin("wait", wait, earliest - after, earliest - before);
    }

    @Test
    void acquire_firstInLineAndHolderLeasesOutlastThePlace_waitsThePlaceLease() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());

        assertEquals(PLACE_MS, queuedAttempt("c1", "c1:1", 1, PLACE_MS));
    }

    @Test
    void acquire_behindAFirstWaiter_waitsNoLongerThanTheFirstWaitersPlace() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        long firstEnd = lua.serverMillis() + 10_000;   // sooner than PLACE_MS and the holder's lease
        queued("c0:1", 1, firstEnd);

        long before = lua.serverMillis();
        long wait = queuedAttempt("c1", "c1:1", 1, PLACE_MS);
        long after = lua.serverMillis();

        assertWithin("wait", wait, firstEnd - after, firstEnd - before);
        assertEquals(List.of("c0:1", "c1:1"), sem.queueOrder());
    }

    /* --------------- FIFO --------------- */

    @Test
    void acquire_behindAFirstWaiterThatCannotBeServed_isNotServedThoughPermitsSuffice() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 1, lua.farEnd());
        // c0:1 wants 3 and cannot have them; c1:1 would be content with the 2 free permits.
        assertEquals(0L, acquire("c0", "c0:1", 3).get(0));

        assertEquals(0L, acquire("c1", "c1:1", 1).get(0), "no barging past the first waiter");

        assertEquals(List.of("c0:1", "c1:1"), sem.queueOrder());
        assertEquals(Map.of("holder", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("holder"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void acquire_firstWaiterWhenPermitsAreFree_acquiresAndLeavesTheQueue() throws Exception {
        lua.redis.set(sem.total, "2");
        long end = lua.farEnd();
        queued("c1:1", 1, end);
        queued("c2:1", 2, end);

        assertEquals(List.of(1L, 0L), acquire("c1", "c1:1", 2));

        assertEquals(Map.of("c1", "2", ":sum", "2"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("c2:1"), sem.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "c2:1")), sem.placeEnds());
    }

    @Test
    void acquire_onlyWaiterAcquires_theQueueVanishes() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("holder", 2, lua.farEnd());
        queuedAttempt("c1", "c1:1", 1, PLACE_MS);
        lua.redis.del(sem.holds, sem.leases);   // the holder's release, by hand

        assertEquals(List.of(1L, 1L), acquire("c1", "c1:1", 1));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places));
    }

    /* --------------- no wake-ups --------------- */

    @Test
    void acquire_permitsLeftForTheNextInLine_wakesTheNextByName() throws Exception {
        lua.redis.set(sem.total, "3");
        long end = lua.farEnd();
        queued("c1:1", 1, end);
        queued("c2:1", 2, end);
        queued("c3:1", 3, end);

        // The next in line, which may have tried too early.
        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 2L), acquire("c1", "c1:1", 1)), "c2:1");

        assertEquals(List.of("c2:1", "c3:1"), sem.queueOrder(), "the others keep their places");
    }

    @Test
    void acquire_noPermitsLeft_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "2");
        long end = lua.farEnd();
        queued("c1:1", 1, end);
        queued("c2:1", 2, end);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), acquire("c1", "c1:1", 2)));
    }

    @Test
    void acquire_queued_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        queued("c0:1", 1, lua.farEnd());

        lua.assertPublishes(sem.wakeups, () -> queuedAttempt("c1", "c1:1", 1, PLACE_MS));
    }

    /* --------------- purges --------------- */

    @Test
    void acquire_expiredClientLease_returnsItsPermitsToThePool() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("dead", 2, 0);   // stopped renewing long ago
        hold("live", 1, lua.farEnd());

        assertEquals(List.of(1L, 0L), acquire("c1", "c1:1", 2));

        assertEquals(Map.of("live", "1", "c1", "2", ":sum", "3"), lua.redis.hgetall(sem.holds),
                "the dead client's field is gone and ':sum' no longer counts it");
        assertEquals(Set.of("live", "c1"), Set.copyOf(lua.redis.zrange(sem.leases, 0, -1)));
    }

    @Test
    void acquire_expiredClientLeaseStillNotEnough_isPurgedAndTheWaiterQueued() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("dead", 1, 0);
        hold("live", 2, lua.farEnd());

        queuedAttempt("c1", "c1:1", 2, PLACE_MS);

        assertEquals(Map.of("live", "2", ":sum", "2"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("live"), lua.redis.zrange(sem.leases, 0, -1));
        assertEquals(List.of("c1:1"), sem.queueOrder());
    }

    @Test
    void acquire_expiredFirstPlace_isPurgedAndTheNextInLineIsServed() throws Exception {
        lua.redis.set(sem.total, "3");
        queued("dead:1", 1, 0);   // a place that ended long ago
        queued("c1:1", 2, lua.farEnd());

        assertEquals(List.of(1L, 2L), acquire("c1", "c1:1", 1));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places), "the dead waiter was purged, c1:1 left the queue");
    }

    @Test
    void acquire_expiredPlaceWhileShort_isPurgedAndItsWaiterRequeuesAtTheTail() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        queuedAttempt("c1", "c1:1", 1, PLACE_MS);
        queuedAttempt("c2", "c2:1", 1, PLACE_MS);
        lua.redis.zadd(sem.places, 0, "c1:1");

        queuedAttempt("c3", "c3:1", 1, PLACE_MS);
        assertEquals(List.of("c2:1", "c3:1"), sem.queueOrder());
        assertNull(lua.redis.zscore(sem.places, "c1:1"));

        queuedAttempt("c1", "c1:1", 1, PLACE_MS);
        assertEquals(List.of("c2:1", "c3:1", "c1:1"), sem.queueOrder(), "a purged waiter lost its place");
    }
}
