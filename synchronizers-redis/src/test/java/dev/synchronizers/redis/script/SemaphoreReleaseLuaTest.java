package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-release.lua} against a real server, on holdings and queues written by hand: the
 * bookkeeping of a partial and a full release, the refusal of more than is held, and the wake-ups:
 * as many live waiters from the front of the queue as permits are free (total less {@code :sum}),
 * at most 64, in queue order.
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

    private List<Object> release(String client, long permits) throws Exception {
        return lua.run(Script.SEMAPHORE_RELEASE,
                new String[] {sem.total, sem.holds, sem.leases, sem.queue, sem.places, sem.wakeups},
                client, Long.toString(permits));
    }

    /* --------------- refused --------------- */

    @Test
    void release_moreThanHeld_returnsZeroAndWhatIsHeldAndChangesNothing() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c1", 2);
        sem.queued("dead:1", 1, 0);
        sem.queued("c2:1", 2, farEnd);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(0L, 2L), release("c1", 3)));

        assertEquals(Map.of("c1", "2", ":sum", "2"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of(ScoredValue.just(farEnd, "c1")), lua.redis.zrangeWithScores(sem.leases, 0, -1));
        assertEquals(List.of("dead:1", "c2:1"), sem.queueOrder(), "not even the purge runs");
        assertEquals(List.of("dead:1", "c2:1"), lua.redis.zrange(sem.places, 0, -1));
        lua.assertTtlAtMost(sem.holds, LEASE_MS);
    }

    @Test
    void release_clientHoldingNothing_returnsZeroZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, 0L), release("c1", 1));

        assertEquals(0L, lua.redis.exists(sem.total, sem.holds, sem.leases, sem.queue, sem.places));
    }

    /* --------------- bookkeeping --------------- */

    @Test
    void release_part_keepsTheRestAndTheLease() throws Exception {
        hold("c1", 3);
        hold("c2", 1);

        assertEquals(List.of(1L, 1L), release("c1", 2));

        assertEquals(Map.of("c1", "1", "c2", "1", ":sum", "2"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of(ScoredValue.just(farEnd, "c1"), ScoredValue.just(farEnd, "c2")),
                lua.redis.zrangeWithScores(sem.leases, 0, -1), "the lease is not touched");
        lua.assertTtlAtMost(sem.holds, LEASE_MS);
        lua.assertTtlAtMost(sem.leases, LEASE_MS);
    }

    @Test
    void release_allOfOneClient_removesItsFieldAndLease() throws Exception {
        hold("c1", 2);
        hold("c2", 1);

        assertEquals(List.of(1L, 0L), release("c1", 2));

        assertEquals(Map.of("c2", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("c2"), lua.redis.zrange(sem.leases, 0, -1));
        lua.assertTtlAtMost(sem.holds, LEASE_MS);
    }

    @Test
    void release_allOfTheLastHolder_deletesHoldsAndLeases() throws Exception {
        hold("c1", 2);

        assertEquals(List.of(1L, 0L), release("c1", 2));

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases), "nothing is held: no hash, no leases");
    }

    @Test
    void release_inTwoSteps_endsWithNothingHeld() throws Exception {
        hold("c1", 3);

        assertEquals(List.of(1L, 2L), release("c1", 1));
        assertEquals(List.of(1L, 0L), release("c1", 2));

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void release_onePermitFreeWithQueuedWaiters_wakesOnlyTheFirstByName() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);
        sem.queued(farEnd, "c2:1", "c3:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 1)), "c2:1");

        assertEquals(List.of("c2:1", "c3:1"), sem.queueOrder(),
                "the woken waiter keeps its place until it acquires");
        assertEquals(List.of(ScoredValue.just(farEnd, "c2:1"), ScoredValue.just(farEnd, "c3:1")),
                sem.placeEnds());
    }

    @Test
    void release_threePermitsFreeAndFiveWaiters_wakesTheFirstThreeInOrder() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c1", 3);
        hold("c2", 2);
        sem.queued(farEnd, "c3:1", "c4:1", "c5:1", "c6:1", "c7:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 3)), "c3:1", "c4:1", "c5:1");

        assertEquals(List.of("c3:1", "c4:1", "c5:1", "c6:1", "c7:1"), sem.queueOrder(),
                "the queue is not touched");
    }

    @Test
    void release_freePermitsCountOtherHoldersToo_wakesOnlyAsManyAsAreFree() throws Exception {
        // c1 gives back 3, but c2 still holds 3 of the 4: one permit is free.
        lua.redis.set(sem.total, "4");
        hold("c1", 3);
        hold("c2", 3);   // as after the total was shrunk from 6
        sem.queued(farEnd, "c3:1", "c4:1", "c5:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 3)), "c3:1");
    }

    @Test
    void release_morePermitsFreeThanWaiters_wakesEveryWaiterOnce() throws Exception {
        lua.redis.set(sem.total, "5");
        hold("c1", 5);
        sem.queued(farEnd, "c2:1", "c3:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 5)), "c2:1", "c3:1");
    }

    @Test
    void release_totalShrunkSoExactlyNothingIsFree_publishesNothing() throws Exception {
        // Total shrunk from 5 to 3 while 4 were held: giving back 1 leaves 3 held of 3.
        lua.redis.set(sem.total, "3");
        hold("c1", 1);
        hold("c2", 3);
        sem.queued(farEnd, "c3:1", "c4:1", "c5:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 1)));

        assertEquals(Map.of("c2", "3", ":sum", "3"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("c3:1", "c4:1", "c5:1"), sem.queueOrder());
    }

    @Test
    void release_totalShrunkBelowWhatIsStillHeld_publishesNothing() throws Exception {
        // Total shrunk from 6 to 1 while 5 were held: giving back 2 leaves 3 held of 1.
        lua.redis.set(sem.total, "1");
        hold("c1", 2);
        hold("c2", 3);
        sem.queued(farEnd, "c3:1", "c4:1", "c5:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 2)));

        assertEquals(List.of("c3:1", "c4:1", "c5:1"), sem.queueOrder());
    }

    @Test
    void release_absentTotal_publishesNothing() throws Exception {
        hold("c1", 2);
        sem.queued(farEnd, "c2:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 2)));

        assertEquals(0L, lua.redis.exists(sem.total), "the total is not created");
    }

    @Test
    void release_seventyWaitersAndAHundredFree_wakesTheFirstSixtyFourInOrder() throws Exception {
        lua.redis.set(sem.total, "100");
        hold("c1", 100);
        String[] names = SemaphoreFixture.waiters(70);
        sem.queued(farEnd, names);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 100)),
                Arrays.copyOf(names, 64));

        assertEquals(70L, lua.redis.zcard(sem.queue));
    }

    @Test
    void release_expiredFirstPlaces_arePurgedBeforeCountingAndLiveWaitersAreWoken() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("c1", 3);
        sem.queued("dead:1", 1, 0);   // places that ended long ago
        sem.queued("dead:2", 2, 0);
        sem.queued("c2:1", 3, farEnd);
        sem.queued("c3:1", 4, farEnd);
        sem.queued("c4:1", 5, farEnd);

        // Two permits free: the first two live waiters, never a dead one.
        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 1L), release("c1", 2)), "c2:1", "c3:1");

        assertEquals(List.of("c2:1", "c3:1", "c4:1"), sem.queueOrder());
        assertEquals(List.of("c2:1", "c3:1", "c4:1"), lua.redis.zrange(sem.places, 0, -1));
    }

    @Test
    void release_nothingFree_stillPurgesExpiredPlaces() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);
        hold("c2", 1);   // as after the total was shrunk from 2
        sem.queued("dead:1", 1, 0);
        sem.queued("c3:1", 2, farEnd);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 1)));

        assertEquals(List.of("c3:1"), sem.queueOrder());
        assertEquals(List.of("c3:1"), lua.redis.zrange(sem.places, 0, -1));
    }

    @Test
    void release_onlyExpiredWaiters_purgesThemAndPublishesNothing() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);
        sem.queued("dead:1", 1, 0);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 1)));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places), "the purged keys are empty, so gone");
    }

    @Test
    void release_emptyQueue_publishesNothingAndCreatesNoQueue() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c1", 1);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 0L), release("c1", 1)));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places));
    }
}
