package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code lock-release.lua} (the non-fair lock's release) against a real server, on holds written by hand. */
@Tag("redis")
class LockReleaseLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private String lock;
    private String wakeups;

    @BeforeEach
    void names() {
        lock = base;
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

        lua.assertPublishes(wakeups, () -> assertEquals(List.of(1L, ""), release("owner-a", "1001")));

        assertEquals(0L, lua.redis.exists(lock));
    }

    @Test
    void release_withAWaiterRecorded_publishesReleasedOnce() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));

        lua.assertPublishes(wakeups, () -> assertEquals(List.of(1L, ""), release("owner-a", "1001")), "released");

        assertEquals(0L, lua.redis.exists(lock));
    }

    @Test
    void release_wrongTokenOrOwner_returnsZeroAndChangesNothing() throws Exception {
        hold(Map.of("owner-a", "1002", ":waiting", "1"));

        lua.assertPublishes(wakeups, () -> {
            assertEquals(List.of(0L, ""), release("owner-a", "1001"), "an older hold's token");
            assertEquals(List.of(0L, ""), release("owner-b", "1002"), "another owner");
        });

        assertEquals(Map.of("owner-a", "1002", ":waiting", "1"), lua.redis.hgetall(lock));
    }

    /** A cache is given back by this script, named by its owner and base (docs/design/lock-caching.md). */
    @Test
    void release_aCacheAskedBack_givesItBackAndWakesTheAsker() throws Exception {
        hold(Map.of("client-a:cache", "1001", ":waiting", "1"));

        lua.assertPublishes(wakeups, () -> {
            assertEquals(List.of(0L, ""), release("client-a:cache", "1000"), "an older cache's base");
            assertEquals(List.of(1L, ""), release("client-a:cache", "1001"));
        }, "released");

        assertEquals(0L, lua.redis.exists(lock));
    }

    @Test
    void release_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("owner-a", "1001"));
        assertEquals(0L, lua.redis.exists(lock));
    }
}
