package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.synchronizers.redis.script.LuaHarness.Subscription;
import dev.synchronizers.testkit.RedisExtension;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code semaphore-add.lua} against a real server: the total grows and shrinks but never below
 * zero, and only growth wakes waiters, by name: as many from the front of the queue as permits are
 * free (the new total less {@code :sum}), at most 64, in queue order.
 */
@Tag("redis")
class SemaphoreAddLuaTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String total;
    private String holds;
    private String queue;
    private String wakeups;

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
        queue = base + ":queue";
        wakeups = base + ":wake";
    }

    /** Queues the waiters in the given order. */
    private void queued(String... waiters) {
        for (int i = 0; i < waiters.length; i++) {
            lua.redis.zadd(queue, i + 1, waiters[i]);
        }
    }

    /** Books permits for a client, as an acquire would (no lease: add.lua reads only {@code :sum}). */
    private void hold(String client, long permits) {
        lua.redis.hincrby(holds, client, permits);
        lua.redis.hincrby(holds, ":sum", permits);
    }

    private List<Object> add(long delta) throws Exception {
        return lua.run(Script.SEMAPHORE_ADD, new String[] {total, holds, queue, wakeups}, Long.toString(delta));
    }

    /* --------------- the total --------------- */

    @Test
    void add_positive_growsTheTotalWhichKeepsNoTtl() throws Exception {
        lua.redis.set(total, "3");

        assertEquals(List.of(1L, 5L), add(2));

        assertEquals("5", lua.redis.get(total));
        assertEquals(-1L, lua.redis.pttl(total), "the total persists until deleted");
    }

    @Test
    void add_negative_shrinksTheTotal() throws Exception {
        lua.redis.set(total, "5");

        assertEquals(List.of(1L, 3L), add(-2));

        assertEquals("3", lua.redis.get(total));
        assertEquals(-1L, lua.redis.pttl(total));
    }

    @Test
    void add_shrinkToExactlyZero_isAllowed() throws Exception {
        lua.redis.set(total, "2");

        assertEquals(List.of(1L, 0L), add(-2));

        assertEquals("0", lua.redis.get(total));
    }

    @Test
    void add_shrinkBelowZero_returnsZeroAndTheTotalAndChangesNothing() throws Exception {
        lua.redis.set(total, "2");
        queued("c1:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(0L, 2L), add(-3));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals("2", lua.redis.get(total));
        assertEquals(List.of("c1:1"), lua.redis.zrange(queue, 0, -1));
    }

    @Test
    void add_absentTotal_growsFromZero() throws Exception {
        assertEquals(List.of(1L, 4L), add(4));

        assertEquals("4", lua.redis.get(total));
    }

    @Test
    void add_shrinkAbsentTotal_isRefusedAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, 0L), add(-1));

        assertEquals(0L, lua.redis.exists(total, holds, queue));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void add_twoWithFourWaitersAndTwoFree_wakesTheFirstTwoInOrder() throws Exception {
        lua.redis.set(total, "3");
        hold("holder", 3);
        queued("c1:1", "c2:7", "c3:4", "c4:2");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 5L), add(2));

            assertEquals("c1:1", subscription.next());
            assertEquals("c2:7", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c1:1", "c2:7", "c3:4", "c4:2"), lua.redis.zrange(queue, 0, -1),
                "the queue is not touched");
        assertEquals("3", lua.redis.hget(holds, ":sum"), "the holdings are not touched");
    }

    @Test
    void add_growthWithNoHolder_wakesAsManyAsTheNewTotal() throws Exception {
        lua.redis.set(total, "1");
        queued("c1:1", "c2:7", "c3:4", "c4:2");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 3L), add(2));

            assertEquals("c1:1", subscription.next(), "an absent holds hash counts as nothing held");
            assertEquals("c2:7", subscription.next());
            assertEquals("c3:4", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(holds), "no holds hash is created");
    }

    @Test
    void add_growthThatLeavesExactlyNothingFree_publishesNothing() throws Exception {
        // 4 held of a total shrunk to 2: growing by 2 makes 4 of 4.
        lua.redis.set(total, "2");
        hold("holder", 4);
        queued("c1:1", "c2:1", "c3:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 4L), add(2));

            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void add_growthThatLeavesMoreHeldThanTheTotal_publishesNothing() throws Exception {
        lua.redis.set(total, "1");
        hold("holder", 5);
        queued("c1:1", "c2:1", "c3:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 2L), add(1));

            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void add_seventyWaitersAndAHundredFree_wakesTheFirstSixtyFourInOrder() throws Exception {
        String[] names = new String[70];
        for (int i = 0; i < names.length; i++) {
            names[i] = String.format("w%02d:1", i);
        }
        queued(names);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 100L), add(100));

            for (int i = 0; i < 64; i++) {
                assertEquals(names[i], subscription.next(), "wake-up " + i);
            }
            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void add_growthWithEmptyQueue_publishesNothing() throws Exception {
        lua.redis.set(total, "1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 2L), add(1));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(queue), "no queue is created");
    }

    @Test
    void add_shrinkWithQueuedWaiters_publishesNothing() throws Exception {
        lua.redis.set(total, "4");
        queued("c1:1", "c2:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 3L), add(-1));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c1:1", "c2:1"), lua.redis.zrange(queue, 0, -1));
    }

    @Test
    void add_zeroWithQueuedWaiters_publishesNothing() throws Exception {
        lua.redis.set(total, "4");
        queued("c1:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 4L), add(0));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals("4", lua.redis.get(total));
    }
}
