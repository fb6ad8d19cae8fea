package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-acquire-waiting.lua} against a real server: the tests of {@link AcquireLuaContract},
 * where a failed attempt marks a waiter; and the count of its client's waiting threads it records
 * for snapshots: until the waiter's next try is due after a failed try, for as long as the hold
 * after a try that took the lock.
 */
@Tag("redis")
class LockAcquireWaitingLuaTest extends AcquireLuaContract {

    /** The grace after the holder's lease within which the waiter's next try comes. */
    private static final long GRACE_MS = 5_000;

    LockAcquireWaitingLuaTest() {
        super(Script.LOCK_ACQUIRE_WAITING, true);
    }

    /** One waiting thread of the owner's client, as the client's first waiter reports. */
    @Override
    String[] args(String owner, long leaseMs) {
        return args(owner, leaseMs, 1);
    }

    private static String[] args(String owner, long leaseMs, int waiters) {
        return new String[] {owner, Long.toString(leaseMs), Integer.toString(waiters), Long.toString(GRACE_MS)};
    }

    private List<Object> acquire(String owner, int waiters) throws Exception {
        return lua.run(script, keys(), args(owner, HOLDER_LEASE_MS, waiters));
    }

    @Test
    void acquire_heldByAnother_recordsTheClientsWaitersUntilTheHoldersLeaseEndsPlusTheGrace() throws Exception {
        var redis = lua.redis;
        acquired("client-a:1", HOLDER_LEASE_MS);
        long before = lua.serverMillis();

        List<Object> reply = acquire("client-b:7", 3);

        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        long pttlAfter = redis.pttl(lock);
        String record = redis.hget(lock, ":w:client-b");
        assertTrue(record != null && record.matches("3:\\d+"), () -> "record " + record);
        // until = the holder's lease end (the script's now + its PTTL) + the grace; the lease end is
        // at most the lease after 'before' and at least the PTTL read after the script.
        long leaseEnd = Long.parseLong(record.substring(2)) - GRACE_MS;
        assertTrue(leaseEnd - before >= pttlAfter - 1 && leaseEnd - before <= HOLDER_LEASE_MS + 1,
                () -> "lease end " + (leaseEnd - before) + " ms after the call, PTTL after it " + pttlAfter);
    }

    @Test
    void acquire_heldWithoutTtl_recordsTheClientsWaitersWithoutAnEnd() throws Exception {
        lua.redis.hset(lock, "client-a:1", "7");

        acquire("client-b:7", 2);

        assertEquals(Map.of("client-a:1", "7", ":waiting", "1", ":w:client-b", "2"), lua.redis.hgetall(lock),
                "a hold without a lease gives the waiter no time its next try is due by");
    }

    @Test
    void acquire_heldByAnother_replacesItsClientsRecordAndKeepsOtherClients() throws Exception {
        acquired("client-a:1", HOLDER_LEASE_MS);
        lua.redis.hset(lock, Map.of(":w:client-b", "5:123", ":w:client-c", "1:456"));

        acquire("client-b:8", 2);

        Map<String, String> hash = lua.redis.hgetall(lock);
        assertTrue(hash.get(":w:client-b").startsWith("2:"), () -> "hash " + hash);
        assertEquals("1:456", hash.get(":w:client-c"), "another client's record is its own to write");
    }

    @Test
    void acquire_freeWithOtherWaitersOfTheClient_recordsThemForAsLongAsTheHold() throws Exception {
        List<Object> reply = acquire("client-b:7", 3);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(Map.of("client-b:7", String.valueOf(reply.get(1)), ":w:client-b", "2"),
                lua.redis.hgetall(lock), "the two threads behind the new holder, in its client");
    }

    @Test
    void acquire_ownerStillOnRecordAndAloneInItsClient_removesItsClientsRecord() throws Exception {
        // Its last release's reply was lost; a count of its client's from a failed try is still there.
        lua.redis.hset(lock, Map.of("client-b:7", "1001", ":w:client-b", "4:999", ":w:client-c", "1"));
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);

        List<Object> reply = acquire("client-b:7", 1);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(Map.of("client-b:7", String.valueOf(reply.get(1)), ":w:client-c", "1"),
                lua.redis.hgetall(lock));
    }

    /* --------------- lock caching (docs/design/lock-caching.md) --------------- */

    @Test
    void acquire_heldByAnotherClientsCache_marksItAskedAndNamesIt() throws Exception {
        lua.redis.hset(lock, "client-a:cache", "1001");
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);

        List<Object> reply = acquire("client-b:7", 1);

        assertEquals(3, reply.size(), () -> "reply " + reply);
        assertEquals(0L, reply.get(0));
        assertEquals("client-a", reply.get(2), "the cacher, to be told");
        Map<String, String> hash = lua.redis.hgetall(lock);
        assertEquals("1", hash.get(":waiting"), () -> "the mark is the ask: " + hash);
        assertEquals("1001", hash.get("client-a:cache"), () -> "the cache is left to its client: " + hash);
    }

    @Test
    void acquire_heldByItsOwnClientsCache_namesNoCacher() throws Exception {
        lua.redis.hset(lock, "client-b:cache", "1001");
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);

        List<Object> reply = acquire("client-b:7", 1);

        assertEquals(2, reply.size(), () -> "its client is not told of its own try: " + reply);
        assertEquals(0L, reply.get(0));
    }
}
