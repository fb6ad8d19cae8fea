package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-cache-acquire.lua} (a client takes the non-fair lock as its cache, with a block of
 * fencing tokens) against a real server, on hashes written by hand; the design is
 * docs/design/lock-caching.md.
 */
@Tag("redis")
class LockCacheAcquireLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;
    private static final long BLOCK = 1_000;

    private String lock;
    private String tokenKey;

    @BeforeEach
    void names() {
        lock = base;
        tokenKey = lock + ":token";
    }

    private List<Object> take(String cacher, long block) throws Exception {
        return lua.run(Script.LOCK_CACHE_ACQUIRE, new String[] {lock, tokenKey}, cacher, Long.toString(LEASE_MS),
                Long.toString(block));
    }

    private List<Object> acquirePlain(String owner) throws Exception {
        return lua.run(Script.LOCK_ACQUIRE, new String[] {lock, tokenKey}, owner, Long.toString(LEASE_MS));
    }

    /* --------------- free lock --------------- */

    @Test
    void take_freeLock_writesTheCacheWithItsBaseAndReservesTheBlock() throws Exception {
        long before = lua.serverMicros();

        List<Object> reply = take("client-a:cache", BLOCK);

        assertEquals(4, reply.size(), () -> "reply " + reply);
        assertEquals(1L, reply.get(0));
        long lo = (Long) reply.get(1);
        long hi = (Long) reply.get(2);
        assertEquals(lo + BLOCK - 1, hi, "a block of the size asked for");
        assertEquals(0L, reply.get(3), "nobody asks it back");
        assertTrue(lo >= before, () -> "the base follows the server's clock: " + lo + " < " + before);
        assertEquals(Map.of("client-a:cache", Long.toString(lo)), lua.redis.hgetall(lock));
        lua.assertTtlAtMost(lock, LEASE_MS);
        assertEquals(Long.toString(hi), lua.redis.get(tokenKey), "the block's top is the last token");
    }

    @Test
    void take_lastTokenAhead_startsTheBlockAboveIt() throws Exception {
        long last = lua.serverMicros() + 5_000_000_000L;
        lua.redis.set(tokenKey, Long.toString(last));

        List<Object> reply = take("client-a:cache", BLOCK);

        assertEquals(last + 1, reply.get(1));
        assertEquals(last + BLOCK, reply.get(2));
    }

    /**
     * Tokens stay strictly increasing: a hold taken in Redis after the cache is given back gets a
     * token above the whole block, however far the block runs ahead of the clock, because the
     * token key lives until the clock has passed the block's top by a second.
     */
    @Test
    void take_thenGivenBack_theNextHoldsTokenIsAboveTheWholeBlock() throws Exception {
        long bigBlock = 3_000_000_000L;   // 3000 s of the server's clock
        long hi = (Long) take("client-a:cache", bigBlock).get(2);
        long tokenTtl = lua.redis.pttl(tokenKey);
        assertTrue(tokenTtl > (bigBlock / 1000) - 10_000, () -> "the token key lives past the block: " + tokenTtl);
        lua.redis.del(lock);   // given back

        List<Object> next = acquirePlain("client-b:7");

        assertEquals(1L, next.get(0), () -> "reply " + next);
        assertTrue((Long) next.get(1) > hi, () -> "token " + next.get(1) + " should be above the block's top " + hi);
    }

    /* --------------- held --------------- */

    @Test
    void take_heldByAThreadOfAnotherClient_returnsPttlAndLeavesNoTrace() throws Exception {
        lua.redis.hset(lock, "client-b:7", "1001");
        lua.redis.pexpire(lock, LEASE_MS);

        List<Object> reply = take("client-a:cache", BLOCK);

        assertEquals(2, reply.size(), () -> "reply " + reply);
        assertEquals(0L, reply.get(0));
        long pttl = (Long) reply.get(1);
        assertTrue(pttl > 0 && pttl <= LEASE_MS, () -> "pttl " + pttl);
        assertEquals(Map.of("client-b:7", "1001"), lua.redis.hgetall(lock));
        assertEquals(0L, lua.redis.exists(tokenKey), "no token is issued on failure");
    }

    @Test
    void take_heldByAnotherClientsCache_asksItBackAndNamesIt() throws Exception {
        lua.redis.hset(lock, "client-b:cache", "1001");
        lua.redis.pexpire(lock, LEASE_MS);

        List<Object> reply = take("client-a:cache", BLOCK);

        assertEquals(3, reply.size(), () -> "reply " + reply);
        assertEquals(0L, reply.get(0));
        assertEquals("client-b", reply.get(2));
        assertEquals(Map.of("client-b:cache", "1001", ":waiting", "1"), lua.redis.hgetall(lock));
    }

    /**
     * A cache of the caller's own client on record is one whose taking reply was lost: it is
     * replaced by a new cache with a new base, so that the old one's late give-back, named by its
     * base, cannot end the new one.
     */
    @Test
    void take_ownClientsCacheOnRecord_replacesItWithANewBase() throws Exception {
        long oldLo = (Long) take("client-a:cache", BLOCK).get(1);

        List<Object> reply = take("client-a:cache", BLOCK);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        long lo = (Long) reply.get(1);
        assertTrue(lo > oldLo + BLOCK - 1, () -> "the new block " + lo + " is above the old one's top");
        assertEquals(Map.of("client-a:cache", Long.toString(lo)), lua.redis.hgetall(lock));
        List<Object> late = lua.run(Script.LOCK_RELEASE, new FairFixture(lua, lock).keys(), "client-a:cache",
                Long.toString(oldLo));
        assertEquals(List.of(0L, ""), late, "the old cache's give-back ends nothing");
        assertEquals(1L, lua.redis.exists(lock));
    }

    @Test
    void take_ownClientsCacheOnRecordAndAskedBack_saysSo() throws Exception {
        lua.redis.hset(lock, Map.of("client-a:cache", "1001", ":waiting", "1"));
        lua.redis.pexpire(lock, LEASE_MS);

        List<Object> reply = take("client-a:cache", BLOCK);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(1L, reply.get(3), "someone waits: the client gives it back at its unlock");
    }
}
