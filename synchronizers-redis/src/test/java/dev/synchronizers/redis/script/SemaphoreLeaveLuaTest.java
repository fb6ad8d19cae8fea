package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-leave.lua} against a real server, on semaphore holdings, queues and grant records
 * written by hand: a queued waiter leaves the line (1); a waiter granted and not yet claimed gives
 * its permits back from its client's holdings (2); a waiter with no place changes nothing (0); and
 * in every case the line is then purged and served, each waiter granted named in a
 * {@code granted:<waiter>} message.
 */
@Tag("redis")
class SemaphoreLeaveLuaTest extends LuaTestBase {

    /** How long a leave remembers that the acquisition was given up. */
    private static final long KEEP_MS = 60_000;

    private SemaphoreFixture sem;
    /** A lease or place end no test reaches, read from the server's clock. */
    private long farEnd;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
        farEnd = lua.farEnd();
    }

    private long leave(String waiter) throws Exception {
        return lua.<Long>run(Script.SEMAPHORE_LEAVE, sem.keys(), waiter, Long.toString(KEEP_MS));
    }

    /** Books permits for a client whose lease ends at {@link #farEnd}; the keys live long. */
    private void hold(String client, long permits) {
        sem.hold(client, permits, farEnd, LONG_LEASE_MS);
    }

    /** Queues the waiters in order, each asking for {@code permits}, with places ending at {@link #farEnd}. */
    private void asking(long permits, String... waiters) {
        sem.asking(permits, farEnd, waiters);
    }

    /* --------------- a queued waiter --------------- */

    @Test
    void leave_queuedWaiter_removesItFromQueuePlacesAndAsksAndReturnsOne() throws Exception {
        asking(1, "c1:1:1", "c2:1:1", "c3:1:1");

        assertEquals(1L, leave("c2:1:1"));

        assertEquals(List.of("c1:1:1", "c3:1:1"), sem.queueOrder());
        assertEquals(List.of(ScoredValue.just(farEnd, "c1:1:1"), ScoredValue.just(farEnd, "c3:1:1")),
                sem.placeEnds());
        assertEquals(Map.of("c1:1:1", "1", "c3:1:1", "1"), sem.asks());
    }

    @Test
    void leave_onlyWaiter_theQueueVanishes() throws Exception {
        asking(1, "c1:1:1");

        assertEquals(1L, leave("c1:1:1"));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks));
    }

    @Test
    void leave_queuedWaiter_givesBackNothing() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("c1", 2);
        asking(1, "c1:2:1");

        assertEquals(1L, leave("c1:2:1"));

        assertEquals(Map.of("c1", "2", ":sum", "2"), lua.redis.hgetall(sem.holds), "its client's holdings are its own");
        assertEquals(List.of(ScoredValue.just(farEnd, "c1")), lua.redis.zrangeWithScores(sem.leases, 0, -1));
    }

    /* --------------- no place --------------- */

    @Test
    void leave_waiterWithNoPlace_returnsZeroAndChangesNothing() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1);
        asking(1, "c1:1:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(0L, leave("c9:1:1")));

        assertEquals(List.of("c1:1:1"), sem.queueOrder());
        assertEquals(List.of(ScoredValue.just(farEnd, "c1:1:1")), sem.placeEnds());
        assertEquals(Map.of("c1:1:1", "1"), sem.asks());
        assertEquals(Map.of("holder", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
    }

    @Test
    void leave_emptyQueue_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, leave("c1:1:1"));

        assertEquals(0L, lua.redis.exists(sem.total, sem.holds, sem.leases, sem.queue, sem.places, sem.asks));
    }

    @Test
    void leave_grantRecordAlreadyPurged_returnsZeroAndItsClientKeepsThePermits() throws Exception {
        // c1:1:1 was granted 1 permit; its record ran out and an earlier script dropped it.
        lua.redis.set(sem.total, "2");
        hold("c1", 1);

        assertEquals(0L, leave("c1:1:1"));

        assertEquals(Map.of("c1", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of(ScoredValue.just(farEnd, "c1")), lua.redis.zrangeWithScores(sem.leases, 0, -1));
    }

    @Test
    void leave_grantRecordExpiredButNotYetPurged_isStillGivenBack() throws Exception {
        // The leaving waiter is looked up before the purge: its record still names the permits.
        lua.redis.set(sem.total, "2");
        hold("c1", 2);
        sem.granted("c1:1:1", 1, 0);

        assertEquals(2L, leave("c1:1:1"));

        assertEquals(Map.of("c1", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
        assertEquals(0L, lua.redis.exists(sem.places, sem.asks));
    }

    /* --------------- a granted waiter --------------- */

    @Test
    void leave_grantedWaiter_returnsTwoGivesItsPermitsBackAndDropsItsRecord() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("c1", 3);   // 1 of its own, 2 granted to c1:1:1
        sem.granted("c1:1:1", 2, farEnd);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(2L, leave("c1:1:1")));

        assertEquals(Map.of("c1", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of(ScoredValue.just(farEnd, "c1")), lua.redis.zrangeWithScores(sem.leases, 0, -1),
                "the client still holds one: its lease stays");
        assertEquals(0L, lua.redis.exists(sem.places, sem.asks), "the record is gone");
    }

    @Test
    void leave_grantedWaiterWhoseClientThenHoldsNothing_removesTheClientsFieldAndLease() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("c1", 2);
        hold("c2", 1);
        sem.granted("c1:1:1", 2, farEnd);

        assertEquals(2L, leave("c1:1:1"));

        assertEquals(Map.of("c2", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("c2"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void leave_grantedWaiterOfTheLastHolder_deletesHoldsAndLeases() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("c1", 2);
        sem.granted("c1:1:1", 2, farEnd);

        assertEquals(2L, leave("c1:1:1"));

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases, sem.places, sem.asks));
    }

    @Test
    void leave_grantedWaiterAskingMoreThanItsClientStillHolds_givesBackOnlyWhatIsHeld() throws Exception {
        // c1's other permits went with an earlier release: only 1 of the 2 granted is still booked.
        lua.redis.set(sem.total, "3");
        hold("c1", 1);
        hold("c2", 1);
        sem.granted("c1:1:1", 2, farEnd);

        assertEquals(2L, leave("c1:1:1"));

        assertEquals(Map.of("c2", "1", ":sum", "1"), lua.redis.hgetall(sem.holds),
                "':sum' drops by what c1 held, not by the ask");
        assertEquals(List.of("c2"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void leave_grantedWaiter_passesItsPermitsOnToTheLine() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("c1", 2);
        sem.granted("c1:1:1", 2, farEnd);
        asking(1, "c2:1:1", "c3:1:1", "c4:1:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(2L, leave("c1:1:1")),
                "granted:c2:1:1", "granted:c3:1:1");

        assertEquals(List.of("c4:1:1"), sem.queueOrder());
        assertEquals(Map.of("c2", "1", "c3", "1", ":sum", "2"), lua.redis.hgetall(sem.holds));
        assertEquals(List.of("c2", "c3"), lua.redis.zrange(sem.leases, 0, -1));
        assertEquals(Map.of("c2:1:1", "1", "c3:1:1", "1", "c4:1:1", "1"), sem.asks(),
                "grant records for the served, an ask for the one still queued");
        assertEquals(List.of("c2:1:1", "c3:1:1", "c4:1:1"), lua.redis.zrange(sem.places, 0, -1));
    }

    /* --------------- serving the line --------------- */

    @Test
    void leave_firstWaiterBlockingTheLine_grantsTheNextThatFit() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 1);
        sem.asking("c1:1:1", 1, 3, farEnd);   // blocks: 2 are free
        sem.asking("c2:1:1", 2, 2, farEnd);
        sem.asking("c3:1:1", 3, 1, farEnd);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c1:1:1")), "granted:c2:1:1");

        assertEquals(List.of("c3:1:1"), sem.queueOrder());
        assertEquals(Map.of("holder", "1", "c2", "2", ":sum", "3"), lua.redis.hgetall(sem.holds));
        assertEquals(Map.of("c2:1:1", "2", "c3:1:1", "1"), sem.asks());
    }

    @Test
    void leave_firstWaiterWithAnExpiredNext_purgesItAndGrantsTheFirstLiveWaiter() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 1);
        sem.asking("c1:1:1", 1, 3, farEnd);
        sem.asking("dead:1:1", 2, 1, 0);   // stopped renewing long ago
        sem.asking("c3:1:1", 3, 2, farEnd);

        // Had the dead waiter been granted, its message would come first.
        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c1:1:1")), "granted:c3:1:1");

        assertEquals(0L, lua.redis.exists(sem.queue));
        assertEquals(List.of("c3:1:1"), lua.redis.zrange(sem.places, 0, -1));
        assertEquals(Map.of("c3:1:1", "2"), sem.asks());
        assertEquals(Map.of("holder", "1", "c3", "2", ":sum", "3"), lua.redis.hgetall(sem.holds));
    }

    @Test
    void leave_notFirst_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 1);
        sem.asking("c1:1:1", 1, 3, farEnd);
        sem.asking("c2:1:1", 2, 1, farEnd);
        sem.asking("c3:1:1", 3, 1, farEnd);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c2:1:1")));

        assertEquals(List.of("c1:1:1", "c3:1:1"), sem.queueOrder());
    }

    @Test
    void leave_lastWaiter_publishesNothing() throws Exception {
        asking(1, "c1:1:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c1:1:1")));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks));
    }

    @Test
    void leave_waiterWithNoPlace_stillPurgesAndServesTheLine() throws Exception {
        // A holder's lease ran out with nobody serving the line yet.
        lua.redis.set(sem.total, "1");
        sem.hold("dead", 1, 0, LONG_LEASE_MS);
        asking(1, "c1:1:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(0L, leave("c9:1:1")), "granted:c1:1:1");

        assertEquals(Map.of("c1", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
        assertEquals(0L, lua.redis.exists(sem.queue));
    }

    @Test
    void leave_firstWaiterAsksMoreThanTheTotal_isToldByBareName() throws Exception {
        // c2:1:1 asked for 3 before the total shrank to 2: once first, it learns so; c3:1:1 waits behind it.
        lua.redis.set(sem.total, "2");
        hold("holder", 1);
        sem.asking("c1:1:1", 1, 2, farEnd);
        sem.asking("c2:1:1", 2, 3, farEnd);
        sem.asking("c3:1:1", 3, 1, farEnd);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c1:1:1")), "c2:1:1");

        assertEquals(List.of("c2:1:1", "c3:1:1"), sem.queueOrder());
        assertEquals(Map.of("holder", "1", ":sum", "1"), lua.redis.hgetall(sem.holds));
    }
}
