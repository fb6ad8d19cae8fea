package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-renew.lua} (batched: one key, an owner and a token per item) against a real server,
 * on holds written by hand.
 */
@Tag("redis")
class LockRenewLuaTest extends LuaTestBase {

    /** The lease the holds start with: shorter than the renewal's, so a renewal shows in PTTL. */
    private static final long LEASE_MS = 60_000;

    private void hold(String lock, Map<String, String> fields) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, LEASE_MS);
    }

    /** Runs the script on the locks for {@link LuaHarness#LONG_LEASE_MS}, with owner, token, owner, token, ... */
    private List<Object> renew(String[] locks, String... ownersAndTokens) throws Exception {
        return lua.runBatch(Script.LOCK_RENEW, locks, lock -> new String[] {lock}, LONG_LEASE_MS, ownersAndTokens);
    }

    /* --------------- renewal --------------- */

    @Test
    void renew_oneHeldLock_resetsLeaseAndReturnsOne() throws Exception {
        String lock = base + ":1";
        hold(lock, Map.of("owner-a", "1001"));

        List<Object> reply = renew(new String[] {lock}, "owner-a", "1001");

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

        List<Object> reply = renew(new String[] {held, heldByOther, missing, heldWithWaiter},
                "owner-a", "1001", "owner-b", "1002", "owner-b", "1004",
                "owner-c", "1003");

        assertEquals(List.of(1L, 0L, 0L, 1L), reply);
        assertRenewed(held);
        assertRenewed(heldWithWaiter);
        lua.assertTtlAtMost(heldByOther, LEASE_MS);   // another owner's lease is not touched
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

        List<Object> reply = renew(new String[] {first, second}, "owner-b", "1002", "owner-a", "1001");

        assertEquals(List.of(0L, 0L), reply);
        lua.assertTtlAtMost(first, LEASE_MS);
        lua.assertTtlAtMost(second, LEASE_MS);
    }

    @Test
    void renew_sameOwnerWithAnOlderToken_returnsZeroAndKeepsTheNewerHoldsLease() throws Exception {
        // A renewal that raced an unlock must not stretch the thread's newer hold (token 1002).
        String lock = base + ":1";
        hold(lock, Map.of("owner-a", "1002"));

        List<Object> reply = renew(new String[] {lock}, "owner-a", "1001");

        assertEquals(List.of(0L), reply);
        lua.assertTtlAtMost(lock, LEASE_MS);   // the newer hold's lease is not touched
        assertEquals(Map.of("owner-a", "1002"), lua.redis.hgetall(lock));
    }

    @Test
    void renew_keyOfAForeignTypeInTheBatch_returnsZeroForItAndRenewsTheOthers() throws Exception {
        String foreign = base + ":foreign";
        String held = base + ":held";
        lua.redis.set(foreign, "not a hash");
        hold(held, Map.of("owner-a", "1001"));

        List<Object> reply = renew(new String[] {foreign, held}, "owner-a", "1001", "owner-a", "1001");

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
