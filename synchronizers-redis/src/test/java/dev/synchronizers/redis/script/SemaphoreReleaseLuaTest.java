package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.script.LuaHarness.Subscription;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.ScoredValue;
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
 * {@code semaphore-release.lua} against a real server, on holdings and queues written by hand: the
 * bookkeeping of a partial and a full release, the refusal of more than is held, and the wake-ups:
 * as many live waiters from the front of the queue as permits are free (total less {@code :sum}),
 * at most 64, in queue order.
 */
@Tag("redis")
class SemaphoreReleaseLuaTest {

    /** The holdings' TTL: shorter than {@link LuaHarness#LONG_LEASE_MS}, so a reset would show. */
    private static final long LEASE_MS = 60_000;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String total;
    private String holds;
    private String leases;
    private String queue;
    private String places;
    private String wakeups;
    /** A lease or place end no test reaches, read from the server's clock. */
    private long farEnd;

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
        wakeups = base + ":wake";
        farEnd = lua.serverMillis() + LONG_LEASE_MS;
    }

    /** Books permits for a client whose lease ends at {@link #farEnd}. */
    private void hold(String client, long permits) {
        lua.redis.hincrby(holds, client, permits);
        lua.redis.hincrby(holds, ":sum", permits);
        lua.redis.zadd(leases, farEnd, client);
        lua.redis.pexpire(holds, LEASE_MS);
        lua.redis.pexpire(leases, LEASE_MS);
    }

    /** Queues a waiter at {@code order} whose place ends at {@code placeEndMs} (server time). */
    private void queued(String waiter, long order, long placeEndMs) {
        lua.redis.zadd(queue, order, waiter);
        lua.redis.zadd(places, placeEndMs, waiter);
    }

    private List<Object> release(String client, long permits) throws Exception {
        return lua.run(Script.SEMAPHORE_RELEASE, new String[] {total, holds, leases, queue, places, wakeups},
                client, Long.toString(permits));
    }

    /** Queues live waiters (places ending at {@link #farEnd}) in the given order. */
    private void queuedLive(String... waiters) {
        for (int i = 0; i < waiters.length; i++) {
            queued(waiters[i], i + 1, farEnd);
        }
    }

    /** {@code count} waiter names {@code w00:1, w01:1, ...}, in queue order. */
    private static String[] waiters(int count) {
        String[] names = new String[count];
        for (int i = 0; i < count; i++) {
            names[i] = String.format("w%02d:1", i);
        }
        return names;
    }

    private void assertTtlKept(String key) {
        long pttl = lua.redis.pttl(key);
        assertTrue(pttl > 0 && pttl <= LEASE_MS, () -> key + " PTTL " + pttl);
    }

    /* --------------- refused --------------- */

    @Test
    void release_moreThanHeld_returnsZeroAndWhatIsHeldAndChangesNothing() throws Exception {
        lua.redis.set(total, "5");
        hold("c1", 2);
        queued("dead:1", 1, 0);
        queued("c2:1", 2, farEnd);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(0L, 2L), release("c1", 3));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(Map.of("c1", "2", ":sum", "2"), lua.redis.hgetall(holds));
        assertEquals(List.of(ScoredValue.just(farEnd, "c1")), lua.redis.zrangeWithScores(leases, 0, -1));
        assertEquals(List.of("dead:1", "c2:1"), lua.redis.zrange(queue, 0, -1), "not even the purge runs");
        assertEquals(List.of("dead:1", "c2:1"), lua.redis.zrange(places, 0, -1));
        assertTtlKept(holds);
    }

    @Test
    void release_clientHoldingNothing_returnsZeroZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, 0L), release("c1", 1));

        assertEquals(0L, lua.redis.exists(total, holds, leases, queue, places));
    }

    /* --------------- bookkeeping --------------- */

    @Test
    void release_part_keepsTheRestAndTheLease() throws Exception {
        hold("c1", 3);
        hold("c2", 1);

        assertEquals(List.of(1L, 1L), release("c1", 2));

        assertEquals(Map.of("c1", "1", "c2", "1", ":sum", "2"), lua.redis.hgetall(holds));
        assertEquals(List.of(ScoredValue.just(farEnd, "c1"), ScoredValue.just(farEnd, "c2")),
                lua.redis.zrangeWithScores(leases, 0, -1), "the lease is not touched");
        assertTtlKept(holds);
        assertTtlKept(leases);
    }

    @Test
    void release_allOfOneClient_removesItsFieldAndLease() throws Exception {
        hold("c1", 2);
        hold("c2", 1);

        assertEquals(List.of(1L, 0L), release("c1", 2));

        assertEquals(Map.of("c2", "1", ":sum", "1"), lua.redis.hgetall(holds));
        assertEquals(List.of("c2"), lua.redis.zrange(leases, 0, -1));
        assertTtlKept(holds);
    }

    @Test
    void release_allOfTheLastHolder_deletesHoldsAndLeases() throws Exception {
        hold("c1", 2);

        assertEquals(List.of(1L, 0L), release("c1", 2));

        assertEquals(0L, lua.redis.exists(holds, leases), "nothing is held: no hash, no leases");
    }

    @Test
    void release_inTwoSteps_endsWithNothingHeld() throws Exception {
        hold("c1", 3);

        assertEquals(List.of(1L, 2L), release("c1", 1));
        assertEquals(List.of(1L, 0L), release("c1", 2));

        assertEquals(0L, lua.redis.exists(holds, leases));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void release_onePermitFreeWithQueuedWaiters_wakesOnlyTheFirstByName() throws Exception {
        lua.redis.set(total, "1");
        hold("c1", 1);
        queuedLive("c2:1", "c3:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 1));

            assertEquals("c2:1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c2:1", "c3:1"), lua.redis.zrange(queue, 0, -1),
                "the woken waiter keeps its place until it acquires");
        assertEquals(List.of(ScoredValue.just(farEnd, "c2:1"), ScoredValue.just(farEnd, "c3:1")),
                lua.redis.zrangeWithScores(places, 0, -1));
    }

    @Test
    void release_threePermitsFreeAndFiveWaiters_wakesTheFirstThreeInOrder() throws Exception {
        lua.redis.set(total, "5");
        hold("c1", 3);
        hold("c2", 2);
        queuedLive("c3:1", "c4:1", "c5:1", "c6:1", "c7:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 3));

            assertEquals("c3:1", subscription.next());
            assertEquals("c4:1", subscription.next());
            assertEquals("c5:1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c3:1", "c4:1", "c5:1", "c6:1", "c7:1"), lua.redis.zrange(queue, 0, -1),
                "the queue is not touched");
    }

    @Test
    void release_freePermitsCountOtherHoldersToo_wakesOnlyAsManyAsAreFree() throws Exception {
        // c1 gives back 3, but c2 still holds 3 of the 4: one permit is free.
        lua.redis.set(total, "4");
        hold("c1", 3);
        hold("c2", 3);   // as after the total was shrunk from 6
        queuedLive("c3:1", "c4:1", "c5:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 3));

            assertEquals("c3:1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void release_morePermitsFreeThanWaiters_wakesEveryWaiterOnce() throws Exception {
        lua.redis.set(total, "5");
        hold("c1", 5);
        queuedLive("c2:1", "c3:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 5));

            assertEquals("c2:1", subscription.next());
            assertEquals("c3:1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void release_totalShrunkSoExactlyNothingIsFree_publishesNothing() throws Exception {
        // Total shrunk from 5 to 3 while 4 were held: giving back 1 leaves 3 held of 3.
        lua.redis.set(total, "3");
        hold("c1", 1);
        hold("c2", 3);
        queuedLive("c3:1", "c4:1", "c5:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 1));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(Map.of("c2", "3", ":sum", "3"), lua.redis.hgetall(holds));
        assertEquals(List.of("c3:1", "c4:1", "c5:1"), lua.redis.zrange(queue, 0, -1));
    }

    @Test
    void release_totalShrunkBelowWhatIsStillHeld_publishesNothing() throws Exception {
        // Total shrunk from 6 to 1 while 5 were held: giving back 2 leaves 3 held of 1.
        lua.redis.set(total, "1");
        hold("c1", 2);
        hold("c2", 3);
        queuedLive("c3:1", "c4:1", "c5:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 2));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c3:1", "c4:1", "c5:1"), lua.redis.zrange(queue, 0, -1));
    }

    @Test
    void release_absentTotal_publishesNothing() throws Exception {
        hold("c1", 2);
        queuedLive("c2:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 2));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(total), "the total is not created");
    }

    @Test
    void release_seventyWaitersAndAHundredFree_wakesTheFirstSixtyFourInOrder() throws Exception {
        lua.redis.set(total, "100");
        hold("c1", 100);
        String[] names = waiters(70);
        queuedLive(names);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 100));

            for (int i = 0; i < 64; i++) {
                assertEquals(names[i], subscription.next(), "wake-up " + i);
            }
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(70L, lua.redis.zcard(queue));
    }

    @Test
    void release_expiredFirstPlaces_arePurgedBeforeCountingAndLiveWaitersAreWoken() throws Exception {
        lua.redis.set(total, "3");
        hold("c1", 3);
        queued("dead:1", 1, 0);   // places that ended long ago
        queued("dead:2", 2, 0);
        queued("c2:1", 3, farEnd);
        queued("c3:1", 4, farEnd);
        queued("c4:1", 5, farEnd);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 1L), release("c1", 2));

            // Two permits free: the first two live waiters, never a dead one.
            assertEquals("c2:1", subscription.next());
            assertEquals("c3:1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c2:1", "c3:1", "c4:1"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of("c2:1", "c3:1", "c4:1"), lua.redis.zrange(places, 0, -1));
    }

    @Test
    void release_nothingFree_stillPurgesExpiredPlaces() throws Exception {
        lua.redis.set(total, "1");
        hold("c1", 1);
        hold("c2", 1);   // as after the total was shrunk from 2
        queued("dead:1", 1, 0);
        queued("c3:1", 2, farEnd);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 1));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c3:1"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of("c3:1"), lua.redis.zrange(places, 0, -1));
    }

    @Test
    void release_onlyExpiredWaiters_purgesThemAndPublishesNothing() throws Exception {
        lua.redis.set(total, "1");
        hold("c1", 1);
        queued("dead:1", 1, 0);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 1));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(queue, places), "the purged keys are empty, so gone");
    }

    @Test
    void release_emptyQueue_publishesNothingAndCreatesNoQueue() throws Exception {
        lua.redis.set(total, "1");
        hold("c1", 1);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 0L), release("c1", 1));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(queue, places));
    }
}
