package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-acquire-waiting.lua} against a real server: the tests of {@link AcquireLuaContract}
 * and {@link QueueingAcquireLuaContract}, where a failed attempt marks a waiter and puts it in the
 * non-fair lock's line (once: a try again keeps its position); a try that takes the lock takes the
 * owner out of the line, and a free lock is taken whoever is in line; the reply's cacher and token
 * floor; and the count of its client's waiting threads it records for snapshots: until the
 * waiter's next try is due after a failed try, for as long as the hold after a try that took the
 * lock.
 */
@Tag("redis")
class LockAcquireWaitingLuaTest extends QueueingAcquireLuaContract {

    /** The grace after the holder's lease within which the waiter's next try comes. */
    private static final long GRACE_MS = 5_000;

    private FairFixture line;

    LockAcquireWaitingLuaTest() {
        super(Script.LOCK_ACQUIRE_WAITING, true);
    }

    /** Runs after the contract's {@code names}, on its {@code lock}. */
    @BeforeEach
    void lineKeys() {
        line = new FairFixture(lua, lock);
    }

    @Override
    String[] keys() {
        return line.acquireKeys();
    }

    /** A refused reply is {@code {0, pttl, cacher, floor}}. */
    @Override
    int refusedReplySize() {
        return 4;
    }

    @Override
    QueueFixture waiting() {
        return line;
    }

