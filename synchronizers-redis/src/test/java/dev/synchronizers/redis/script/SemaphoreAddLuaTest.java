package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-add.lua} against a real server: the total grows and shrinks but never below
 * zero, and any change purges expired leases and places and serves the line with the permits then
 * free (the new total less {@code :sum}): from the front of the queue, in order, each waiter whose
 * ask fits is granted, booked under its client and named in a {@code granted:<waiter>} message.
 */
@Tag("redis")
class SemaphoreAddLuaTest extends LuaTestBase {

    private SemaphoreFixture sem;
    /** A lease or place end no test reaches, read from the server's clock. */
    private long farEnd;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
        farEnd = lua.farEnd();
    }

    /** Queues the waiters in the given order, each asking for one permit, with places ending at {@link #farEnd}. */
    private void asking(String... waiters) {
        sem.asking(1, farEnd, waiters);
    }

    /** Books permits for a client whose lease ends at {@link #farEnd}; the keys live long. */
    private void hold(String client, long permits) {
        sem.hold(client, permits, farEnd, LONG_LEASE_MS);
    }

    private List<Object> add(long delta) throws Exception {
        return lua.run(Script.SEMAPHORE_ADD, sem.keys(), Long.toString(delta));
    }

    private static String[] grantedMessages(String... waiters) {
        return Arrays.stream(waiters).map(waiter -> "granted:" + waiter).toArray(String[]::new);
    }

    /* --------------- the total --------------- */

    @Test
    void add_positive_growsTheTotalWhichKeepsNoTtl() throws Exception {
        lua.redis.set(sem.total, "3");

        assertEquals(List.of(1L, 5L), add(2));

        assertEquals("5", lua.redis.get(sem.total));
        assertEquals(-1L, lua.redis.pttl(sem.total), "the total persists until deleted");
    }

    @Test
    void add_negative_shrinksTheTotal() throws Exception {
        lua.redis.set(sem.total, "5");

        assertEquals(List.of(1L, 3L), add(-2));

        assertEquals("3", lua.redis.get(sem.total));
        assertEquals(-1L, lua.redis.pttl(sem.total));
    }

    @Test
    void add_shrinkToExactlyZero_isAllowed() throws Exception {
        lua.redis.set(sem.total, "2");

        assertEquals(List.of(1L, 0L), add(-2));

        assertEquals("0", lua.redis.get(sem.total));
    }

    @Test
    void add_shrinkBelowZero_returnsZeroAndTheTotalAndChangesNothing() throws Exception {
        lua.redis.set(sem.total, "2");
        sem.hold("dead", 1, 0, LONG_LEASE_MS);
        asking("c1:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(0L, 2L), add(-3)));

        assertEquals("2", lua.redis.get(sem.total));
        assertEquals(List.of("c1:1:1"), sem.queueOrder());
        assertEquals(Map.of("dead", "1", ":sum", "1"), sem.holdings(), "not even the purge runs");
    }

    @Test
    void add_absentTotal_growsFromZero() throws Exception {
        assertEquals(List.of(1L, 4L), add(4));

        assertEquals("4", lua.redis.get(sem.total));
    }

    @Test
    void add_shrinkAbsentTotal_isRefusedAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, 0L), add(-1));

        assertEquals(0L, lua.redis.exists(sem.total, sem.holds, sem.leases, sem.queue, sem.places, sem.asks));
    }

    /* --------------- serving the line --------------- */

    @Test
    void add_twoWithFourWaitersAndTwoFree_grantsTheFirstTwoInOrder() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 3);
        asking("c1:1:1", "c2:7:1", "c3:4:1", "c4:2:1");

        sem.assertPublishes(() -> assertEquals(List.of(1L, 5L), add(2)),
                grantedMessages("c1:1:1", "c2:7:1"));

        assertEquals(List.of("c3:4:1", "c4:2:1"), sem.queueOrder());
        assertEquals(Map.of("holder", "3", "c1:1:1", "1", "c2:7:1", "1", ":sum", "5"), sem.holdings(),
                "each served waiter holds a grant under its own name");
        assertEquals(List.of("c1:1:1", "c2:7:1", "holder"), lua.redis.zrange(sem.leases, 0, -1));
        assertEquals(Map.of("c3:4:1", "1", "c4:2:1", "1"), sem.asks(), "asks only for those still queued");
        assertEquals(2L, lua.redis.zcard(sem.places));
    }

    @Test
    void add_growthWithNoHolder_grantsAsManyAsTheNewTotal() throws Exception {
        lua.redis.set(sem.total, "0");
        asking("c1:1:1", "c2:7:1", "c3:4:1", "c4:2:1");

        // An absent holds hash counts as nothing held.
        long before = lua.serverMillis();
        sem.assertPublishes(() -> assertEquals(List.of(1L, 3L), add(3)),
                grantedMessages("c1:1:1", "c2:7:1", "c3:4:1"));

        assertEquals(List.of("c4:2:1"), sem.queueOrder());
        assertEquals(Map.of("c1:1:1", "1", "c2:7:1", "1", "c3:4:1", "1", ":sum", "3"), sem.holdings());
        sem.assertTtlCovers(sem.holds, farEnd - before, before);
        sem.assertTtlCovers(sem.leases, farEnd - before, before);
    }

    @Test
    void add_growthButTheFirstAskStillDoesNotFit_grantsNobody() throws Exception {
        lua.redis.set(sem.total, "2");
        hold("holder", 2);
        sem.asking("c1:1:1", 1, 3, farEnd);
        sem.asking("c2:1:1", 2, 1, farEnd);   // would fit, but waits behind c1:1:1

        sem.assertPublishes(() -> assertEquals(List.of(1L, 3L), add(1)));

        assertEquals(List.of("c1:1:1", "c2:1:1"), sem.queueOrder());
        assertEquals(Map.of("holder", "2", ":sum", "2"), sem.holdings());
    }

    @Test
    void add_growthThatLeavesExactlyNothingFree_publishesNothing() throws Exception {
        // 4 held of a total shrunk to 2: growing by 2 makes 4 of 4.
        lua.redis.set(sem.total, "2");
        hold("holder", 4);
        asking("c1:1:1", "c2:1:1", "c3:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(1L, 4L), add(2)));

        assertEquals(List.of("c1:1:1", "c2:1:1", "c3:1:1"), sem.queueOrder());
    }

    @Test
    void add_growthThatLeavesMoreHeldThanTheTotal_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 5);
        asking("c1:1:1", "c2:1:1", "c3:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(1L, 2L), add(1)));

        assertEquals(List.of("c1:1:1", "c2:1:1", "c3:1:1"), sem.queueOrder());
    }

    @Test
    void add_seventyWaitersAndAHundredFree_grantsAllSeventyInOrder() throws Exception {
        String[] names = SemaphoreFixture.waiters(70);
        asking(names);

        sem.assertPublishes(() -> assertEquals(List.of(1L, 100L), add(100)), grantedMessages(names));

        assertEquals(0L, lua.redis.exists(sem.queue));
        assertEquals("70", lua.redis.hget(sem.holds, ":sum"));
    }

    @Test
    void add_growthWithEmptyQueue_publishesNothingAndCreatesNothing() throws Exception {
        lua.redis.set(sem.total, "1");

        sem.assertPublishes(() -> assertEquals(List.of(1L, 2L), add(1)));

        assertEquals(0L, lua.redis.exists(sem.holds, sem.leases, sem.queue, sem.places, sem.asks),
                "no holdings or queue are created");
    }

    @Test
    void add_growthAfterAHolderDied_purgesItAndGrantsItsPermitsToo() throws Exception {
        lua.redis.set(sem.total, "2");
        sem.hold("dead", 2, 0, LONG_LEASE_MS);   // stopped renewing long ago
        sem.asking("c1:1:1", 1, 3, farEnd);

        sem.assertPublishes(() -> assertEquals(List.of(1L, 3L), add(1)), "granted:c1:1:1");

        assertEquals(Map.of("c1:1:1", "3", ":sum", "3"), sem.holdings());
        assertEquals(List.of("c1:1:1"), lua.redis.zrange(sem.leases, 0, -1));
    }

    @Test
    void add_expiredPlaces_arePurgedAndNeverGranted() throws Exception {
        lua.redis.set(sem.total, "0");
        sem.asking("dead:1:1", 1, 1, 0);
        sem.asking("c1:1:1", 2, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(List.of(1L, 2L), add(2)), "granted:c1:1:1");

        assertEquals(0L, lua.redis.exists(sem.queue));
        assertEquals(0L, lua.redis.exists(sem.places, sem.asks), "the served waiter keeps no place or ask");
        assertEquals(Map.of("c1:1:1", "1", ":sum", "1"), sem.holdings());
    }

    @Test
    void add_shrinkWithQueuedWaiters_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "4");
        hold("holder", 4);
        asking("c1:1:1", "c2:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(1L, 3L), add(-1)));

        assertEquals(List.of("c1:1:1", "c2:1:1"), sem.queueOrder());
    }

    @Test
    void add_shrinkBelowTheFirstWaitersAsk_tellsItByBareNameAndServesTheNext() throws Exception {
        // c1:1:1 asks for 4 while 2 are held: shrinking to 3 leaves 1 free, and c1:1:1 can never be
        // served: it leaves the line, marked for a growth to wake, and c2:1:1 gets the free permit.
        lua.redis.set(sem.total, "4");
        hold("holder", 2);
        sem.asking("c1:1:1", 1, 4, farEnd);
        sem.asking("c2:1:1", 2, 1, farEnd);

        sem.assertPublishes(() -> assertEquals(List.of(1L, 3L), add(-1)), "c1:1:1", "granted:c2:1:1");

        assertEquals(List.of(), sem.queueOrder(), "c1:1:1 blocks nobody");
        assertEquals(Map.of("holder", "2", "c2:1:1", "1", ":sum", "3"), sem.holdings());
        assertEquals(farEnd, Long.parseLong(lua.redis.hget(sem.holds, ":over")));

        sem.assertReleasedTo(() -> assertEquals(List.of(1L, 4L), add(1)), "c1:1:1");
        assertEquals(Boolean.FALSE, lua.redis.hexists(sem.holds, ":over"), "the woken waiter marks it again if it must");
    }

    /**
     * Total 1; waiters of two clients ask for 2 and wait out of line (two of c1, one of c3), while
     * c2:1:1 holds the permit. Growth wakes each of those clients once, on its own channel, and
     * tells nobody else (c2 holds; the shared channel carries nothing).
     */
    @Test
    void add_growthWhileWaitersOfTwoClientsAskAboveTheTotal_publishesReleasedOnceToEachOfTheirClients() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("c2:1:1", 1);
        for (String waiter : List.of("c1:1:1", "c1:2:1", "c3:1:1")) {
            assertEquals(List.of(-1L, 1L), lua.run(Script.SEMAPHORE_ACQUIRE, sem.keys(), waiter, "2", "60000",
                    "60000", "wait"));
        }

        sem.assertReleasedTo(() -> assertEquals(List.of(1L, 2L), add(1)), "c1:1:1", "c3:1:1");
    }

    @Test
    void add_zeroWithQueuedWaiters_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "4");
        hold("holder", 4);
        asking("c1:1:1");

        sem.assertPublishes(() -> assertEquals(List.of(1L, 4L), add(0)));

        assertEquals("4", lua.redis.get(sem.total));
        assertEquals(List.of("c1:1:1"), sem.queueOrder());
    }
}
