package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-cache-renew.lua} (batched: one key, a cacher and a base per item) against a real
 * server, on caches written by hand: it renews live caches and, as the backstop of a lost ask-back
 * message, says which of them another client waits for (docs/design/lock-caching.md).
 */
@Tag("redis")
class LockCacheRenewLuaTest extends LuaTestBase {

    /** The lease the caches start with: shorter than the renewal's, so a renewal shows in PTTL. */
    private static final long LEASE_MS = 60_000;

    private void cache(String lock, Map<String, String> fields) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, LEASE_MS);
    }

    private List<Object> renew(String[] locks, String... cachersAndBases) throws Exception {
        return lua.runBatch(Script.LOCK_CACHE_RENEW, locks, lock -> new String[] {lock}, LONG_LEASE_MS,
                cachersAndBases);
    }

    private void assertRenewed(String lock) {
        long pttl = lua.redis.pttl(lock);
        assertTrue(pttl > LEASE_MS && pttl <= LONG_LEASE_MS, () -> lock + " PTTL " + pttl);
    }

    @Test
    void renew_severalCaches_renewsLiveOnesAndSaysWhichAreAskedBack() throws Exception {
        String idle = base + ":idle";
        String asked = base + ":asked";
        String otherBase = base + ":replaced";
        String missing = base + ":missing";
        cache(idle, Map.of("client-a:cache", "1001"));
        cache(asked, Map.of("client-a:cache", "1002", ":waiting", "1", ":w:client-b", "1:99"));
        cache(otherBase, Map.of("client-a:cache", "1009"));

        List<Object> reply = renew(new String[] {idle, asked, otherBase, missing},
                "client-a:cache", "1001", "client-a:cache", "1002", "client-a:cache", "1003",
                "client-a:cache", "1004");

        assertEquals(List.of(1L, 2L, 0L, 0L), reply);
        assertRenewed(idle);
        assertRenewed(asked);
        lua.assertTtlAtMost(otherBase, LEASE_MS);
        assertEquals(0L, lua.redis.exists(missing), "nothing created");
        assertEquals(Map.of("client-a:cache", "1001"), lua.redis.hgetall(idle), "renewal changes no field");
    }

    @Test
    void renew_keyOfAnotherType_isGoneWithoutFailingTheBatch() throws Exception {
        String wrong = base + ":string";
        String idle = base + ":idle";
        lua.redis.set(wrong, "x");
        cache(idle, Map.of("client-a:cache", "1001"));

        List<Object> reply = renew(new String[] {wrong, idle}, "client-a:cache", "1", "client-a:cache", "1001");

        assertEquals(List.of(0L, 1L), reply);
    }
}
