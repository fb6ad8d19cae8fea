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
 * {@code semaphore-acquire.lua} against a real server, on totals, holdings, queues and grant
 * records written by hand: the holdings and leases an acquire writes, the queue a short attempt
 * joins (FIFO, places leased in server time, asks recorded), the wait it is told, the purge of
 * expired leases and places, the serving of the line (each waiter whose ask fits is granted:
 * taken out of the queue, its client booked, {@code granted:<waiter>} published, except to the
 * caller), and the claim of a grant by the waiter it was made to.
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

    private List<Object> acquire(String client, String waiter, long permits, long leaseMs, long placeMs)
            throws Exception {
        return lua.run(Script.SEMAPHORE_ACQUIRE, sem.keys(), waiter, Long.toString(permits),
                Long.toString(leaseMs), Long.toString(placeMs), "wait");
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

    /**
     * Queues a waiter at {@code order} asking for {@code permits}, whose place ends at
     * {@code placeEndMs} (server time); the keys live long.
     */
    private void asking(String waiter, long order, long permits, long placeEndMs) {
        sem.asking(waiter, order, permits, placeEndMs);
        liveLong();
    }

    /** Writes a grant record for a waiter, ending at {@code placeEndMs}; the keys live long. */
    private void granted(String waiter, long permits, long placeEndMs) {
        sem.granted(waiter, permits, placeEndMs);
        liveLong();
    }

    private void liveLong() {
        for (String key : List.of(sem.queue, sem.places, sem.asks)) {
            lua.redis.pexpire(key, LONG_LEASE_MS);
        }
    }

    private static void assertWithin(String what, double value, long fromMs, long toMs) {
        assertTrue(value >= fromMs && value <= toMs,
                () -> what + " is " + value + ", expected within [" + fromMs + ", " + toMs + "]");
    }

    /* --------------- more than the total --------------- */

    @Test
    void acquire_moreThanTheTotal_returnsMinusOneAndTheTotalAndWritesOnlyTheWakeUpMark() throws Exception {
        lua.redis.set(sem.total, "3");
        long before = lua.serverMillis();

        assertEquals(List.of(-1L, 3L), acquire("c1", "c1:1:1", 4));

        assertEquals(0L, lua.redis.exists(sem.leases, sem.queue, sem.places, sem.asks),
                "nothing is held, queued or asked");
        assertEquals(Map.of(), sem.holdings(), "no grant");
        long after = lua.serverMillis();
        assertWithin("the wake-up mark's end", Long.parseLong(lua.redis.hget(sem.holds, ":over")),
                before + PLACE_MS, after + PLACE_MS);
        lua.assertTtlAtMost(sem.holds, 2 * PLACE_MS);
        assertEquals("3", lua.redis.get(sem.total));
    }

    @Test
    void acquire_moreThanTheTotalRefused_returnsMinusOneAndTheTotalAndWritesNothing() throws Exception {
        lua.redis.set(sem.total, "3");

        assertEquals(List.of(-1L, 3L), lua.run(Script.SEMAPHORE_ACQUIRE, sem.keys(), "c1:1:1", "4", "60000", "30000",
                "refuse"));

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases, sem.queue, sem.places, sem.asks),
                "nothing is held, queued, asked or marked");
        assertEquals("3", lua.redis.get(sem.total));
    }

    @Test
    void acquire_absentTotal_countsAsZero() throws Exception {
        assertEquals(List.of(-1L, 0L), acquire("c1", "c1:1:1", 1));

        assertEquals(0L, lua.redis.exists(sem.total, sem.leases, sem.queue, sem.places, sem.asks));
        assertEquals(Map.of(), sem.holdings(), "no grant, only the wake-up mark");
    }

    @Test
    void acquire_queuedWaiterAfterTheTotalShrank_returnsMinusOneAndLeavesTheLine() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 3, lua.farEnd());
        queuedAttempt("c1", "c1:1:1", 2, PLACE_MS);
        queuedAttempt("c2", "c2:1:1", 1, PLACE_MS);
        lua.redis.set(sem.total, "1");   // shrunk by hand
        sem.forgetHints();

        assertEquals(List.of(-1L, 1L), acquire("c1", "c1:1:1", 2));

        assertEquals(List.of("c2:1:1"), sem.queueOrder(), "the refused waiter is not left queued");
        assertEquals(List.of("c2:1:1"), lua.redis.zrange(sem.places, 0, -1));
        assertEquals(Map.of("c2:1:1", "1"), sem.asks(), "nor is its ask kept");
        assertEquals(Map.of("holder", "3", ":sum", "3"), sem.holdings());
    }

    @Test
    void acquire_firstInLineAskingMoreThanTheShrunkTotal_leavesWithoutAMessageAndTheNextIsServed() throws Exception {
        // c1:1:1 asks for 3, the total shrank to 2: it must leave, and c2:1:1 fits in the free permit.
        lua.redis.set(sem.total, "2");
        long end = lua.farEnd();
        hold("holder", 1, end);
        asking("c1:1:1", 1, 3, end);
        asking("c2:1:1", 2, 1, end);

        sem.assertPublishes(() -> assertEquals(List.of(-1L, 2L), acquire("c1", "c1:1:1", 3)),
                "granted:c2:1:1");

        assertEquals(0L, lua.redis.exists(sem.queue), "c1:1:1 left the line, c2:1:1 was served");
        assertEquals(0L, lua.redis.exists(sem.places, sem.asks), "a served waiter keeps no place or ask");
        assertEquals(Map.of("holder", "1", "c2:1:1", "1", ":sum", "2"), sem.holdings());
    }

    /* --------------- free permits, empty queue --------------- */

    @Test
    void acquire_freePermitsEmptyQueue_acquiresAndWritesHoldsAndLease() throws Exception {
        lua.redis.set(sem.total, "5");

        long before = lua.serverMillis();
        List<Object> reply = acquire("c1", "c1:1:1", 2);
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 3L), reply, "acquired, 3 left for others");
        assertEquals(Map.of("c1:1:1", "2", ":sum", "2"), sem.holdings());
        assertEquals(List.of("c1:1:1"), lua.redis.zrange(sem.leases, 0, -1));
        assertWithin("c1's lease end", lua.redis.zscore(sem.leases, "c1:1:1"), before + LEASE_MS, after + LEASE_MS);
        sem.assertTtlCovers(sem.holds, LEASE_MS, before);
        sem.assertTtlCovers(sem.leases, LEASE_MS, before);
        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks), "the waiter is not queued");
        assertEquals("5", lua.redis.get(sem.total));
        assertEquals(-1L, lua.redis.pttl(sem.total), "the total keeps no TTL");
    }

    @Test
    void acquire_allPermits_leavesZero() throws Exception {
        lua.redis.set(sem.total, "3");

        assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 3));

        assertEquals(Map.of("c1:1:1", "3", ":sum", "3"), sem.holdings());
    }

    @Test
    void acquire_twoThreadsOfOneClient_eachHasItsOwnGrant() throws Exception {
        lua.redis.set(sem.total, "5");

        assertEquals(List.of(1L, 3L), acquire("c1", "c1:1:1", 2));
        assertEquals(List.of(1L, 2L), acquire("c1", "c1:2:1", 1));

        assertEquals(Map.of("c1:1:1", "2", "c1:2:1", "1", ":sum", "3"), sem.holdings(),
                "never pooled per client");
        assertEquals(Set.of("c1:1:1", "c1:2:1"), Set.copyOf(lua.redis.zrange(sem.leases, 0, -1)));
    }

    @Test
    void acquire_twoClients_eachHasItsGrantAndLease() throws Exception {
        lua.redis.set(sem.total, "5");

        assertEquals(List.of(1L, 3L), acquire("c1", "c1:1:1", 2));
        assertEquals(List.of(1L, 2L), acquire("c2", "c2:1:1", 1));

        assertEquals(Map.of("c1:1:1", "2", "c2:1:1", "1", ":sum", "3"), sem.holdings());
        assertEquals(List.of("c1:1:1", "c2:1:1"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void acquire_shorterLeaseLater_doesNotShortenTheKeys() throws Exception {
        lua.redis.set(sem.total, "5");
        long before = lua.serverMillis();
        acquire("c1", "c1:1:1", 1, LONG_LEASE_MS, PLACE_MS);

        long second = lua.serverMillis();
        assertEquals(1L, acquire("c2", "c2:1:1", 1, LEASE_MS, PLACE_MS).get(0));
        long after = lua.serverMillis();

        sem.assertTtlCovers(sem.holds, LONG_LEASE_MS, before);
        sem.assertTtlCovers(sem.leases, LONG_LEASE_MS, before);
        assertWithin("c2's lease end", lua.redis.zscore(sem.leases, "c2:1:1"), second + LEASE_MS, after + LEASE_MS);
    }

    @Test
    void acquire_withEmptyQueue_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "5");

        sem.assertPublishes(() -> assertEquals(List.of(1L, 4L), acquire("c1", "c1:1:1", 1)));
    }

    @Test
    void acquire_freePermitsButOnlyUnclaimedGrantsOfOthers_acquiresDirectly() throws Exception {
        // A grant record is not in the queue: it does not stand in the line.
        lua.redis.set(sem.total, "3");
        long end = lua.farEnd();
        hold("c2:1:1", 1, end);   // served from the line, not yet claimed

        assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 2));

        assertEquals(Map.of("c1:1:1", "2", "c2:1:1", "1", ":sum", "3"), sem.holdings());
    }

    /* --------------- not enough: queueing --------------- */

    @Test
    void acquire_notEnough_queuesAtTheTailWithAPlaceLeasedInServerTimeAndItsAsk() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 2, lua.farEnd());

        long before = lua.serverMillis();
        queuedAttempt("c1", "c1:1:1", 2, PLACE_MS);
        long after = lua.serverMillis();

        assertEquals(List.of("c1:1:1"), sem.queueOrder());
        assertWithin("c1:1:1's place end", lua.redis.zscore(sem.places, "c1:1:1"), before + PLACE_MS,
                after + PLACE_MS);
        assertEquals(Map.of("c1:1:1", "2"), sem.asks());
        sem.assertTtlCovers(sem.queue, PLACE_MS, before);
        sem.assertTtlCovers(sem.places, PLACE_MS, before);
        sem.assertTtlCovers(sem.asks, PLACE_MS, before);
        assertEquals(Map.of("holder", "2", ":sum", "2"), sem.holdings(), "nothing is acquired");
        assertEquals(List.of("holder"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void acquire_threeWaitersWhileShort_queueInArrivalOrder() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());

        for (String client : List.of("c3", "c1", "c2")) {
            queuedAttempt(client, client + ":1:1", 1, PLACE_MS);
        }

        // Not alphabetical: the order they came in.
        assertEquals(List.of("c3:1:1", "c1:1:1", "c2:1:1"), sem.queueOrder());
        List<ScoredValue<String>> scores = lua.redis.zrangeWithScores(sem.queue, 0, -1);
        assertTrue(scores.get(0).getScore() < scores.get(1).getScore()
                && scores.get(1).getScore() < scores.get(2).getScore(), () -> "arrival scores " + scores);
        assertEquals(3L, lua.redis.zcard(sem.places), "every queued waiter has a place");
        assertEquals(Map.of("c3:1:1", "1", "c1:1:1", "1", "c2:1:1", "1"), sem.asks(), "and an ask");
    }

    @Test
    void acquire_queuedWaiterTriesAgain_keepsItsPositionAndAskAndRefreshesItsPlace() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("holder", 2, lua.farEnd());
        queuedAttempt("c1", "c1:1:1", 2, PLACE_MS);
        queuedAttempt("c2", "c2:1:1", 1, PLACE_MS);
        Double arrival = lua.redis.zscore(sem.queue, "c1:1:1");

        // A longer place lease on the retry: the new end cannot be mistaken for the old one.
        long before = lua.serverMillis();
        queuedAttempt("c1", "c1:1:1", 2, LONG_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(List.of("c1:1:1", "c2:1:1"), sem.queueOrder());
        assertEquals(arrival, lua.redis.zscore(sem.queue, "c1:1:1"), "the arrival order is kept");
        assertWithin("c1:1:1's place end", lua.redis.zscore(sem.places, "c1:1:1"), before + LONG_LEASE_MS,
                after + LONG_LEASE_MS);
        assertEquals(Map.of("c1:1:1", "2", "c2:1:1", "1"), sem.asks());
        sem.assertTtlCovers(sem.queue, LONG_LEASE_MS, before);
        sem.assertTtlCovers(sem.places, LONG_LEASE_MS, before);
        sem.assertTtlCovers(sem.asks, LONG_LEASE_MS, before);
    }

    @Test
    void acquire_shorterPlaceLater_doesNotShortenTheKeys() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        long before = lua.serverMillis();
        queuedAttempt("c1", "c1:1:1", 1, LONG_LEASE_MS);

        queuedAttempt("c2", "c2:1:1", 1, PLACE_MS);

        // The keys outlive c1:1:1's longer place.
        sem.assertTtlCovers(sem.queue, LONG_LEASE_MS, before);
        sem.assertTtlCovers(sem.places, LONG_LEASE_MS, before);
        sem.assertTtlCovers(sem.asks, LONG_LEASE_MS, before);
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
        long wait = queuedAttempt("c1", "c1:1:1", 1, PLACE_MS);
        long after = lua.serverMillis();

        assertWithin("wait", wait, earliest - after, earliest - before);
    }

    @Test
    void acquire_firstInLineAndHolderLeasesOutlastThePlace_waitsThePlaceLease() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());

        assertEquals(PLACE_MS, queuedAttempt("c1", "c1:1:1", 1, PLACE_MS));
    }

    @Test
    void acquire_behindAFirstWaiter_waitsNoLongerThanTheFirstWaitersPlace() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        long firstEnd = lua.serverMillis() + 10_000;   // sooner than PLACE_MS and the holder's lease
        asking("c0:1:1", 1, 1, firstEnd);

        long before = lua.serverMillis();
        long wait = queuedAttempt("c1", "c1:1:1", 1, PLACE_MS);
        long after = lua.serverMillis();

        assertWithin("wait", wait, firstEnd - after, firstEnd - before);
        assertEquals(List.of("c0:1:1", "c1:1:1"), sem.queueOrder());
    }

    /* --------------- FIFO --------------- */

    @Test
    void acquire_behindAFirstWaiterThatCannotBeServed_isNotServedThoughPermitsSuffice() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 1, lua.farEnd());
        // c0:1:1 wants 3 and cannot have them; c1:1:1 would be content with the 2 free permits.
        assertEquals(0L, acquire("c0", "c0:1:1", 3).get(0));

        sem.assertPublishes(
                () -> assertEquals(0L, acquire("c1", "c1:1:1", 1).get(0), "no barging past the first waiter"));

        assertEquals(List.of("c0:1:1", "c1:1:1"), sem.queueOrder());
        assertEquals(Map.of("c0:1:1", "3", "c1:1:1", "1"), sem.asks());
        assertEquals(Map.of("holder", "1", ":sum", "1"), sem.holdings());
        assertEquals(List.of("holder"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void acquire_firstWaiterWhenPermitsAreFree_isServedClaimsAndKeepsNoRecord() throws Exception {
        lua.redis.set(sem.total, "2");
        long end = lua.farEnd();
        asking("c1:1:1", 1, 2, end);
        asking("c2:1:1", 2, 1, end);

        long before = lua.serverMillis();
        assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 2));
        long after = lua.serverMillis();

        assertEquals(Map.of("c1:1:1", "2", ":sum", "2"), sem.holdings());
        assertWithin("claimed by its own call: a full lease from now, as the caller counts it",
                lua.redis.zscore(sem.leases, "c1:1:1"), before + LEASE_MS, after + LEASE_MS);
        sem.assertTtlCovers(sem.holds, end - before, before);
        sem.assertTtlCovers(sem.leases, end - before, before);
        assertEquals(List.of("c2:1:1"), sem.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "c2:1:1")), sem.placeEnds(), "claimed: no record of c1:1:1");
        assertEquals(Map.of("c2:1:1", "1"), sem.asks());
    }

    @Test
    void acquire_onlyWaiterAcquires_theQueueVanishes() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("holder", 2, lua.farEnd());
        queuedAttempt("c1", "c1:1:1", 1, PLACE_MS);
        lua.redis.del(sem.holds, sem.leases);   // the holder's release, by hand

        assertEquals(List.of(1L, 1L), acquire("c1", "c1:1:1", 1));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks));
    }

    /* --------------- serving the line --------------- */

    @Test
    void acquire_permitsLeftForOthersInLine_grantsThemInTheSameCall() throws Exception {
        lua.redis.set(sem.total, "3");
        long end = lua.farEnd();
        asking("c1:1:1", 1, 1, end);
        asking("c2:1:1", 2, 1, end);
        asking("c3:1:1", 3, 1, end);

        sem.assertPublishes(() -> assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 1)),
                "granted:c2:1:1", "granted:c3:1:1");

        assertEquals(0L, lua.redis.exists(sem.queue), "everyone was served");
        assertEquals(0L, lua.redis.exists(sem.places, sem.asks), "the others' grants are their records");
        assertEquals(Map.of("c1:1:1", "1", "c2:1:1", "1", "c3:1:1", "1", ":sum", "3"), sem.holdings());
        assertEquals(List.of(ScoredValue.just(end, "c2:1:1"), ScoredValue.just(end, "c3:1:1")),
                lua.redis.zrangeWithScores(sem.leases, 1, -1), "the others leased until their places would end");
    }

    @Test
    void acquire_servedByItsOwnCall_publishesNothingToItself() throws Exception {
        lua.redis.set(sem.total, "2");
        long end = lua.farEnd();
        asking("c1:1:1", 1, 2, end);
        asking("c2:1:1", 2, 1, end);

        sem.assertPublishes(() -> assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 2)));

        assertEquals(List.of("c2:1:1"), sem.queueOrder());
    }

    @Test
    void acquire_servingTheLineBeforeTheCaller_grantsThoseAheadAndQueuesTheCallerBehind() throws Exception {
        // A permit came free without a script serving the line (a holder's lease ran out).
        lua.redis.set(sem.total, "2");
        long end = lua.farEnd();
        hold("dead", 1, 0);
        hold("live", 1, end);
        asking("c1:1:1", 1, 1, end);

        sem.assertPublishes(() -> queuedAttempt("c2", "c2:1:1", 1, PLACE_MS), "granted:c1:1:1");

        assertEquals(List.of("c2:1:1"), sem.queueOrder(), "the caller queued: nothing was left for it");
        assertEquals(Map.of("live", "1", "c1:1:1", "1", ":sum", "2"), sem.holdings());
        assertEquals(Map.of("c2:1:1", "1"), sem.asks(), "only c2:1:1's ask");
    }

    @Test
    void acquire_queued_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        asking("c0:1:1", 1, 1, lua.farEnd());

        sem.assertPublishes(() -> queuedAttempt("c1", "c1:1:1", 1, PLACE_MS));
    }

    @Test
    void acquire_firstWaiterAsksMoreThanTheTotal_isToldByBareNameAndLeavesTheLineForTheNext() throws Exception {
        // c0:1:1 asked for 3 before the total shrank to 2; c1:1:1 fits in the free permit.
        lua.redis.set(sem.total, "2");
        long end = lua.farEnd();
        hold("holder", 1, end);
        asking("c0:1:1", 1, 3, end);
        asking("c1:1:1", 2, 1, end);

        sem.assertPublishes(() -> queuedAttempt("c2", "c2:1:1", 1, PLACE_MS),
                "c0:1:1", "granted:c1:1:1");

        assertEquals(List.of("c2:1:1"), sem.queueOrder(), "c0:1:1 blocks nobody: c1:1:1 is served past it");
        assertEquals(Map.of("holder", "1", "c1:1:1", "1", ":sum", "2"), sem.holdings());
        assertEquals(end, Long.parseLong(lua.redis.hget(sem.holds, ":over")),
                "a growth wakes c0:1:1 while its place would have lasted");
    }

    @Test
    void acquire_queuedWaiterWithoutAnAsk_isDroppedFromTheLine() throws Exception {
        lua.redis.set(sem.total, "1");
        sem.queued("c0:1:1", 1, lua.farEnd());   // half-written: a place but no ask

        sem.assertPublishes(() -> assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 1)));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks));
        assertEquals(Map.of("c1:1:1", "1", ":sum", "1"), sem.holdings(), "nothing is booked for c0");
    }

    @Test
    void acquire_queuedWaiterWithoutAPlace_isDroppedFromTheLine() throws Exception {
        lua.redis.set(sem.total, "1");
        lua.redis.zadd(sem.queue, 1, "c0:1:1");   // half-written: an ask but no place
        lua.redis.hset(sem.asks, "c0:1:1", "1");

        sem.assertPublishes(() -> assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 1)));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks));
        assertEquals(Map.of("c1:1:1", "1", ":sum", "1"), sem.holdings());
    }

    /* --------------- claiming a grant --------------- */

    @Test
    void acquire_grantedWhileWaiting_claimsAndBooksNothingMore() throws Exception {
        lua.redis.set(sem.total, "2");
        long end = lua.farEnd();
        hold("c1:1:1", 2, end);   // its grant, made when c1:1:1 was served
        asking("c2:1:1", 1, 1, end);

        sem.assertPublishes(() -> assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 2)));

        assertEquals(Map.of("c1:1:1", "2", ":sum", "2"), sem.holdings(), "the permits are not booked twice");
        assertEquals(List.of("c2:1:1"), sem.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "c2:1:1")), sem.placeEnds());
        assertEquals(Map.of("c2:1:1", "1"), sem.asks());
    }

    @Test
    void acquire_grantedWhileWaiting_claimLeasesThePermitsAFullLeaseFromNow() throws Exception {
        // Served when its place had 5 s left: the caller counts its lease from the claim, so Redis must too.
        lua.redis.set(sem.total, "2");
        long placeEnd = lua.serverMillis() + 5_000;
        sem.hold("c1:1:1", 2, placeEnd, 5_000);

        long before = lua.serverMillis();
        assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 2));
        long after = lua.serverMillis();

        assertWithin("c1's lease end", lua.redis.zscore(sem.leases, "c1:1:1"), before + LEASE_MS, after + LEASE_MS);
        sem.assertTtlCovers(sem.holds, LEASE_MS, before);
        sem.assertTtlCovers(sem.leases, LEASE_MS, before);
    }

    @Test
    void acquire_grantedWhileWaiting_repliesWhatIsLeftForOthers() throws Exception {
        lua.redis.set(sem.total, "5");
        long end = lua.farEnd();
        hold("c1:1:1", 2, end);

        assertEquals(List.of(1L, 3L), acquire("c1", "c1:1:1", 2));

    }

    /* --------------- purges --------------- */

    @Test
    void acquire_expiredClientLease_returnsItsPermitsToThePool() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("dead", 2, 0);   // stopped renewing long ago
        hold("live", 1, lua.farEnd());

        assertEquals(List.of(1L, 0L), acquire("c1", "c1:1:1", 2));

        assertEquals(Map.of("live", "1", "c1:1:1", "2", ":sum", "3"), sem.holdings(),
                "the dead client's field is gone and ':sum' no longer counts it");
        assertEquals(Set.of("live", "c1:1:1"), Set.copyOf(lua.redis.zrange(sem.leases, 0, -1)));
    }

    @Test
    void acquire_expiredClientLeaseStillNotEnough_isPurgedAndTheWaiterQueued() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("dead", 1, 0);
        hold("live", 2, lua.farEnd());

        queuedAttempt("c1", "c1:1:1", 2, PLACE_MS);

        assertEquals(Map.of("live", "2", ":sum", "2"), sem.holdings());
        assertEquals(List.of("live"), lua.redis.zrange(sem.leases, 0, -1));
        assertEquals(List.of("c1:1:1"), sem.queueOrder());
    }

    @Test
    void acquire_expiredFirstPlace_isPurgedAndTheNextInLineIsServed() throws Exception {
        lua.redis.set(sem.total, "3");
        asking("dead:1:1", 1, 3, 0);   // a place that ended long ago
        asking("c1:1:1", 2, 1, lua.farEnd());

        sem.assertPublishes(() -> assertEquals(List.of(1L, 2L), acquire("c1", "c1:1:1", 1)));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks),
                "the dead waiter was purged, c1:1:1 was served and claimed");
        assertEquals(Map.of("c1:1:1", "1", ":sum", "1"), sem.holdings());
    }

    @Test
    void acquire_expiredPlaceWhileShort_isPurgedAndItsWaiterRequeuesAtTheTail() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        queuedAttempt("c1", "c1:1:1", 1, PLACE_MS);
        queuedAttempt("c2", "c2:1:1", 1, PLACE_MS);
        lua.redis.zadd(sem.places, 0, "c1:1:1");
        sem.forgetHints();

        queuedAttempt("c3", "c3:1:1", 1, PLACE_MS);
        assertEquals(List.of("c2:1:1", "c3:1:1"), sem.queueOrder());
        assertNull(lua.redis.zscore(sem.places, "c1:1:1"));
        assertNull(lua.redis.hget(sem.asks, "c1:1:1"), "its ask went with its place");

        queuedAttempt("c1", "c1:1:1", 1, PLACE_MS);
        assertEquals(List.of("c2:1:1", "c3:1:1", "c1:1:1"), sem.queueOrder(), "a purged waiter lost its place");
        assertEquals("1", sem.asks().get("c1:1:1"));
    }


    /* --------------- replays and given-up acquisitions --------------- */

    /** The same acquire run twice (a replay) takes once: the second run claims the same grant. */
    @Test
    void acquire_sameWaiterTwice_takesOnce() throws Exception {
        lua.redis.set(sem.total, "5");

        assertEquals(List.of(1L, 3L), acquire("c1", "c1:1:1", 2));
        assertEquals(List.of(1L, 3L), acquire("c1", "c1:1:1", 2));

        assertEquals(Map.of("c1:1:1", "2", ":sum", "2"), sem.holdings());
    }

    /** An acquire that runs after its acquisition was given up neither takes permits nor queues. */
    @Test
    void acquire_afterTheAcquisitionWasGivenUp_returnsMinusTwoAndChangesNothing() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1, lua.farEnd());
        hold("c1:1:1", 0, lua.farEnd());   // the given-up mark semaphore-leave.lua writes

        assertEquals(List.of(-2L, 0L), acquire("c1", "c1:1:1", 1));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks), "not queued");
        assertEquals("1", lua.redis.hget(sem.holds, ":sum"));
    }
}
