package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

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

/** {@code lock-force-unlock.lua} against a real server, on holds written by hand. */
@Tag("redis")
class LockForceUnlockLuaTest {

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

    private long forceUnlock() throws Exception {
        return lua.<Long>run(Script.LOCK_FORCE_UNLOCK, new String[] {lock, wakeups});
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
            lua.redis.publish(wakeups, "sentinel");
            assertEquals("sentinel", subscription.next());
        }
    }

    /* --------------- wake-ups --------------- */

    @Test
    void forceUnlock_withWaiter_publishesReleased() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, forceUnlock());

            assertEquals("released", subscription.next());
            assertEquals(0L, lua.redis.exists(lock));
        }
    }

    @Test
    void forceUnlock_withoutWaiter_publishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, forceUnlock());

            // Pub/Sub keeps order: had the script published, its message would come first.
            lua.redis.publish(wakeups, "sentinel");
            assertEquals("sentinel", subscription.next());
        }
    }
}
