package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    void leave_queuedWaiter_givesBackNothingOfItsClientsOtherGrants() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("c1:1:1", 2);
        asking(1, "c1:2:1");

        assertEquals(1L, leave("c1:2:1"));

        assertEquals(Map.of("c1:1:1", "2", "c1:2:1", "0", ":sum", "2"), sem.holdings(),
                "the other grant is untouched; the leaver is marked given up");
    }

    /* --------------- the given-up mark --------------- */

    /** A leave marks the acquisition given up (0 permits) for keep_ms, so that a late run of it changes nothing. */
    @Test
    void leave_nothingThere_marksTheAcquisitionGivenUpForKeepMs() throws Exception {
        long before = lua.serverMillis();
        assertEquals(0L, leave("c1:1:1"));
        long after = lua.serverMillis();

        assertEquals(Map.of("c1:1:1", "0"), sem.holdings());
        double end = lua.redis.zscore(sem.leases, "c1:1:1");
        assertTrue(end >= before + KEEP_MS && end <= after + KEEP_MS, "marked until keep_ms from now: " + end);
        sem.assertTtlCovers(sem.holds, KEEP_MS, before);
        assertEquals(0L, lua.redis.exists(sem.total, sem.queue, sem.places, sem.asks));
    }

    /** Leaving twice is leaving once. */
    @Test
    void leave_twice_givesBackOnce() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("c1:1:1", 2);
        hold("c2:1:1", 1);

        assertEquals(2L, leave("c1:1:1"));
        assertEquals(0L, leave("c1:1:1"));

        assertEquals(Map.of("c1:1:1", "0", "c2:1:1", "1", ":sum", "1"), sem.holdings());
    }

    @Test
    void leave_waiterWithNoPlace_returnsZeroAndLeavesTheLineAsItIs() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 1);
        asking(1, "c1:1:1");

        sem.assertPublishes(() -> assertEquals(0L, leave("c9:1:1")));

        assertEquals(List.of("c1:1:1"), sem.queueOrder());
        assertEquals(List.of(ScoredValue.just(farEnd, "c1:1:1")), sem.placeEnds());
        assertEquals(Map.of("c1:1:1", "1"), sem.asks());
        assertEquals(Map.of("holder", "1", "c9:1:1", "0", ":sum", "1"), sem.holdings());
    }

    /* --------------- a waiter holding a grant --------------- */

    /** Served from the line and not yet claimed (or its acquire's reply was lost): the grant goes back. */
    @Test
    void leave_waiterHoldingAGrant_returnsTwoAndGivesItBack() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("c1:1:1", 2);
        hold("c1:2:1", 1);

        sem.assertPublishes(() -> assertEquals(2L, leave("c1:1:1")));

        assertEquals(Map.of("c1:1:1", "0", "c1:2:1", "1", ":sum", "1"), sem.holdings(),
                "the client's other grant stays");
    }

    @Test
    void leave_grantExpiredButNotYetPurged_isPurgedAndNotCountedTwice() throws Exception {
        lua.redis.set(sem.total, "2");
        sem.hold("c1:1:1", 2, 0, LONG_LEASE_MS);

        assertEquals(0L, leave("c1:1:1"));

        assertEquals(Map.of("c1:1:1", "0", ":sum", "0"), sem.holdings());
    }

    @Test
    void leave_waiterHoldingAGrant_passesItsPermitsOnToTheLine() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("c1:1:1", 2);
        asking(1, "c2:1:1", "c3:1:1", "c4:1:1");

        sem.assertPublishes(() -> assertEquals(2L, leave("c1:1:1")),
                "granted:c2:1:1", "granted:c3:1:1");

        assertEquals(List.of("c4:1:1"), sem.queueOrder());
        assertEquals(Map.of("c1:1:1", "0", "c2:1:1", "1", "c3:1:1", "1", ":sum", "2"), sem.holdings());
        assertEquals(Map.of("c4:1:1", "1"), sem.asks(), "an ask only for the one still queued");
        assertEquals(List.of("c4:1:1"), lua.redis.zrange(sem.places, 0, -1));
    }

    /* --------------- serving the line --------------- */

    @Test
    void leave_firstWaiterBlockingTheLine_grantsTheNextThatFit() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 1);
        sem.asking("c1:1:1", 1, 3, farEnd);   // blocks: 2 are free
        sem.asking("c2:1:1", 2, 2, farEnd);
        sem.asking("c3:1:1", 3, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(1L, leave("c1:1:1")), "granted:c2:1:1");

        assertEquals(List.of("c3:1:1"), sem.queueOrder());
        assertEquals(Map.of("holder", "1", "c1:1:1", "0", "c2:1:1", "2", ":sum", "3"), sem.holdings());
        assertEquals(Map.of("c3:1:1", "1"), sem.asks());
    }

    @Test
    void leave_firstWaiterWithAnExpiredNext_purgesItAndGrantsTheFirstLiveWaiter() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 1);
        sem.asking("c1:1:1", 1, 3, farEnd);
        sem.asking("dead:1:1", 2, 1, 0);   // stopped renewing long ago
        sem.asking("c3:1:1", 3, 2, farEnd);

        // Had the dead waiter been granted, its message would come first.
        sem.assertPublishes(() -> assertEquals(1L, leave("c1:1:1")), "granted:c3:1:1");

        assertEquals(0L, lua.redis.exists(sem.queue));
        assertEquals(0L, lua.redis.exists(sem.places, sem.asks));
        assertEquals(Map.of("holder", "1", "c1:1:1", "0", "c3:1:1", "2", ":sum", "3"), sem.holdings());
    }

    @Test
    void leave_notFirst_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 1);
        sem.asking("c1:1:1", 1, 3, farEnd);
        sem.asking("c2:1:1", 2, 1, farEnd);
        sem.asking("c3:1:1", 3, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(1L, leave("c2:1:1")));

        assertEquals(List.of("c1:1:1", "c3:1:1"), sem.queueOrder());
    }

    @Test
    void leave_lastWaiter_publishesNothing() throws Exception {
        asking(1, "c1:1:1");

        sem.assertPublishes(() -> assertEquals(1L, leave("c1:1:1")));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places, sem.asks));
    }

    @Test
    void leave_waiterWithNoPlace_stillPurgesAndServesTheLine() throws Exception {
        // A holder's lease ran out with nobody serving the line yet.
        lua.redis.set(sem.total, "1");
        sem.hold("dead", 1, 0, LONG_LEASE_MS);
        asking(1, "c1:1:1");

        sem.assertPublishes(() -> assertEquals(0L, leave("c9:1:1")), "granted:c1:1:1");

        assertEquals(Map.of("c1:1:1", "1", "c9:1:1", "0", ":sum", "1"), sem.holdings());
        assertEquals(0L, lua.redis.exists(sem.queue));
    }

    @Test
    void leave_firstWaiterAsksMoreThanTheTotal_isToldByBareNameAndLeavesTheLineForTheNext() throws Exception {
        // c2:1:1 asked for 3 before the total shrank to 2: once first, it learns so and leaves the
        // line; c3:1:1 behind it gets the free permit.
        lua.redis.set(sem.total, "2");
        hold("holder", 1);
        sem.asking("c1:1:1", 1, 2, farEnd);
        sem.asking("c2:1:1", 2, 3, farEnd);
        sem.asking("c3:1:1", 3, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(1L, leave("c1:1:1")), "c2:1:1", "granted:c3:1:1");

        assertEquals(List.of(), sem.queueOrder());
        assertEquals(Map.of("holder", "1", "c1:1:1", "0", "c3:1:1", "1", ":sum", "2"), sem.holdings());
        assertEquals(Boolean.TRUE, lua.redis.hexists(sem.holds, ":over"), "a growth will wake c2:1:1");
    }
}
