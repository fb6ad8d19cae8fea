package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Redlock node scripts against a real server, on state written by hand: {@code
 * redlock-settle.lua} (the settled token written back), {@code redlock-renew.lua} (renew, take
 * back, or refuse) and {@code redlock-force-unlock.lua} (release and fence).
 */
@Tag("redis")
class RedlockLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private String lock() {
        return base + ":redlock";
    }

    private String token() {
        return base + ":redlock:token";
    }

    private void hold(String owner, String token) {
        lua.redis.hset(lock(), Map.of(owner, token));
        lua.redis.pexpire(lock(), LEASE_MS);
    }

    /** Now on the server's clock, in microseconds, as the scripts' tokens are. */
    private long nowMicros() {
        List<String> time = lua.redis.time();
        return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
    }

    /* --------------- settle --------------- */

    @Test
    void settle_held_recordsTheTokenOnTheHoldAndAsTheLastToken() throws Exception {
        long settled = nowMicros() + 5_000_000;
        hold("c:1:1", Long.toString(settled - 100));
        lua.redis.set(token(), Long.toString(settled - 100));

        Long reply = lua.run(Script.REDLOCK_SETTLE, new String[] {lock(), token()}, "c:1:1", Long.toString(settled));

        assertEquals(1L, reply);
        assertEquals(Long.toString(settled), lua.redis.hget(lock(), "c:1:1"));
        assertEquals(Long.toString(settled), lua.redis.get(token()));
        long ttl = lua.redis.pttl(token());
        assertTrue(ttl > 5_000 && ttl <= 6_000, "kept until the clock passes the token by a second: " + ttl);
    }

    @Test
    void settle_lastTokenAlreadyGreater_keepsIt() throws Exception {
        long settled = nowMicros();
        hold("c:1:1", Long.toString(settled));
        lua.redis.set(token(), Long.toString(settled + 7));

        lua.run(Script.REDLOCK_SETTLE, new String[] {lock(), token()}, "c:1:1", Long.toString(settled));

        assertEquals(Long.toString(settled + 7), lua.redis.get(token()), "never lowered");
    }

    @Test
    void settle_notHeld_changesNothing() throws Exception {
        hold("other:1:1", "5");

        Long reply = lua.run(Script.REDLOCK_SETTLE, new String[] {lock(), token()}, "c:1:1", "99");

        assertEquals(0L, reply);
        assertEquals(Map.of("other:1:1", "5"), lua.redis.hgetall(lock()));
        assertEquals(0L, lua.redis.exists(token()), "a node that no longer holds the grant does not learn the token");
    }

    /**
     * A node whose grant's reply came after the acquirer took the largest proposal may have proposed
     * more than the settled token: it does not count for the acquisition (whose token must be at
     * least the proposal of every node it counts); its hold records the settled token, and its last
     * token stays its own proposal.
     */
    @Test
    void settle_nodeProposedMoreThanTheSettledToken_notCounted() throws Exception {
        long proposed = nowMicros();
        hold("c:1:1", Long.toString(proposed));
        lua.redis.set(token(), Long.toString(proposed));

        Long reply = lua.run(Script.REDLOCK_SETTLE, new String[] {lock(), token()}, "c:1:1", Long.toString(proposed - 1));

        assertEquals(2L, reply);
        assertEquals(Long.toString(proposed - 1), lua.redis.hget(lock(), "c:1:1"), "the hold records the settled token");
        assertEquals(Long.toString(proposed), lua.redis.get(token()), "never lowered");
    }

    /* --------------- renew --------------- */

    private List<Object> renew(String owner, String token) throws Exception {
        return lua.runBatch(Script.REDLOCK_RENEW, new String[] {lock()}, lock -> new String[] {lock, lock + ":token"},
                LONG_LEASE_MS, owner, token);
    }

    @Test
    void renew_held_extendsTheLease() throws Exception {
        hold("c:1:1", "100");

        assertEquals(List.of(1L), renew("c:1:1", "100"));
        assertTrue(lua.redis.pttl(lock()) > LEASE_MS);
    }

    @Test
    void renew_freeAndNoNewerToken_takesTheHoldBack() throws Exception {
        long token = nowMicros();
        lua.redis.set(token(), Long.toString(token));

        assertEquals(List.of(2L), renew("c:1:1", Long.toString(token)));
        assertEquals(Map.of("c:1:1", Long.toString(token)), lua.redis.hgetall(lock()));
        assertTrue(lua.redis.pttl(lock()) > LEASE_MS, "with the lease");
        assertEquals(Long.toString(token), lua.redis.get(token()));
    }

    @Test
    void renew_freeAfterARestart_takesTheHoldBack() throws Exception {
        String token = Long.toString(nowMicros());

        assertEquals(List.of(2L), renew("c:1:1", token));
        assertEquals(Map.of("c:1:1", token), lua.redis.hgetall(lock()));
        assertEquals(token, lua.redis.get(token()), "the node learns the hold's token again");
        assertTrue(lua.redis.pttl(token()) > 0, "with a TTL");
    }

    @Test
    void renew_freeButANewerTokenIssued_refuses() throws Exception {
        lua.redis.set(token(), "101");

        assertEquals(List.of(0L), renew("c:1:1", "100"));
        assertEquals(0L, lua.redis.exists(lock()));
    }

    @Test
    void renew_heldByAnother_refuses() throws Exception {
        hold("other:1:1", "50");

        assertEquals(List.of(0L), renew("c:1:1", "100"));
        assertEquals(Map.of("other:1:1", "50"), lua.redis.hgetall(lock()));
    }

    /* --------------- force --------------- */

    @Test
    void forceUnlock_held_releasesAndRaisesTheLastTokenForTheFence() throws Exception {
        hold("c:1:1", "100");
        lua.redis.hset(lock(), ":waiting", "1");
        lua.redis.set(token(), "100");

        Long reply = lua.run(Script.REDLOCK_FORCE_UNLOCK, new String[] {lock(), token(), lock() + ":wake"}, "30000");

        assertEquals(1L, reply);
        assertEquals(0L, lua.redis.exists(lock()));
        assertTrue(Long.parseLong(lua.redis.get(token())) > 100, "a token above the holder's");
        long ttl = lua.redis.pttl(token());
        assertTrue(ttl > 29_000 && ttl <= 30_000, "for the fence's time: " + ttl);
        assertEquals(List.of(0L), renew("c:1:1", "100"), "the holder's renewal cannot take it back");
    }

    @Test
    void forceUnlock_free_returnsZeroAndStillFences() throws Exception {
        Long reply = lua.run(Script.REDLOCK_FORCE_UNLOCK, new String[] {lock(), token(), lock() + ":wake"}, "30000");

        assertEquals(0L, reply);
        assertTrue(lua.redis.exists(token()) == 1L);
    }
}
