package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-cache-reserve.lua} (the next block of fencing tokens for a cache whose block ran
 * out) against a real server, on hashes written by hand; see docs/design/lock-caching.md.
 */
@Tag("redis")
class LockCacheReserveLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;
    private static final long BLOCK = 1_000;

    private String lock;
    private String tokenKey;

    @BeforeEach
    void names() {
        lock = base;
        tokenKey = lock + ":token";
    }

    private List<Object> take() throws Exception {
        return lua.run(Script.LOCK_CACHE_ACQUIRE, new String[] {lock, tokenKey}, "client-a:cache",
                Long.toString(LEASE_MS), Long.toString(BLOCK));
    }

    private List<Object> reserve(String cacher, String base) throws Exception {
        return lua.run(Script.LOCK_CACHE_RESERVE, new String[] {lock, tokenKey}, cacher, base, Long.toString(BLOCK));
    }

    @Test
    void reserve_liveCache_givesTheNextBlockAboveTheLastAndKeepsTheCache() throws Exception {
        List<Object> first = take();
        String baseToken = String.valueOf(first.get(1));
        long firstHi = (Long) first.get(2);

        List<Object> reply = reserve("client-a:cache", baseToken);

        assertEquals(4, reply.size(), () -> "reply " + reply);
        assertEquals(1L, reply.get(0));
        long lo = (Long) reply.get(1);
        long hi = (Long) reply.get(2);
        assertTrue(lo > firstHi, () -> "block " + lo + " should start above the last block's top " + firstHi);
        assertEquals(lo + BLOCK - 1, hi);
        assertEquals(0L, reply.get(3));
        assertEquals(Long.toString(hi), lua.redis.get(tokenKey));
        assertEquals(Map.of("client-a:cache", baseToken), lua.redis.hgetall(lock), "the base never changes");
    }

    @Test
    void reserve_askedBack_saysSo() throws Exception {
        String baseToken = String.valueOf(take().get(1));
        lua.redis.hset(lock, ":waiting", "1");

        List<Object> reply = reserve("client-a:cache", baseToken);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(1L, reply.get(3));
    }

    @Test
    void reserve_cacheGoneOrAnotherBase_changesNothing() throws Exception {
        String baseToken = String.valueOf(take().get(1));
        String lastBefore = lua.redis.get(tokenKey);

        assertEquals(List.of(0L, 0L, 0L, 0L), reserve("client-a:cache", "1"), "another base");
        assertEquals(List.of(0L, 0L, 0L, 0L), reserve("client-b:cache", baseToken), "another client");
        lua.redis.del(lock);
        assertEquals(List.of(0L, 0L, 0L, 0L), reserve("client-a:cache", baseToken), "given back");

        assertEquals(lastBefore, lua.redis.get(tokenKey), "no block reserved");
        assertEquals(0L, lua.redis.exists(lock), "nothing created");
    }
}
