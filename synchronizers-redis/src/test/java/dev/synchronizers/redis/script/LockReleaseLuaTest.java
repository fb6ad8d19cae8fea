package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.script.LuaHarness.Subscription;
import dev.synchronizers.testkit.RedisExtension;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code lock-release.lua} against a real server, on holds written by hand. */
@Tag("redis")
class LockReleaseLuaTest {

    private static final long LEASE_MS = 60_000;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String lock;
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
        wakeups = lock + ":wake";
    }

    private void hold(Map<String, String> fields) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, LEASE_MS);
    }

    private long release(String owner, String token) throws Exception {
        return lua.<Long>run(Script.LOCK_RELEASE, new String[] {lock, wakeups}, owner, token);
    }

    /* --------------- who may release --------------- */

    @Test
    void release_rightOwnerAndToken_deletesHashAndReturnsOne() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(1L, release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(lock));
    }

    @Test
    void release_wrongToken_returnsZeroAndKeepsHold() throws Exception {
        // A late release of an older hold of the same owner, whose newer hold has token 1002.
        hold(Map.of("owner-a", "1002"));

        assertEquals(0L, release("owner-a", "1001"));

        assertKept(Map.of("owner-a", "1002"));
    }

    @Test
    void release_wrongOwner_returnsZeroAndKeepsHold() throws Exception {
        hold(Map.of("owner-a", "1001"));

        assertEquals(0L, release("owner-b", "1001"));

        assertKept(Map.of("owner-a", "1001"));
    }

    @Test
    void release_freeLock_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(lock));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void release_withWaiter_publishesReleased() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, release("owner-a", "1001"));

            assertEquals("released", subscription.next());
            assertEquals(0L, lua.redis.exists(lock));
        }
    }

    @Test
    void release_withoutWaiter_publishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, release("owner-a", "1001"));

            // Pub/Sub keeps order: had the script published, its message would come first.
            lua.redis.publish(wakeups, "sentinel");
            assertEquals("sentinel", subscription.next());
        }
    }

    @Test
    void release_wrongTokenWithWaiter_publishesNothingAndKeepsMark() throws Exception {
        hold(Map.of("owner-a", "1002", ":waiting", "1"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(0L, release("owner-a", "1001"));

            lua.redis.publish(wakeups, "sentinel");
            assertEquals("sentinel", subscription.next());
            assertKept(Map.of("owner-a", "1002", ":waiting", "1"));
        }
    }

    private void assertKept(Map<String, String> fields) {
        assertEquals(fields, lua.redis.hgetall(lock));
        long pttl = lua.redis.pttl(lock);
        assertTrue(pttl > 0 && pttl <= LEASE_MS, () -> "lock PTTL " + pttl);
    }
}
