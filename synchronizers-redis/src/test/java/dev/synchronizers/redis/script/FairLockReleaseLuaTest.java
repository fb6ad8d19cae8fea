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

/** {@code fair-lock-release.lua} against a real server, on holds and fair queues written by hand. */
@Tag("redis")
class FairLockReleaseLuaTest {

    private static final long LEASE_MS = 60_000;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String lock;
    private String queue;
    private String places;
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
        lock = LuaHarness.uniqueName(test);
        queue = lock + ":queue";
        places = lock + ":places";
        wakeups = lock + ":wake";
    }

    private void hold(Map<String, String> fields) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, LEASE_MS);
    }

    /** Queues a fair waiter at {@code order} whose place ends at {@code placeEndMs} (server time). */
    private void queued(String owner, long order, long placeEndMs) {
        lua.redis.zadd(queue, order, owner);
        lua.redis.zadd(places, placeEndMs, owner);
    }

    /** A place end no test reaches. */
    private long farPlaceEnd() {
        return lua.serverMillis() + LONG_LEASE_MS;
    }

    private List<Object> release(String owner, String token) throws Exception {
        return lua.run(Script.FAIR_LOCK_RELEASE, new String[] {lock, queue, places, wakeups}, owner, token);
    }

    /* --------------- who may release --------------- */

    @Test
    void release_rightOwnerAndToken_deletesHashAndReturnsOneAndNoWaiter() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(List.of(1L, ""), release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(lock));
        assertEquals(0L, lua.redis.exists(queue, places), "an empty queue is not created");
    }

    @Test
    void release_wrongToken_returnsZeroAndKeepsHold() throws Exception {
        // A late release of an older hold of the same owner, whose newer hold has token 1002.
        hold(Map.of("owner-a", "1002"));

        assertEquals(List.of(0L, ""), release("owner-a", "1001"));

        assertKept(Map.of("owner-a", "1002"));
    }

    @Test
    void release_wrongOwner_returnsZeroAndKeepsHold() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(List.of(0L, ""), release("owner-b", "1001"));

        assertKept(Map.of("owner-a", "1001"));
    }

    @Test
    void release_freeLock_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(lock, queue, places));
    }

    /* --------------- wake-ups: non-fair waiters --------------- */

    @Test
    void release_withWaiter_publishesReleased() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, ""), release("owner-a", "1001"));

            assertEquals("released", subscription.next());
            subscription.assertNothingMore(lua.redis);
            assertEquals(0L, lua.redis.exists(lock));
        }
    }

    @Test
    void release_withoutWaiter_publishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, ""), release("owner-a", "1001"));

            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void release_wrongTokenWithWaiter_publishesNothingAndKeepsMark() throws Exception {
        hold(Map.of("owner-a", "1002", ":waiting", "1"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(0L, ""), release("owner-a", "1001"));

            subscription.assertNothingMore(lua.redis);
            assertKept(Map.of("owner-a", "1002", ":waiting", "1"));
        }
    }

    /* --------------- wake-ups: fair waiters --------------- */

    @Test
    void release_withQueuedFairWaiter_publishesAndReturnsItsOwner() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = farPlaceEnd();
        queued("fair-b", 1, end);
        queued("fair-c", 2, end);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, "fair-b"), release("owner-a", "1001"));

            assertEquals("fair-b", subscription.next(), "the first waiter is woken by name");
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(lock));
        assertEquals(List.of("fair-b", "fair-c"), lua.redis.zrange(queue, 0, -1),
                "the woken waiter keeps its place until it acquires");
        assertEquals(List.of(ScoredValue.just(end, "fair-b"), ScoredValue.just(end, "fair-c")),
                lua.redis.zrangeWithScores(places, 0, -1));
    }

    @Test
    void release_expiredHeadOfQueue_isPurgedAndTheNextLiveWaiterIsWoken() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = farPlaceEnd();
        queued("fair-dead", 1, 0);   // a place that ended long ago
        queued("fair-b", 2, end);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, "fair-b"), release("owner-a", "1001"));

            // Had the dead waiter been published, its message would come first.
            assertEquals("fair-b", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("fair-b"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of("fair-b"), lua.redis.zrange(places, 0, -1));
    }

    @Test
    void release_onlyExpiredWaiters_purgesThemAndPublishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        queued("fair-dead", 1, 0);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, ""), release("owner-a", "1001"));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(lock, queue, places), "the purged keys are empty, so gone");
    }

    @Test
    void release_withWaitingMarkAndQueuedFairWaiter_publishesBoth() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        queued("fair-b", 1, farPlaceEnd());
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, "fair-b"), release("owner-a", "1001"));

            assertEquals("released", subscription.next());
            assertEquals("fair-b", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void release_wrongTokenWithQueuedFairWaiter_publishesNothingAndKeepsQueue() throws Exception {
        hold(Map.of("owner-a", "1002"));
        long end = farPlaceEnd();
        queued("fair-b", 1, end);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(0L, ""), release("owner-a", "1001"));

            subscription.assertNothingMore(lua.redis);
        }
        assertKept(Map.of("owner-a", "1002"));
        assertEquals(List.of("fair-b"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of(ScoredValue.just(end, "fair-b")), lua.redis.zrangeWithScores(places, 0, -1));
    }

    private void assertKept(Map<String, String> fields) {
        assertEquals(fields, lua.redis.hgetall(lock));
        long pttl = lua.redis.pttl(lock);
        assertTrue(pttl > 0 && pttl <= LEASE_MS, () -> "lock PTTL " + pttl);
    }
}