    @Override
    void heldByAnother() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);
    }

    /** One waiting thread of the owner's client, as the client's first waiter reports. */
    @Override
    String[] args(String owner, long leaseMs, long placeMs) {
        return argsWithWaiters(owner, leaseMs, 1, placeMs);
    }

    private static String[] argsWithWaiters(String owner, long leaseMs, int waiters, long placeMs) {
        return new String[] {owner, Long.toString(leaseMs), Integer.toString(waiters), Long.toString(GRACE_MS),
                Long.toString(placeMs)};
    }

    private List<Object> acquire(String owner, int waiters) throws Exception {
        return lua.run(script, keys(), argsWithWaiters(owner, HOLDER_LEASE_MS, waiters, PLACE_MS));
    }

    /* --------------- the line --------------- */

    @Test
    void acquire_heldByAnother_putsTheOwnerInLineWithAPlaceLeasedInServerTimeAndRepliesAFloor() throws Exception {
        heldByAnother();
        long lastToken = Long.parseLong(lua.redis.get(tokenKey));

        long before = lua.serverMicros();
        List<Object> reply = queuedAttempt("client-b:7", PLACE_MS);
        long after = lua.serverMicros();

        assertEquals(4, reply.size(), () -> "reply " + reply);
        assertEquals("", reply.get(2), "no cache holds the lock");
        long floor = (Long) reply.get(3);
        assertTrue(floor >= lastToken, () -> "floor " + floor + " below the last token " + lastToken);
        assertTrue(floor >= before && floor <= after,
                () -> "floor " + floor + " is not the server time of the call, in [" + before + ", " + after + "]");
        assertEquals(List.of("client-b:7"), line.queueOrder());
        lua.assertEndWithin(line.places, "client-b:7", before / 1_000 + PLACE_MS, after / 1_000 + PLACE_MS);
        lua.assertTtlSetSince(line.queue, PLACE_MS, before / 1_000);
        lua.assertTtlSetSince(line.places, PLACE_MS, before / 1_000);
    }

    /** A Redlock's waiter asks for no place (place_ms 0): its nodes' releases wake the marked waiters. */
    @Test
    void acquire_heldByAnotherWithoutAPlaceAsked_marksTheLockAndPutsNobodyInLine() throws Exception {
        heldByAnother();

        List<Object> reply = queuedAttempt("client-b:7:3", 0);

        assertEquals(4, reply.size(), () -> "reply " + reply);
        assertEquals(0L, reply.get(0));
        assertEquals("1", lua.redis.hget(lock, ":waiting"), "the lock is marked");
        assertEquals(0L, lua.redis.exists(line.queue, line.places), "nobody is in line");
    }

    @Test
    void acquire_lastTokenAheadOfClock_repliesItAsTheFloor() throws Exception {
        heldByAnother();
        long ahead = lua.serverMicros() + 1_000_000_000L;
        lua.redis.set(tokenKey, Long.toString(ahead));

        List<Object> reply = queuedAttempt("client-b:7", PLACE_MS);

        assertEquals(ahead, reply.get(3), "a grant with a token at or below the floor is an old one");
    }

    @Test
    void acquire_heldByAnother_linesUpOwnersInArrivalOrderOncePerOwner() throws Exception {
        heldByAnother();

        queuedAttempt("client-b:7", PLACE_MS);
        queuedAttempt("client-c:9", PLACE_MS);
        queuedAttempt("client-b:7", PLACE_MS);
        queuedAttempt("client-d:2", PLACE_MS);
        queuedAttempt("client-c:9", PLACE_MS);

        assertEquals(List.of("client-b:7", "client-c:9", "client-d:2"), line.queueOrder(),
                "each owner once, at the place of its first try");
        assertEquals(3, line.placeEnds().size());
    }

    @Test
    void acquire_ownerInLineTakesTheFreedLock_leavesTheLineAndOthersKeepTheirPlaces() throws Exception {
        heldByAnother();
        queuedAttempt("client-b:7", PLACE_MS);
        queuedAttempt("client-c:9", PLACE_MS);
        lua.redis.del(lock);   // released by hand, so that only the acquire script is under test

        long token = acquired("client-b:7", HOLDER_LEASE_MS);

        assertEquals(Map.of("client-b:7", Long.toString(token)), lua.redis.hgetall(lock));
        assertEquals(List.of("client-c:9"), line.queueOrder(), "the owner holds the lock, so it is out of line");
        assertEquals(List.of("client-c:9"), lua.redis.zrange(line.places, 0, -1), "and so is its place");
    }

    /** The non-fair lock lets a newcomer barge: the line decides only who is handed it at a release. */
    @Test
    void acquire_freeLockWithOthersInLine_isTakenByANewcomerAndTheLineIsKept() throws Exception {
        long end = lua.farEnd();
        line.queued(end, "client-b:7", "client-c:9");

        long token = acquired("client-z:1", HOLDER_LEASE_MS);

        assertEquals(Map.of("client-z:1", Long.toString(token)), lua.redis.hgetall(lock));
        assertEquals(List.of("client-b:7", "client-c:9"), line.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "client-b:7"), ScoredValue.just(end, "client-c:9")),
                line.placeEnds());
    }

    @Test
    void acquire_ownerHandedTheLockByARelease_takesItAfreshAndIsNotInLine() throws Exception {
        // A release handed it the lock (lock-release.lua took it out of line) and its grant was lost.
        lua.redis.hset(lock, "client-b:7", "1001");
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);
        line.queued(lua.farEnd(), "client-c:9");

        long token = acquired("client-b:7", HOLDER_LEASE_MS);

        assertTrue(token > 1001, () -> "token " + token);
        assertEquals(List.of("client-c:9"), line.queueOrder(), "the owner holding it is not put in line");
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
    void acquire_heldByAnotherClientsCache_marksItAskedNamesItAndPutsTheOwnerInLine() throws Exception {
        lua.redis.hset(lock, "client-a:cache", "1001");
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);

        List<Object> reply = acquire("client-b:7", 1);

        assertEquals(4, reply.size(), () -> "reply " + reply);
        assertEquals(0L, reply.get(0));
        assertEquals("client-a", reply.get(2), "the cacher, to be told");
        Map<String, String> hash = lua.redis.hgetall(lock);
        assertEquals("1", hash.get(":waiting"), () -> "the mark is the ask: " + hash);
        assertEquals("1001", hash.get("client-a:cache"), () -> "the cache is left to its client: " + hash);
        assertEquals(List.of("client-b:7"), line.queueOrder(), "the cache's give-back hands it the lock");
    }

    @Test
    void acquire_heldByItsOwnClientsCache_namesNoCacher() throws Exception {
        lua.redis.hset(lock, "client-b:cache", "1001");
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);

        List<Object> reply = acquire("client-b:7", 1);

        assertEquals(4, reply.size(), () -> "reply " + reply);
        assertEquals(0L, reply.get(0));
        assertEquals("", reply.get(2), "its client is not told of its own try");
    }
}
