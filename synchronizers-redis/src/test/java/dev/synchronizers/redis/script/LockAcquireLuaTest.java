package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code lock-acquire.lua} against a real server: the tests of {@link AcquireLuaContract}, where a failed attempt leaves no trace. */
@Tag("redis")
class LockAcquireLuaTest extends AcquireLuaContract {

    LockAcquireLuaTest() {
        super(Script.LOCK_ACQUIRE, false);
    }

    /* --------------- lock caching (docs/design/lock-caching.md) --------------- */

    /** For a cache, the waiting mark is the ask: without it an idle cache would keep every tryLock() out. */
    @Test
    void acquire_heldByAnotherClientsCache_asksItBackAndNamesIt() throws Exception {
        lua.redis.hset(lock, "client-a:cache", "1001");
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);

        List<Object> reply = acquire("client-b:7", HOLDER_LEASE_MS);

        assertEquals(3, reply.size(), () -> "reply " + reply);
        assertEquals(0L, reply.get(0));
        assertEquals("client-a", reply.get(2), "the cacher, to be told");
        assertEquals(Map.of("client-a:cache", "1001", ":waiting", "1"), lua.redis.hgetall(lock));
        lua.assertTtlAtMost(lock, HOLDER_LEASE_MS);
        assertEquals(0L, lua.redis.exists(tokenKey), "no token is issued on failure");
    }

    @Test
    void acquire_heldByItsOwnClientsCache_leavesNoTrace() throws Exception {
        lua.redis.hset(lock, "client-b:cache", "1001");

        List<Object> reply = acquire("client-b:7", HOLDER_LEASE_MS);

        assertEquals(List.of(0L, -1L), reply, "its client decides what to do with its own cache");
        assertEquals(Map.of("client-b:cache", "1001"), lua.redis.hgetall(lock));
    }
}
