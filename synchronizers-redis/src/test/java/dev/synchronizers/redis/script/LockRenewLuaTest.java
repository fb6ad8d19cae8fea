package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

/**
 * {@code lock-renew.lua} (batched: one key, an owner and a token per item) against a real server,
 * on holds written by hand.
 */
@Tag("redis")
class LockRenewLuaTest {

    /** The lease the holds start with: shorter than the renewal's, so a renewal shows in PTTL. */
    private static final long LEASE_MS = 60_000;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String base;

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
        base = LuaHarness.uniqueName(test);
    }

    private void hold(String lock, Map<String, String> fields) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, LEASE_MS);
    }

    /* --------------- renewal --------------- */

    @Test
    void renew_oneHeldLock_resetsLeaseAndReturnsOne() throws Exception {
        String lock = base + ":1";
        hold(lock, Map.of("owner-a", "1001"));

        List<Object> reply = lua.run(Script.LOCK_RENEW, new String[] {lock}, Long.toString(LONG_LEASE_MS),
                "owner-a", "1001");

        assertEquals(List.of(1L), reply);
        assertRenewed(lock);
        assertEquals(Map.of("owner-a", "1001"), lua.redis.hgetall(lock), "renewal changes no field");
    }

    @Test
    void renew_severalLocks_renewsOnlyThoseTheOwnerStillHolds() throws Exception {
        String held = base + ":held";
        String heldByOther = base + ":other";
        String missing = base + ":missing";
        String heldWithWaiter = base + ":waiter";
        hold(held, Map.of("owner-a", "1001"));
        hold(heldByOther, Map.of("owner-x", "1002"));
        hold(heldWithWaiter, Map.of("owner-c", "1003", ":waiting", "1"));

        List<Object> reply = lua.run(Script.LOCK_RENEW, new String[] {held, heldByOther, missing, heldWithWaiter},
                Long.toString(LONG_LEASE_MS), "owner-a", "1001", "owner-b", "1002", "owner-b", "1004",
                "owner-c", "1003");

        assertEquals(List.of(1L, 0L, 0L, 1L), reply);
        assertRenewed(held);
        assertRenewed(heldWithWaiter);
        long otherPttl = lua.redis.pttl(heldByOther);
        assertTrue(otherPttl > 0 && otherPttl <= LEASE_MS, () -> "another owner's lease was touched: " + otherPttl);
        assertEquals(Map.of("owner-x", "1002"), lua.redis.hgetall(heldByOther));
        assertEquals(0L, lua.redis.exists(missing), "renewal creates no key");
        assertEquals(Map.of("owner-c", "1003", ":waiting", "1"), lua.redis.hgetall(heldWithWaiter));
    }

    @Test
    void renew_ownerOfAnotherLock_returnsZeroForThisOne() throws Exception {
        // The owner is matched per key: holding lock 1 does not renew lock 2.
        String first = base + ":1";
        String second = base + ":2";
        hold(first, Map.of("owner-a", "1001"));
        hold(second, Map.of("owner-b", "1002"));

        List<Object> reply = lua.run(Script.LOCK_RENEW, new String[] {first, second},
                Long.toString(LONG_LEASE_MS), "owner-b", "1002", "owner-a", "1001");

        assertEquals(List.of(0L, 0L), reply);
        for (String lock : List.of(first, second)) {
            long pttl = lua.redis.pttl(lock);
            assertTrue(pttl > 0 && pttl <= LEASE_MS, () -> lock + " PTTL " + pttl);
        }
    }

    @Test
    void renew_sameOwnerWithAnOlderToken_returnsZeroAndKeepsTheNewerHoldsLease() throws Exception {
        // A renewal that raced an unlock must not stretch the thread's newer hold (token 1002).
        String lock = base + ":1";
        hold(lock, Map.of("owner-a", "1002"));

        List<Object> reply = lua.run(Script.LOCK_RENEW, new String[] {lock}, Long.toString(LONG_LEASE_MS),
                "owner-a", "1001");

        assertEquals(List.of(0L), reply);
        long pttl = lua.redis.pttl(lock);
        assertTrue(pttl > 0 && pttl <= LEASE_MS, () -> "the newer hold's lease was touched: " + pttl);
        assertEquals(Map.of("owner-a", "1002"), lua.redis.hgetall(lock));
    }

    @Test
    void renew_keyOfAForeignTypeInTheBatch_returnsZeroForItAndRenewsTheOthers() throws Exception {
        String foreign = base + ":foreign";
        String held = base + ":held";
        lua.redis.set(foreign, "not a hash");
        hold(held, Map.of("owner-a", "1001"));

        List<Object> reply = lua.run(Script.LOCK_RENEW, new String[] {foreign, held}, Long.toString(LONG_LEASE_MS),
                "owner-a", "1001", "owner-a", "1001");

        assertEquals(List.of(0L, 1L), reply);
        assertRenewed(held);
        assertEquals("not a hash", lua.redis.get(foreign));
        assertEquals(-1L, lua.redis.pttl(foreign), "the foreign key gets no TTL");
    }

    private void assertRenewed(String lock) {
        long pttl = lua.redis.pttl(lock);
        assertTrue(pttl > LEASE_MS && pttl <= LONG_LEASE_MS, () -> lock + " PTTL " + pttl + " was not reset");
    }
}
