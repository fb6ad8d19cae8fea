package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisCommandExecutionException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What {@code lock-acquire.lua}, {@code lock-acquire-waiting.lua} and {@code fair-lock-acquire.lua}
 * have in common, run against each by {@link LockAcquireLuaTest}, {@link LockAcquireWaitingLuaTest}
 * and {@link FairLockAcquireLuaTest}: the hold they write, the reply when another owner holds the
 * lock, and the fencing-token rule. They differ in what a failed attempt leaves behind in the
 * lock's hash ({@link #marksWaiter}) and, for the fair script, in its queue (tested there), and
 * in their inputs ({@link #keys()}, {@link #args}).
 */
abstract class AcquireLuaContract extends LuaTestBase {

    /** The holder's lease: shorter than {@link LuaHarness#LONG_LEASE_MS}, so a reset would show. */
    static final long HOLDER_LEASE_MS = 60_000;

    String lock;
    String tokenKey;

    /** The script under test. */
    final Script script;

    /** Whether a failed attempt records {@code ':waiting' = 1} in the holder's hash. */
    final boolean marksWaiter;

    AcquireLuaContract(Script script, boolean marksWaiter) {
        this.script = script;
        this.marksWaiter = marksWaiter;
    }

    @BeforeEach
    void names() {
        lock = base;
        tokenKey = lock + ":token";
    }

    /** The script's keys; the lock and the token key come first. */
    String[] keys() {
        return new String[] {lock, tokenKey};
    }

    /**
     * How many elements a refused attempt's reply has: {@code {0, pttl}}, and what a script adds
     * after them (the fair script's token floor, tested there).
     */
    int refusedReplySize() {
        return 2;
    }

    /** The script's arguments for one attempt; the owner and the lease come first. */
    String[] args(String owner, long leaseMs) {
        return new String[] {owner, Long.toString(leaseMs)};
    }

    List<Object> acquire(String owner, long leaseMs) throws Exception {
        return lua.run(script, keys(), args(owner, leaseMs));
    }

    /** Acquires, checks that it succeeded, and returns the token. */
    long acquired(String owner, long leaseMs) throws Exception {
        List<Object> reply = acquire(owner, leaseMs);
        assertEquals(1L, reply.get(0), () -> script.file + " should acquire, replied " + reply);
        return (Long) reply.get(1);
    }

    /* --------------- free lock --------------- */

    @Test
    void acquire_freeLock_returnsTokenAndWritesHold() throws Exception {
        var redis = lua.redis;

        List<Object> reply = acquire("owner-a", HOLDER_LEASE_MS);

        assertEquals(2, reply.size(), () -> "reply " + reply);
        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        long token = (Long) reply.get(1);
        assertTrue(token > 0, () -> "token " + token);
        assertEquals(Map.of("owner-a", Long.toString(token)), redis.hgetall(lock),
                "the hash holds the owner's token and nothing else (no ':waiting')");
        long pttl = redis.pttl(lock);
        assertTrue(pttl > 0 && pttl <= HOLDER_LEASE_MS, () -> "lock PTTL " + pttl);
        assertEquals(Long.toString(token), redis.get(tokenKey), "the token key records the token issued");
        long tokenPttl = redis.pttl(tokenKey);
        assertTrue(tokenPttl > 0 && tokenPttl <= 1_000, () -> "token key PTTL " + tokenPttl);
    }

    /* --------------- held by another owner --------------- */

    @Test
    void acquire_heldByAnother_returnsPttlAndChangesOnlyTheWaitingMark() throws Exception {
        var redis = lua.redis;
        long holderToken = acquired("holder", HOLDER_LEASE_MS);
        String tokenBefore = redis.get(tokenKey);

        // A longer lease than the holder's: had the script reset the TTL, PTTL would exceed it.
        List<Object> reply = acquire("other", LONG_LEASE_MS);

        assertEquals(refusedReplySize(), reply.size(), () -> "reply " + reply);
        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        long pttl = (Long) reply.get(1);
        assertTrue(pttl > 0 && pttl <= HOLDER_LEASE_MS, () -> "returned pttl " + pttl);
        Map<String, String> hash = redis.hgetall(lock);
        assertEquals(Long.toString(holderToken), hash.get("holder"), "the holder's token is unchanged");
        assertFalse(hash.containsKey("other"), "the failed owner is not written");
        if (marksWaiter) {
            assertEquals("1", hash.get(":waiting"), "a failed waiting attempt records ':waiting' = 1");
            assertTrue(String.valueOf(hash.get(":w:other")).matches("1:\\d+"),
                    () -> "and how many threads of the owner's client wait, until when: " + hash);
            assertEquals(3, hash.size(), () -> "hash " + hash);
        } else {
            assertEquals(1, hash.size(), () -> "a failed attempt leaves no trace, hash " + hash);
        }
        long after = redis.pttl(lock);
        assertTrue(after > 0 && after <= HOLDER_LEASE_MS, () -> "lock PTTL " + after + " was reset or removed");
        assertEquals(tokenBefore, redis.get(tokenKey), "no token is issued on failure");
    }

    @Test
    void acquire_heldWithoutTtl_returnsMinusOne() throws Exception {
        var redis = lua.redis;
        redis.hset(lock, "holder", "7");

        List<Object> reply = acquire("other", HOLDER_LEASE_MS);

        assertEquals(refusedReplySize(), reply.size(), () -> "reply " + reply);
        assertEquals(List.of(0L, -1L), reply.subList(0, 2));
        assertEquals(-1L, redis.pttl(lock), "the holder's missing TTL is left as it is");
        assertEquals(0L, redis.exists(tokenKey), "no token is issued on failure");
    }

    /* --------------- fencing tokens --------------- */

    @Test
    void acquire_sameOwnerAgain_returnsNewLargerToken() throws Exception {
        long first = acquired("owner-a", HOLDER_LEASE_MS);

        long second = acquired("owner-a", HOLDER_LEASE_MS);

        assertTrue(second > first, () -> "second token " + second + " should exceed " + first);
        assertEquals(Long.toString(second), lua.redis.hget(lock, "owner-a"));
    }

    @Test
    void acquire_manyCyclesOfDifferentOwners_tokensStrictlyIncrease() throws Exception {
        var redis = lua.redis;
        long last = 0;
        for (int i = 0; i < 200; i++) {
            long token = acquired("owner-" + i, HOLDER_LEASE_MS);
            long previous = last;
            int cycle = i;
            assertTrue(token > previous, () -> "cycle " + cycle + ": token " + token + " after " + previous);
            last = token;
            // A hand-made release, so that only the acquire script is under test.
            assertEquals(1L, redis.del(lock));
        }
    }

    @Test
    void acquire_tokenKeyAheadOfClock_issuesTheNextToken() throws Exception {
        var redis = lua.redis;
        long ahead = lua.serverMicros() + 1_000_000_000L;
        redis.set(tokenKey, Long.toString(ahead));

        long token = acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(ahead + 1, token);
        assertEquals(Long.toString(ahead + 1), redis.hget(lock, "owner-a"));
        assertEquals(Long.toString(ahead + 1), redis.get(tokenKey));
        // The key outlives the token's lead on the clock (about 10^6 ms) plus one second.
        long tokenPttl = redis.pttl(tokenKey);
        assertTrue(tokenPttl > 1_000 && tokenPttl <= 1_001_000, () -> "token key PTTL " + tokenPttl);

        redis.del(lock);
        assertEquals(ahead + 2, acquired("owner-b", HOLDER_LEASE_MS));
    }

    /* --------------- wrong type --------------- */

    @Test
    void acquire_lockKeyIsString_failsWithWrongTypeAndKeepsString() throws Exception {
        var redis = lua.redis;
        redis.set(lock, "not a hash");

        Throwable failure = lua.failure(script, keys(), args("owner-a", HOLDER_LEASE_MS));

        assertTrue(failure instanceof RedisCommandExecutionException, () -> "failure " + failure);
        assertTrue(String.valueOf(failure.getMessage()).contains("WRONGTYPE"), () -> "failure " + failure);
        assertEquals("not a hash", redis.get(lock));
        assertEquals(-1L, redis.pttl(lock), "the string gets no TTL");
        assertEquals(0L, redis.exists(tokenKey), "no token is issued");
    }
}
