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
 * zero, and only growth wakes the first queued waiter, by name.
 */
@Tag("redis")
class SemaphoreAddLuaTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String total;
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
        queue = base + ":queue";
        wakeups = base + ":wake";
    }

    /** Queues the waiters in the given order. */
    private void queued(String... waiters) {
        for (int i = 0; i < waiters.length; i++) {
            lua.redis.zadd(queue, i + 1, waiters[i]);
        }
    }

    private List<Object> add(long delta) throws Exception {
        return lua.run(Script.SEMAPHORE_ADD, new String[] {total, queue, wakeups}, Long.toString(delta));
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

        assertEquals(0L, lua.redis.exists(total, queue));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void add_growthWithQueuedWaiters_wakesTheFirstByName() throws Exception {
        lua.redis.set(total, "1");
        queued("c1:1", "c2:7", "c3:4");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, 3L), add(2));

            assertEquals("c1:1", subscription.next(), "only the first waiter is woken, by name");
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c1:1", "c2:7", "c3:4"), lua.redis.zrange(queue, 0, -1), "the queue is not touched");
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
