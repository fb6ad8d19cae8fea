package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-release.lua} against a real server, on holdings, queues and grant records written
 * by hand: the grant records of claimed waiters it drops, the bookkeeping of a partial and a full
 * release, the refusal of more than is held, and the serving of the line with the permits then free
 * (total less {@code :sum}): from the front of the queue, in order, each waiter whose ask fits is
 * taken out of the queue, keeps its place and ask as a grant record, has its ask booked under its
 * client (leased until the waiter's place would have ended) and is named in a
 * {@code granted:<waiter>} message.
 */
@Tag("redis")
class SemaphoreReleaseLuaTest extends LuaTestBase {

    /** The holdings' TTL: shorter than {@link LuaHarness#LONG_LEASE_MS}, so a reset would show. */
    private static final long LEASE_MS = 60_000;

    private SemaphoreFixture sem;
    /** A lease or place end no test reaches, read from the server's clock. */
    private long farEnd;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
        farEnd = lua.farEnd();
    }

    /** Books permits for a client whose lease ends at {@link #farEnd}. */
    private void hold(String client, long permits) {
        sem.hold(client, permits, farEnd, LEASE_MS);
    }

    /** Queues the waiters in order, each asking for one permit, with places ending at {@link #farEnd}. */
    private void asking(String... waiters) {
        sem.asking(1, farEnd, waiters);
    }

    /** Releases {@code permits} of the grant {@code grant}: sets what it keeps to what it holds less them. */
    private List<Object> release(String grant, long permits) throws Exception {
        String held = lua.redis.hget(sem.holds, grant);
        long keep = held == null ? 0 : Math.max(0, Long.parseLong(held) - permits);
        return lua.run(Script.SEMAPHORE_RELEASE, sem.keys(), grant + "=" + keep);
    }

    /** What {@code waiters} each asking for one permit are granted: their asks, keyed by waiter. */
    private static Map<String, String> onePermitEach(String... waiters) {
        Map<String, String> asks = new HashMap<>();
        for (String waiter : waiters) {
            asks.put(waiter, "1");
        }
        return asks;
    }

    private static String[] grantedMessages(String... waiters) {
        return Arrays.stream(waiters).map(waiter -> "granted:" + waiter).toArray(String[]::new);
    }

    /* --------------- refused --------------- */



    /** A grant Redis no longer has (its lease ran out, or it was given up) is reported missing; nothing is created. */
    @Test
    void release_grantHoldingNothing_reportsItMissingAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, "c1"), release("c1", 1));

        assertEquals(0L, lua.redis.exists(sem.total, sem.holds, sem.leases, sem.queue, sem.places, sem.asks));
    }

    /* --------------- bookkeeping --------------- */

    @Test
    void release_part_keepsTheRestAndTheLease() throws Exception {
        hold("c1", 3);
        hold("c2", 1);

        assertEquals(List.of(2L, ""), release("c1", 2));

        assertEquals(Map.of("c1", "1", "c2", "1", ":sum", "2"), sem.holdings());
        assertEquals(List.of(ScoredValue.just(farEnd, "c1"), ScoredValue.just(farEnd, "c2")),
                lua.redis.zrangeWithScores(sem.leases, 0, -1), "the lease is not touched");
        lua.assertTtlAtMost(sem.holds, LEASE_MS);
        lua.assertTtlAtMost(sem.leases, LEASE_MS);
    }

    @Test
    void release_allOfOneClient_removesItsFieldAndLease() throws Exception {
        hold("c1", 2);
        hold("c2", 1);

        assertEquals(List.of(2L, ""), release("c1", 2));

        assertEquals(Map.of("c2", "1", ":sum", "1"), sem.holdings());
        assertEquals(List.of("c2"), lua.redis.zrange(sem.leases, 0, -1));
        lua.assertTtlAtMost(sem.holds, LEASE_MS);
    }

    @Test
    void release_allOfTheLastHolder_dropsTheGrantAndKeepsTheHoldingsUntilTheirTtl() throws Exception {
        hold("c1", 2);

        assertEquals(List.of(2L, ""), release("c1", 2));

        assertEquals(Map.of(":sum", "0"), sem.holdings(), "nothing is held; the hints stay for the next acquire");
        lua.assertTtlAtMost(sem.holds, LEASE_MS);
        assertEquals(0L, lua.redis.exists(sem.leases), "no lease left");
    }

    /**
     * Total 1, held by c1; c2:1:1 asks for 2 and waits out of line, marked for semaphore-add.lua to
     * wake. c1's release leaves nothing held, but the mark stays, and a growth of the total then
     * wakes c2:1:1.
     */
    @Test
    void release_allOfTheLastHolderWhileAWaiterAsksAboveTheTotal_keepsTheWakeUpMark() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);
        assertEquals(List.of(-1L, 1L), lua.run(Script.SEMAPHORE_ACQUIRE, sem.keys(), "c2:1:1", "2",
                Long.toString(LEASE_MS), Long.toString(LEASE_MS), "wait"));

        assertEquals(List.of(1L, ""), release("c1", 1));

        assertEquals(Boolean.TRUE, lua.redis.hexists(sem.holds, ":over"), "the wake-up mark outlives the release");
        assertEquals(0L, lua.redis.exists(sem.leases), "nothing is held");
        sem.assertReleasedTo(() -> assertEquals(List.of(1L, 2L),
                lua.run(Script.SEMAPHORE_ADD, sem.keys(), "1")), "c2:1:1");
    }

    @Test
    void release_inTwoSteps_endsWithNothingHeld() throws Exception {
        hold("c1", 3);

        assertEquals(List.of(1L, ""), release("c1", 1));
        assertEquals(List.of(2L, ""), release("c1", 2));

        assertEquals(Map.of(":sum", "0"), sem.holdings());
        assertEquals(0L, lua.redis.exists(sem.leases));
    }

    /* --------------- claimed grants --------------- */




    /* --------------- serving the line --------------- */

    /**
     * Waiters of three clients in line, each client listening on its own channel: the one grant
     * goes to the served waiter's client only, not to every client that waits, and nothing goes to
     * the semaphore's shared channel.
     */
    @Test
    void release_oneWaiterServedWhileThreeClientsWait_grantReachesOnlyItsClientsChannel() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c0", 1);
        asking("c1:1:1", "c2:1:1", "c3:1:1");

        lua.assertPublishes(Map.of(sem.wakeups, List.of(), sem.wakeups + ":c1", List.of("granted:c1:1:1"),
                sem.wakeups + ":c2", List.of(), sem.wakeups + ":c3", List.of()),
                () -> assertEquals(List.of(1L, ""), release("c0", 1)));
    }

    @Test
    void release_onePermitFreeWithQueuedWaiters_grantsOnlyTheFirst() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);
        asking("c2:1:1", "c3:1:1");

        long before = lua.serverMillis();
        sem.assertPublishes(() -> assertEquals(List.of(1L, ""), release("c1", 1)), "granted:c2:1:1");

        assertEquals(List.of("c3:1:1"), sem.queueOrder(), "the granted waiter leaves the queue");
        assertEquals(List.of(ScoredValue.just(farEnd, "c3:1:1")), sem.placeEnds(),
                "the served waiter's place and ask go: its grant is the record");
        assertEquals(onePermitEach("c3:1:1"), sem.asks());
        assertEquals(Map.of("c2:1:1", "1", ":sum", "1"), sem.holdings(), "a grant under the waiter's name");
        assertEquals(List.of(ScoredValue.just(farEnd, "c2:1:1")), lua.redis.zrangeWithScores(sem.leases, 0, -1),
                "leased until its waiter's place would have ended");
        sem.assertTtlCovers(sem.holds, farEnd - before, before);
        sem.assertTtlCovers(sem.leases, farEnd - before, before);
    }

    @Test
    void release_threePermitsFreeAndFiveWaiters_grantsTheFirstThreeInOrder() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c1", 3);
        hold("c2", 2);
        asking("c3:1:1", "c4:1:1", "c5:1:1", "c6:1:1", "c7:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(3L, ""), release("c1", 3)),
                grantedMessages("c3:1:1", "c4:1:1", "c5:1:1"));

        assertEquals(List.of("c6:1:1", "c7:1:1"), sem.queueOrder());
        assertEquals(Map.of("c2", "2", "c3:1:1", "1", "c4:1:1", "1", "c5:1:1", "1", ":sum", "5"),
                sem.holdings());
        assertEquals(List.of("c2", "c3:1:1", "c4:1:1", "c5:1:1"), lua.redis.zrange(sem.leases, 0, -1));
        assertEquals(onePermitEach("c6:1:1", "c7:1:1"), sem.asks());
    }

    @Test
    void release_freePermitsCountOtherHoldersToo_grantsOnlyAsManyAsAreFree() throws Exception {
        // c1 gives back 3, but c2 still holds 3 of the 4: one permit is free.
        lua.redis.set(sem.total, "4");
        hold("c1", 3);
        hold("c2", 3);   // as after the total was shrunk from 6
        asking("c3:1:1", "c4:1:1", "c5:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(3L, ""), release("c1", 3)), "granted:c3:1:1");

        assertEquals(List.of("c4:1:1", "c5:1:1"), sem.queueOrder());
        assertEquals(Map.of("c2", "3", "c3:1:1", "1", ":sum", "4"), sem.holdings());
    }

    @Test
    void release_morePermitsFreeThanWaiters_grantsEveryWaiterOnce() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c1", 5);
        asking("c2:1:1", "c3:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(5L, ""), release("c1", 5)),
                grantedMessages("c2:1:1", "c3:1:1"));

        assertEquals(0L, lua.redis.exists(sem.queue), "everyone was served");
        assertEquals(Map.of("c2:1:1", "1", "c3:1:1", "1", ":sum", "2"), sem.holdings());
    }

    @Test
    void release_asksOfDifferentSizes_grantsInOrderWhileTheFirstFits() throws Exception {
        lua.redis.set(sem.total, "6");
        hold("c1", 6);
        sem.asking("c2:1:1", 1, 2, farEnd);
        sem.asking("c3:1:1", 2, 3, farEnd);
        sem.asking("c4:1:1", 3, 2, farEnd);   // 1 left: does not fit
        sem.asking("c5:1:1", 4, 1, farEnd);   // would fit, but waits behind c4:1:1

        sem.assertPublishes(() -> assertEquals(List.of(6L, ""), release("c1", 6)),
                grantedMessages("c2:1:1", "c3:1:1"));

        assertEquals(List.of("c4:1:1", "c5:1:1"), sem.queueOrder());
        assertEquals(Map.of("c2:1:1", "2", "c3:1:1", "3", ":sum", "5"), sem.holdings());
    }

    @Test
    void release_firstAskLargerThanWhatIsFree_grantsNobody() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c1", 2);
        hold("c2", 2);
        sem.asking("c3:1:1", 1, 4, farEnd);
        sem.asking("c4:1:1", 2, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(List.of(2L, ""), release("c1", 2)));

        assertEquals(List.of("c3:1:1", "c4:1:1"), sem.queueOrder());
        assertEquals(Map.of("c2", "2", ":sum", "2"), sem.holdings());
    }

    @Test
    void release_firstWaiterAsksMoreThanTheTotal_isToldByBareNameAndServesTheNext() throws Exception {
        // c3:1:1 asked for 3 before the total shrank to 2: it leaves the line, and c4:1:1 is served.
        lua.redis.set(sem.total, "2");
        hold("c1", 2);
        sem.asking("c3:1:1", 1, 3, farEnd);
        sem.asking("c4:1:1", 2, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(List.of(2L, ""), release("c1", 2)),
                "c3:1:1", "granted:c4:1:1");

        assertEquals(List.of(), sem.queueOrder(), "c3:1:1 blocks nobody");
        assertEquals(Map.of("c4:1:1", "1", ":sum", "1"), sem.holdings());
        assertEquals(farEnd, Long.parseLong(lua.redis.hget(sem.holds, ":over")),
                "a growth wakes c3:1:1 while its place would have lasted");
    }

    @Test
    void release_twoWaitersOfOneClient_eachGetsItsOwnGrantLeasedUntilItsPlaceEnd() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("c1", 3);
        long earlier = farEnd - 100_000;
        sem.asking("c2:1:1", 1, 1, farEnd);
        sem.asking("c2:2:1", 2, 2, earlier);

        sem.assertPublishes(() -> assertEquals(List.of(3L, ""), release("c1", 3)),
                grantedMessages("c2:1:1", "c2:2:1"));

        assertEquals(Map.of("c2:1:1", "1", "c2:2:1", "2", ":sum", "3"), sem.holdings(),
                "never pooled per client");
        assertEquals(List.of(ScoredValue.just(earlier, "c2:2:1"), ScoredValue.just(farEnd, "c2:1:1")),
                lua.redis.zrangeWithScores(sem.leases, 0, -1));
    }

    @Test
    void release_servedClientWithAnEarlierLease_leavesItsOtherGrantAlone() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("c1", 1);
        sem.hold("c2", 1, farEnd - 100_000, LEASE_MS);   // c2 already holds one, leased for less
        sem.asking("c2:1:1", 1, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(List.of(1L, ""), release("c1", 1)), "granted:c2:1:1");

        assertEquals(Map.of("c2", "1", "c2:1:1", "1", ":sum", "2"), sem.holdings());
        assertEquals(List.of(ScoredValue.just(farEnd - 100_000, "c2"), ScoredValue.just(farEnd, "c2:1:1")),
                lua.redis.zrangeWithScores(sem.leases, 0, -1), "an earlier grant is not re-leased by a later one");
    }

    @Test
    void release_servedClientWithALaterLease_leavesItsOtherGrantAlone() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("c1", 1);
        hold("c2", 1);   // leased until farEnd
        long placeEnd = farEnd - 100_000;
        sem.asking("c2:1:1", 1, 1, placeEnd);

        sem.assertPublishes(() -> assertEquals(List.of(1L, ""), release("c1", 1)), "granted:c2:1:1");

        assertEquals(Map.of("c2", "1", "c2:1:1", "1", ":sum", "2"), sem.holdings());
        assertEquals(List.of(ScoredValue.just(placeEnd, "c2:1:1"), ScoredValue.just(farEnd, "c2")),
                lua.redis.zrangeWithScores(sem.leases, 0, -1));
    }

    @Test
    void release_grantEndingBeforeTheKeysExpire_doesNotShortenThem() throws Exception {
        lua.redis.set(sem.total, "2");
        long before = lua.serverMillis();
        sem.hold("c1", 2, farEnd, LONG_LEASE_MS);
        long placeEnd = before + LEASE_MS;
        sem.asking("c2:1:1", 1, 1, placeEnd);

        sem.assertPublishes(() -> assertEquals(List.of(1L, ""), release("c1", 1)), "granted:c2:1:1");

        assertEquals(ScoredValue.just(placeEnd, "c2:1:1"), lua.redis.zrangeWithScores(sem.leases, 0, 0).get(0));
        sem.assertTtlCovers(sem.holds, LONG_LEASE_MS, before);
        sem.assertTtlCovers(sem.leases, LONG_LEASE_MS, before);
    }

    @Test
    void release_totalShrunkSoExactlyNothingIsFree_publishesNothing() throws Exception {
        // Total shrunk from 5 to 3 while 4 were held: giving back 1 leaves 3 held of 3.
        lua.redis.set(sem.total, "3");
        hold("c1", 1);
        hold("c2", 3);
        asking("c3:1:1", "c4:1:1", "c5:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(1L, ""), release("c1", 1)));

        assertEquals(Map.of("c2", "3", ":sum", "3"), sem.holdings());
        assertEquals(List.of("c3:1:1", "c4:1:1", "c5:1:1"), sem.queueOrder());
    }

    @Test
    void release_totalShrunkBelowWhatIsStillHeld_publishesNothing() throws Exception {
        // Total shrunk from 6 to 1 while 5 were held: giving back 2 leaves 3 held of 1.
        lua.redis.set(sem.total, "1");
        hold("c1", 2);
        hold("c2", 3);
        asking("c3:1:1", "c4:1:1", "c5:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(2L, ""), release("c1", 2)));

        assertEquals(List.of("c3:1:1", "c4:1:1", "c5:1:1"), sem.queueOrder());
    }

    @Test
    void release_absentTotal_publishesNothing() throws Exception {
        hold("c1", 2);
        asking("c2:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(2L, ""), release("c1", 2)));

        assertEquals(0L, lua.redis.exists(sem.total), "the total is not created");
        assertEquals(List.of("c2:1:1"), sem.queueOrder());
    }

    /** Many grants in one release (more than Lua unpacks at once): each ends, and the sum is right. */
    @Test
    void release_twelveHundredGrantsInOneCall_endsThemAll() throws Exception {
        lua.redis.set(sem.total, "1300");
        StringBuilder keep = new StringBuilder();
        for (int i = 0; i < 1200; i++) {
            hold("g" + i, 1);
            keep.append(i == 0 ? "" : " ").append("g").append(i).append("=0");
        }
        hold("other", 1);

        assertEquals(List.of(1200L, ""), lua.run(Script.SEMAPHORE_RELEASE, sem.keys(), keep.toString()));

        assertEquals(Map.of("other", "1", ":sum", "1"), sem.holdings());
        assertEquals(List.of("other"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void release_seventyWaitersAndAHundredFree_grantsAllSeventyInOrder() throws Exception {
        lua.redis.set(sem.total, "100");
        hold("c1", 100);
        String[] names = SemaphoreFixture.waiters(70);
        asking(names);

        sem.assertPublishes(() -> assertEquals(List.of(100L, ""), release("c1", 100)),
                grantedMessages(names));

        assertEquals(0L, lua.redis.exists(sem.queue));
        assertEquals(0L, lua.redis.exists(sem.places, sem.asks), "served waiters keep no place or ask");
        assertEquals(71, sem.holdings().size(), "seventy grants and the sum");
        assertEquals("70", lua.redis.hget(sem.holds, ":sum"));
    }

    @Test
    void release_expiredFirstPlaces_arePurgedBeforeServingAndLiveWaitersAreGranted() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("c1", 3);
        sem.asking("dead:1:1", 1, 1, 0);   // places that ended long ago
        sem.asking("dead:2:1", 2, 1, 0);
        sem.asking("c2:1:1", 3, 1, farEnd);
        sem.asking("c3:1:1", 4, 1, farEnd);
        sem.asking("c4:1:1", 5, 1, farEnd);

        // Two permits free: the first two live waiters, never a dead one.
        sem.assertPublishes(() -> assertEquals(List.of(2L, ""), release("c1", 2)),
                grantedMessages("c2:1:1", "c3:1:1"));

        assertEquals(List.of("c4:1:1"), sem.queueOrder());
        assertEquals(List.of("c4:1:1"), lua.redis.zrange(sem.places, 0, -1));
        assertEquals(onePermitEach("c4:1:1"), sem.asks());
        assertEquals(Map.of("c1", "1", "c2:1:1", "1", "c3:1:1", "1", ":sum", "3"), sem.holdings());
    }

    @Test
    void release_nothingFree_stillPurgesExpiredPlaces() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);
        hold("c2", 1);   // as after the total was shrunk from 2
        sem.asking("dead:1:1", 1, 1, 0);
        sem.asking("c3:1:1", 2, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(List.of(1L, ""), release("c1", 1)));

        assertEquals(List.of("c3:1:1"), sem.queueOrder());
        assertEquals(List.of("c3:1:1"), lua.redis.zrange(sem.places, 0, -1));
        assertEquals(onePermitEach("c3:1:1"), sem.asks());
    }

    @Test
    void release_onlyExpiredWaiters_purgesThemAndPublishesNothing() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);
        sem.asking("dead:1:1", 1, 1, 0);

        sem.assertPublishes(() -> assertEquals(List.of(1L, ""), release("c1", 1)));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks), "the purged keys are empty, so gone");
    }

    @Test
    void release_emptyQueue_publishesNothingAndCreatesNoQueue() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);

        sem.assertPublishes(() -> assertEquals(List.of(1L, ""), release("c1", 1)));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks));
    }

    /* --------------- idempotence --------------- */

    /** The same release sent twice (a retry after a lost reply) releases once. */
    @Test
    void release_sameReleaseTwice_releasesOnce() throws Exception {
        lua.redis.set(sem.total, "4");
        hold("c1:1:1", 3);
        hold("c1:2:1", 1);

        assertEquals(List.of(2L, ""), lua.run(Script.SEMAPHORE_RELEASE, sem.keys(), "c1:1:1=1"));
        assertEquals(List.of(0L, ""), lua.run(Script.SEMAPHORE_RELEASE, sem.keys(), "c1:1:1=1"));

        assertEquals(Map.of("c1:1:1", "1", "c1:2:1", "1", ":sum", "2"), sem.holdings(),
                "the other grant of the same client is untouched");
    }

    /** A release naming several grants ends each as told, and reports the ones Redis no longer has. */
    @Test
    void release_severalGrantsOneMissing_releasesTheOthersAndReportsIt() throws Exception {
        lua.redis.set(sem.total, "4");
        hold("c1:1:1", 2);
        hold("c1:2:1", 2);

        assertEquals(List.of(3L, "c1:3:1"),
                lua.run(Script.SEMAPHORE_RELEASE, sem.keys(), "c1:1:1=0 c1:3:1=0 c1:2:1=1"));

        assertEquals(Map.of("c1:2:1", "1", ":sum", "1"), sem.holdings());
        assertEquals(List.of("c1:2:1"), lua.redis.zrange(sem.leases, 0, -1));
    }

    /** A given-up mark (a grant at 0) is missing to a release: nothing is released for it. */
    @Test
    void release_givenUpMark_isReportedMissing() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("c1:1:1", 0);
        hold("c2:1:1", 1);

        assertEquals(List.of(0L, "c1:1:1"), lua.run(Script.SEMAPHORE_RELEASE, sem.keys(), "c1:1:1=0"));

        assertEquals("1", lua.redis.hget(sem.holds, ":sum"));
    }
}
