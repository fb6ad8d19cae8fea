package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.synchronizers.redis.script.LuaHarness.Subscription;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.ScoredValue;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code semaphore-leave.lua} against a real server, on semaphore queues written by hand. */
@Tag("redis")
class SemaphoreLeaveLuaTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String queue;
    private String places;
    private String wakeups;
    /** A place end no test reaches, read from the server's clock. */
    private long placeEnd;

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
        queue = base + ":queue";
        places = base + ":places";
        wakeups = base + ":wake";
        placeEnd = lua.serverMillis() + LONG_LEASE_MS;
    }

    /** Queues the waiters in the given order, each with a place no test outlives. */
    private void queued(String... waiters) {
        for (int i = 0; i < waiters.length; i++) {
            lua.redis.zadd(queue, i + 1, waiters[i]);
            lua.redis.zadd(places, placeEnd, waiters[i]);
        }
    }

    private long leave(String waiter) throws Exception {
        return lua.<Long>run(Script.SEMAPHORE_LEAVE, new String[] {queue, places, wakeups}, waiter);
    }

    /* --------------- leaving --------------- */

    @Test
    void leave_queuedWaiter_removesItFromQueueAndPlacesAndReturnsOne() throws Exception {
        queued("c1:1", "c2:1", "c3:1");

        assertEquals(1L, leave("c2:1"));

        assertEquals(List.of("c1:1", "c3:1"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of(ScoredValue.just(placeEnd, "c1:1"), ScoredValue.just(placeEnd, "c3:1")),
                lua.redis.zrangeWithScores(places, 0, -1));
    }

    @Test
    void leave_onlyWaiter_theQueueVanishes() throws Exception {
        queued("c1:1");

        assertEquals(1L, leave("c1:1"));

        assertEquals(0L, lua.redis.exists(queue, places));
    }

    @Test
    void leave_waiterNotQueued_returnsZeroAndChangesNothing() throws Exception {
        queued("c1:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(0L, leave("c9:1"));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c1:1"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of(ScoredValue.just(placeEnd, "c1:1")), lua.redis.zrangeWithScores(places, 0, -1));
    }

    @Test
    void leave_emptyQueue_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, leave("c1:1"));

        assertEquals(0L, lua.redis.exists(queue, places));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void leave_firstWaiter_wakesTheNextFirstByName() throws Exception {
        queued("c1:1", "c2:1", "c3:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, leave("c1:1"));

            assertEquals("c2:1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c2:1", "c3:1"), lua.redis.zrange(queue, 0, -1));
    }

    @Test
    void leave_firstWaiterWithAnExpiredNext_purgesItAndWakesTheFirstLiveWaiter() throws Exception {
        queued("c1:1", "dead:1", "c3:1");
        lua.redis.zadd(places, 0, "dead:1");   // stopped renewing long ago
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, leave("c1:1"));

            // Had the dead waiter been published, its message would come first.
            assertEquals("c3:1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c3:1"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of("c3:1"), lua.redis.zrange(places, 0, -1));
    }

    @Test
    void leave_notFirst_publishesNothing() throws Exception {
        queued("c1:1", "c2:1", "c3:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, leave("c2:1"));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("c1:1", "c3:1"), lua.redis.zrange(queue, 0, -1));
    }

    @Test
    void leave_lastWaiter_publishesNothing() throws Exception {
        queued("c1:1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, leave("c1:1"));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(queue, places));
    }
}
