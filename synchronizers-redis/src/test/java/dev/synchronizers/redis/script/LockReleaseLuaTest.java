package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.synchronizers.redis.script.LuaHarness.Subscription;
import dev.synchronizers.testkit.RedisExtension;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code lock-release.lua} (the non-fair lock's release) against a real server, on holds written by hand. */
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

    private List<Object> release(String owner, String token) throws Exception {
        return lua.run(Script.LOCK_RELEASE, new String[] {lock, wakeups}, owner, token);
    }

    @Test
    void release_rightOwnerAndToken_deletesTheHoldAndPublishesNothingWhenNobodyWaits() throws Exception {
        hold(Map.of("owner-a", "1001"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, ""), release("owner-a", "1001"));

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(lock));
    }

    @Test
    void release_withAWaiterRecorded_publishesReleasedOnce() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(1L, ""), release("owner-a", "1001"));

            assertEquals("released", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(lock));
    }

    @Test
    void release_wrongTokenOrOwner_returnsZeroAndChangesNothing() throws Exception {
        hold(Map.of("owner-a", "1002", ":waiting", "1"));
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(List.of(0L, ""), release("owner-a", "1001"), "an older hold's token");
            assertEquals(List.of(0L, ""), release("owner-b", "1002"), "another owner");

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(Map.of("owner-a", "1002", ":waiting", "1"), lua.redis.hgetall(lock));
    }

    @Test
    void release_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("owner-a", "1001"));
        assertEquals(0L, lua.redis.exists(lock));
    }
}
