package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code fair-lock-acquire.lua} against a real server: the tests of {@link AcquireLuaContract}
 * (a failed attempt leaves the lock's hash as it was), and the queue: arrival order, places
 * leased in server time, the head's turn on a free lock, the purge of expired places, the token
 * floor of a queued reply, and an owner handed the lock taking it afresh.
 *
 * <p>Times are checked against the server's clock read just before and after a call: a place the
 * script leases at its own {@code TIME} ends between the two readings plus the place lease.
 */
@Tag("redis")
class FairLockAcquireLuaTest extends QueueingAcquireLuaContract {

    private FairFixture fair;

    FairLockAcquireLuaTest() {
        super(Script.FAIR_LOCK_ACQUIRE);
    }

    /** Runs after the contract's {@code names}, on its {@code lock}. */
    @BeforeEach
    void fairKeys() {
        fair = new FairFixture(lua, lock);
    }

    @Override
    String[] keys() {
        return new String[] {lock, tokenKey, fair.queue, fair.places};
    }

    /** A queued reply is {@code {0, wait_ms, floor}}. */
    @Override
    int refusedReplySize() {
        return 3;
    }

    @Override
    QueueFixture waiting() {
        return fair;
    }

    @Override
    void heldByAnother() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);
    }

    private Double place(String owner) {
        return lua.redis.zscore(fair.places, owner);
    }

    /**
     * Asserts that a queued reply's floor is the server's time of the call, between the readings
     * {@code beforeMicros} and {@code afterMicros}, and at least {@code lastToken}: the floor when
     * no token was issued ahead of the clock.
     */
    private static void assertFloorIsServerTime(List<Object> reply, long lastToken, long beforeMicros,
            long afterMicros) {
        assertEquals(3, reply.size(), () -> "reply " + reply);
        long floor = (Long) reply.get(2);
        assertTrue(floor >= lastToken, () -> "floor " + floor + " below the last token " + lastToken);
        assertTrue(floor >= beforeMicros && floor <= afterMicros,
                () -> "floor " + floor + " is not the server time of the call, in [" + beforeMicros + ", "
                        + afterMicros + "]");
    }

    /* --------------- free lock, empty queue --------------- */

    @Test
    void fair_freeLockEmptyQueue_acquiresWithoutQueueing() throws Exception {
        List<Object> reply = acquire("owner-a", HOLDER_LEASE_MS, PLACE_MS);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        long token = (Long) reply.get(1);
        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(lock));
        long pttl = lua.redis.pttl(lock);
        assertTrue(pttl > 0 && pttl <= HOLDER_LEASE_MS, () -> "lock PTTL " + pttl);
        assertEquals(0L, lua.redis.exists(fair.queue, fair.places), "the owner is not queued");
    }

    /* --------------- held by another owner: queueing --------------- */

    @Test
    void fair_heldByAnother_queuesTheOwnerWithAPlaceLeasedInServerTime() throws Exception {
        long holderToken = acquired("holder", HOLDER_LEASE_MS);

        long before = lua.serverMillis();
        List<Object> reply = queuedAttempt("owner-b", PLACE_MS);
        long after = lua.serverMillis();

        long pttl = (Long) reply.get(1);
        assertTrue(pttl > 0 && pttl <= HOLDER_LEASE_MS, () -> "returned the holder's PTTL? " + pttl);
        assertEquals(Map.of("holder", Long.toString(holderToken)), lua.redis.hgetall(lock));
        assertEquals(List.of("owner-b"), fair.queueOrder());
        lua.assertEndWithin(fair.places, "owner-b", before + PLACE_MS, after + PLACE_MS);
        lua.assertTtlSetSince(fair.queue, PLACE_MS, before);
        lua.assertTtlSetSince(fair.places, PLACE_MS, before);
    }

    @Test
    void fair_heldWithoutTtl_queuesAndReturnsMinusOne() throws Exception {
        lua.redis.hset(lock, "holder", "7");

        long before = lua.serverMicros();
        List<Object> reply = acquire("owner-b", HOLDER_LEASE_MS, PLACE_MS);
        long after = lua.serverMicros();

        assertEquals(List.of(0L, -1L), reply.subList(0, 2));
        assertFloorIsServerTime(reply, 0, before, after);   // no token key: the floor is the clock
        assertEquals(List.of("owner-b"), fair.queueOrder());
    }

    @Test
    void fair_threeOwnersWhileHeld_queueInArrivalOrder() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);

        for (String owner : List.of("owner-c", "owner-a", "owner-b")) {
            long pttl = (Long) queuedAttempt(owner, PLACE_MS).get(1);
            assertTrue(pttl > 0 && pttl <= HOLDER_LEASE_MS, () -> owner + " got " + pttl);
        }

        // Not alphabetical: the order they came in.
        assertEquals(List.of("owner-c", "owner-a", "owner-b"), fair.queueOrder());
        List<ScoredValue<String>> scores = lua.redis.zrangeWithScores(fair.queue, 0, -1);
        assertTrue(scores.get(0).getScore() < scores.get(1).getScore()
                && scores.get(1).getScore() < scores.get(2).getScore(), () -> "arrival scores " + scores);
        assertEquals(Set.of("owner-a", "owner-b", "owner-c"), Set.copyOf(lua.redis.zrange(fair.places, 0, -1)),
                "every queued owner has a place");
    }

    /* --------------- the token floor of a queued reply --------------- */

    @Test
    void fair_heldByAnother_queuedReplyFloorIsAtLeastTheHoldersTokenAndServerTime() throws Exception {
        long holderToken = acquired("holder", HOLDER_LEASE_MS);
        String tokenBefore = lua.redis.get(tokenKey);

        long before = lua.serverMicros();
        List<Object> reply = queuedAttempt("owner-b", PLACE_MS);
        long after = lua.serverMicros();

        assertFloorIsServerTime(reply, holderToken, before, after);
        assertEquals(tokenBefore, lua.redis.get(tokenKey), "the floor issues no token");
    }

    @Test
    void fair_tokenKeyAheadOfClock_queuedReplyFloorIsTheLastToken() throws Exception {
        long last = lua.serverMicros() + 1_000_000_000L;
        fair.lastToken(last, LONG_LEASE_MS);
        lua.redis.hset(lock, "holder", Long.toString(last));
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);

        List<Object> reply = queuedAttempt("owner-b", PLACE_MS);

        assertEquals(last, reply.get(2), "a grant with a token at or below the floor is an old one");
        assertEquals(Long.toString(last), lua.redis.get(tokenKey), "the floor issues no token");
    }

    @Test
    void fair_queuedOwnerTriesAgain_getsAFloorAtLeastTheTokensIssuedSince() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);
        queuedAttempt("owner-b", PLACE_MS);
        // A later holder, with a token ahead of the clock (as a grant to another waiter could be).
        long later = lua.serverMicros() + 1_000_000_000L;
        fair.lastToken(later, LONG_LEASE_MS);
        lua.redis.del(lock);
        lua.redis.hset(lock, "holder-2", Long.toString(later));
        lua.redis.pexpire(lock, HOLDER_LEASE_MS);

        List<Object> again = queuedAttempt("owner-b", PLACE_MS);

        assertEquals(later, again.get(2), "the retry's floor covers the token issued since");
        assertEquals(List.of("owner-b"), fair.queueOrder(), "the retry keeps its place");
    }

    /* --------------- free lock, someone queued --------------- */

    @Test
    void fair_freeLockAnotherOwnerFirstInQueue_waitsForTheHeadsPlace() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);
        queuedAttempt("owner-a", PLACE_MS);
        assertEquals(1L, lua.redis.del(lock));   // the holder's release, by hand
        String tokenBefore = lua.redis.get(tokenKey);
        double headEnd = place("owner-a");

        long beforeMicros = lua.serverMicros();
        List<Object> reply = queuedAttempt("owner-b", PLACE_MS);
        long afterMicros = lua.serverMicros();
        long before = beforeMicros / 1_000;
        long after = afterMicros / 1_000;

        long wait = (Long) reply.get(1);
        assertTrue(wait > 0 && wait <= PLACE_MS, () -> "wait " + wait);
        assertTrue(wait >= headEnd - after && wait <= headEnd - before,
                () -> "wait " + wait + " is not the head's remaining place (ends " + headEnd + ", now in ["
                        + before + ", " + after + "])");
        assertFloorIsServerTime(reply, tokenBefore == null ? 0 : Long.parseLong(tokenBefore), beforeMicros,
                afterMicros);
        assertEquals(0L, lua.redis.exists(lock), "nothing is acquired");
        assertEquals(tokenBefore, lua.redis.get(tokenKey), "no token is issued");
        assertEquals(List.of("owner-a", "owner-b"), fair.queueOrder());
    }

    @Test
    void fair_freeLockOwnerIsOnlyWaiter_acquiresAndTheQueueVanishes() throws Exception {
        long holderToken = acquired("holder", HOLDER_LEASE_MS);
        queuedAttempt("owner-a", PLACE_MS);
        assertEquals(1L, lua.redis.del(lock));

        List<Object> reply = acquire("owner-a", HOLDER_LEASE_MS, PLACE_MS);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        long token = (Long) reply.get(1);
        assertTrue(token > holderToken, () -> "token " + token + " after " + holderToken);
        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(lock));
        assertEquals(0L, lua.redis.exists(fair.queue, fair.places), "the empty queue and places are gone");
    }

    @Test
    void fair_freeLockOwnerIsHead_acquiresAndTheNextBecomesHead() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);
        queuedAttempt("owner-a", PLACE_MS);
        queuedAttempt("owner-b", PLACE_MS);
        Double placeB = place("owner-b");
        assertEquals(1L, lua.redis.del(lock));

        assertEquals(1L, acquire("owner-a", HOLDER_LEASE_MS, PLACE_MS).get(0));

        assertEquals(List.of("owner-b"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(placeB, "owner-b")), fair.placeEnds());
    }

    @Test
    void fair_expiredHead_isPurgedAndTheNextInLineAcquires() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);
        queuedAttempt("owner-a", PLACE_MS);
        queuedAttempt("owner-b", PLACE_MS);
        assertEquals(1L, lua.redis.del(lock));
        lua.redis.zadd(fair.places, 0, "owner-a");   // owner-a stopped renewing long ago

        List<Object> reply = acquire("owner-b", HOLDER_LEASE_MS, PLACE_MS);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(Map.of("owner-b", reply.get(1).toString()), lua.redis.hgetall(lock));
        assertEquals(0L, lua.redis.exists(fair.queue, fair.places), "owner-a was purged, owner-b left the queue");
    }

    @Test
    void fair_expiredPlaceWhileHeld_isPurgedAndItsOwnerRequeuesAtTheTail() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);
        queuedAttempt("owner-a", PLACE_MS);
        queuedAttempt("owner-b", PLACE_MS);
        lua.redis.zadd(fair.places, 0, "owner-a");

        queuedAttempt("owner-c", PLACE_MS);
        assertEquals(List.of("owner-b", "owner-c"), fair.queueOrder());
        assertNull(place("owner-a"));

        queuedAttempt("owner-a", PLACE_MS);
        assertEquals(List.of("owner-b", "owner-c", "owner-a"), fair.queueOrder(), "a purged owner lost its place");
    }

    /* --------------- a queue member without a place --------------- */

    /**
     * A member in the queue without a place (a half-written queue) has no lease to wait for and
     * cannot be served: it is dropped and does not keep the next in line from the free lock.
     */
    @Test
    void fair_headWithoutPlaceFreeLock_isDroppedAndTheNextInLineAcquires() throws Exception {
        lua.redis.zadd(fair.queue, 1, "owner-x");
        fair.queued("owner-b", 2, lua.farEnd());

        List<Object> reply = acquire("owner-b", HOLDER_LEASE_MS, PLACE_MS);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(Map.of("owner-b", reply.get(1).toString()), lua.redis.hgetall(lock));
        assertEquals(0L, lua.redis.exists(fair.queue, fair.places), "owner-x was dropped, owner-b left the queue");
    }

    /** A newcomer behind a placeless head and a live waiter waits for the live waiter's place. */
    @Test
    void fair_headWithoutPlaceThenLiveWaiter_isDroppedAndANewcomerWaitsForTheLiveOne() throws Exception {
        long end = lua.farEnd();
        lua.redis.zadd(fair.queue, 1, "owner-x");
        fair.queued("owner-b", 2, end);

        long before = lua.serverMillis();
        List<Object> reply = queuedAttempt("owner-c", PLACE_MS);
        long after = lua.serverMillis();

        RwFixture.assertWaitUntil((Long) reply.get(1), end, before, after);
        assertEquals(List.of("owner-b", "owner-c"), fair.queueOrder());
        assertEquals(0L, lua.redis.exists(lock), "nothing is acquired");
    }

    /* --------------- an owner handed the lock by a release --------------- */

    @Test
    void fair_ownerHandedTheLock_takesItAfreshWithAHigherTokenAndItsOwnLease() throws Exception {
        // As fair-lock-release.lua leaves it: owner-a out of the queue, on record with the last
        // token, leased to the end of its place; owner-b still queued behind it.
        long handed = lua.serverMicros();
        fair.lastToken(handed, LONG_LEASE_MS);
        lua.redis.hset(lock, "owner-a", Long.toString(handed));
        lua.redis.pexpire(lock, LONG_LEASE_MS);
        long endB = lua.farEnd();
        fair.queued("owner-b", 1, endB);

        long before = lua.serverMillis();
        List<Object> reply = acquire("owner-a", HOLDER_LEASE_MS, PLACE_MS);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        long token = (Long) reply.get(1);
        assertTrue(token > handed, () -> "token " + token + " after the handed " + handed);
        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(lock));
        assertEquals(Long.toString(token), lua.redis.get(tokenKey));
        lua.assertTtlSetSince(lock, HOLDER_LEASE_MS, before);   // its own lease, not the place's end
        assertEquals(List.of("owner-b"), fair.queueOrder(), "the waiter behind keeps its place");
        assertEquals(List.of(ScoredValue.just(endB, "owner-b")), fair.placeEnds());
    }

    @Test
    void fair_ownerHandedTheLockTokenAheadOfClock_takesItWithTheTokenRightAfter() throws Exception {
        long last = lua.serverMicros() + 1_000_000_000L;
        fair.lastToken(last, LONG_LEASE_MS);
        lua.redis.hset(lock, "owner-a", Long.toString(last));
        lua.redis.pexpire(lock, LONG_LEASE_MS);

        assertEquals(List.of(1L, last + 1), acquire("owner-a", HOLDER_LEASE_MS, PLACE_MS));

        assertEquals(Map.of("owner-a", Long.toString(last + 1)), lua.redis.hgetall(lock));
    }

    @Test
    void fair_anotherOwnerWhileTheLockIsHandedOver_isQueuedUntilThePlaceEnds() throws Exception {
        long handed = lua.serverMicros();
        fair.lastToken(handed, LONG_LEASE_MS);
        lua.redis.hset(lock, "owner-a", Long.toString(handed));
        long since = lua.serverMillis();
        lua.redis.pexpire(lock, LONG_LEASE_MS);

        List<Object> reply = queuedAttempt("owner-b", PLACE_MS);
        long elapsed = lua.serverMillis() - since;

        long wait = (Long) reply.get(1);
        assertTrue(wait <= LONG_LEASE_MS && wait >= LONG_LEASE_MS - elapsed,
                () -> "wait " + wait + " is not what is left of the hand-over's lease " + LONG_LEASE_MS);
        assertEquals(Map.of("owner-a", Long.toString(handed)), lua.redis.hgetall(lock), "the hand-over stands");
        assertEquals(List.of("owner-b"), fair.queueOrder());
    }

    /* --------------- tokens shared with lock-acquire.lua --------------- */

    @Test
    void fair_tokensInterleavedWithLockAcquire_strictlyIncrease() throws Exception {
        long last = 0;
        for (int i = 0; i < 50; i++) {
            List<Object> reply = i % 2 == 0
                    ? acquire("owner-" + i, HOLDER_LEASE_MS, PLACE_MS)
                    : lua.run(Script.LOCK_ACQUIRE, new String[] {lock, tokenKey}, "owner-" + i,
                            Long.toString(HOLDER_LEASE_MS));
            assertEquals(1L, reply.get(0), () -> "reply " + reply);
            long token = (Long) reply.get(1);
            long previous = last;
            int cycle = i;
            assertTrue(token > previous, () -> "cycle " + cycle + ": token " + token + " after " + previous);
            last = token;
            assertEquals(1L, lua.redis.del(lock));
        }
    }

    /* --------------- wrong type --------------- */

    @Test
    void fair_lockKeyIsString_createsNoQueue() {
        lua.redis.set(lock, "not a hash");

        lua.failure(script, keys(), args("owner-a", HOLDER_LEASE_MS));

        assertEquals("not a hash", lua.redis.get(lock));
        assertEquals(0L, lua.redis.exists(tokenKey, fair.queue, fair.places), "no token, no place");
    }
}
