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

/** {@code lock-force-unlock.lua} against a real server, on holds and fair queues written by hand. */
@Tag("redis")
class LockForceUnlockLuaTest {

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

    private long forceUnlock() throws Exception {
        return lua.<Long>run(Script.LOCK_FORCE_UNLOCK, new String[] {lock, queue, places, wakeups});
    }

    /* --------------- release --------------- */

    @Test
    void forceUnlock_heldLock_deletesWhateverHolderAndReturnsOne() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(lock));
    }

    @Test
    void forceUnlock_heldWithoutTtl_deletesAndReturnsOne() throws Exception {
        lua.redis.hset(lock, "owner-a", "1001");

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(lock));
    }

    @Test
    void forceUnlock_freeLock_returnsZeroAndCreatesNothing() throws Exception {
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(0L, forceUnlock());

            assertEquals(0L, lua.redis.exists(lock));
            subscription.assertNothingMore(lua.redis);
        }
    }

    /* --------------- wake-ups --------------- */

    @Test
    void forceUnlock_withWaiter_publishesReleased() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, forceUnlock());

            assertEquals("released", subscription.next());
            subscription.assertNothingMore(lua.redis);
            assertEquals(0L, lua.redis.exists(lock));
        }
    }

    @Test
    void forceUnlock_withoutWaiter_publishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, forceUnlock());

            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void forceUnlock_withQueuedFairWaiter_publishesItsOwner() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = farPlaceEnd();
        queued("fair-b", 1, end);
        queued("fair-c", 2, end);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, forceUnlock());

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
    void forceUnlock_expiredHeadOfQueue_isPurgedAndTheNextLiveWaiterIsWoken() throws Exception {
        hold(Map.of("owner-a", "1001"));
        queued("fair-dead", 1, 0);   // a place that ended long ago
        queued("fair-b", 2, farPlaceEnd());
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, forceUnlock());

            // Had the dead waiter been published, its message would come first.
            assertEquals("fair-b", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("fair-b"), lua.redis.zrange(queue, 0, -1));
        assertEquals(List.of("fair-b"), lua.redis.zrange(places, 0, -1));
    }

    @Test
    void forceUnlock_onlyExpiredWaiters_purgesThemAndPublishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        queued("fair-dead", 1, 0);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, forceUnlock());

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(lock, queue, places), "the purged keys are empty, so gone");
    }

    @Test
    void forceUnlock_withWaitingMarkAndQueuedFairWaiter_publishesBoth() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        queued("fair-b", 1, farPlaceEnd());
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, forceUnlock());

            assertEquals("released", subscription.next());
            assertEquals("fair-b", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void forceUnlock_freeLockWithQueuedFairWaiter_returnsZeroAndLeavesQueue() throws Exception {
        long end = farPlaceEnd();
        queued("fair-b", 1, end);
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(0L, forceUnlock());

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of(ScoredValue.just(end, "fair-b")), lua.redis.zrangeWithScores(places, 0, -1));
        assertEquals(List.of("fair-b"), lua.redis.zrange(queue, 0, -1));
    }
}
