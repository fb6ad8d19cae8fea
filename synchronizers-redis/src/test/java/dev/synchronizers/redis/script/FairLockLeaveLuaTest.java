package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

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

/** {@code fair-lock-leave.lua} against a real server, on holds and fair queues written by hand. */
@Tag("redis")
class FairLockLeaveLuaTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String lock;
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
        lock = LuaHarness.uniqueName(test);
        queue = lock + ":queue";
        places = lock + ":places";
        wakeups = lock + ":wake";
        placeEnd = lua.serverMillis() + LONG_LEASE_MS;
    }

    /** Queues the owners in the given order, each with a place no test outlives. */
    private void queued(String... owners) {
        for (int i = 0; i < owners.length; i++) {
            lua.redis.zadd(queue, i + 1, owners[i]);
            lua.redis.zadd(places, placeEnd, owners[i]);
        }
    }

    private void held() {
        lua.redis.hset(lock, Map.of("holder", "1001"));
        lua.redis.pexpire(lock, LONG_LEASE_MS);
    }

    private long leave(String owner) throws Exception {
        return lua.<Long>run(Script.FAIR_LOCK_LEAVE, new String[] {lock, queue, places, wakeups}, owner);
    }

    /* --------------- leaving --------------- */

    @Test
    void leave_queuedOwner_removesItFromQueueAndPlacesAndReturnsOne() throws Exception {
        held();
        queued("owner-a", "owner-b", "owner-c");

        assertEquals(1L, leave("owner-b"));

        assertEquals(List.of("owner-a", "owner-c"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-a"), ScoredValue.just(placeEnd, "owner-c")),
                lua.redis.zrangeWithScores(places, 0, -1));
        assertEquals(Map.of("holder", "1001"), lua.redis.hgetall(lock), "the hold is not touched");
    }

    @Test
    void leave_onlyWaiter_theQueueVanishes() throws Exception {
        held();
        queued("owner-a");

        assertEquals(1L, leave("owner-a"));

        assertEquals(0L, lua.redis.exists(queue, places));
    }

    @Test
    void leave_ownerNotQueued_returnsZeroAndChangesNothing() throws Exception {
        queued("owner-a");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(0L, leave("owner-x"));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("owner-a"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-a")), lua.redis.zrangeWithScores(places, 0, -1));
    }

    @Test
    void leave_emptyQueue_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, leave("owner-a"));

        assertEquals(0L, lua.redis.exists(lock, queue, places));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void leave_headOfQueueOnFreeLock_wakesTheNextHeadByName() throws Exception {
        queued("owner-a", "owner-b", "owner-c");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, leave("owner-a"));

            assertEquals("owner-b", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(lock), "leaving acquires nothing");
        assertEquals(List.of("owner-b", "owner-c"), lua.redis.zrange(queue, 0, -1));
    }

    @Test
    void leave_headOfQueueOnHeldLock_publishesNothing() throws Exception {
        held();
        queued("owner-a", "owner-b");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, leave("owner-a"));

            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void leave_notHeadOnFreeLock_publishesNothing() throws Exception {
        queued("owner-a", "owner-b", "owner-c");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, leave("owner-b"));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("owner-a", "owner-c"), lua.redis.zrange(queue, 0, -1));
    }

    @Test
    void leave_lastWaiterOnFreeLock_publishesNothing() throws Exception {
        queued("owner-a");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, leave("owner-a"));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(queue, places));
    }
}
