package dev.synchronizers.redis.script;

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
 * leased in server time, the head's turn on a free lock, and the purge of expired places.
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

        assertEquals(List.of(0L, -1L), acquire("owner-b", HOLDER_LEASE_MS, PLACE_MS));

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

    /* --------------- free lock, someone queued --------------- */

    @Test
    void fair_freeLockAnotherOwnerFirstInQueue_waitsForTheHeadsPlace() throws Exception {
        acquired("holder", HOLDER_LEASE_MS);
        queuedAttempt("owner-a", PLACE_MS);
        assertEquals(1L, lua.redis.del(lock));   // the holder's release, by hand
        String tokenBefore = lua.redis.get(tokenKey);
        double headEnd = place("owner-a");

        long before = lua.serverMillis();
        List<Object> reply = queuedAttempt("owner-b", PLACE_MS);
        long after = lua.serverMillis();

        long wait = (Long) reply.get(1);
        assertTrue(wait > 0 && wait <= PLACE_MS, () -> "wait " + wait);
        assertTrue(wait >= headEnd - after && wait <= headEnd - before,
                () -> "wait " + wait + " is not the head's remaining place (ends " + headEnd + ", now in ["
                        + before + ", " + after + "])");
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
