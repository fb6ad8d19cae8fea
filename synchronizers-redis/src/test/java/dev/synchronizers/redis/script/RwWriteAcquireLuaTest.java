package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-write-acquire.lua} against a real server: the tests of {@link AcquireLuaContract}, whose
 * lock is the write hold's hash (a refused attempt leaves that hash as it was; its queueing is
 * tested here), and what readers and waiting writers do to a writer: live readers other than
 * itself and an earlier waiting writer queue it, its own read hold does not, and readers and
 * places that ran out are purged.
 */
@Tag("redis")
class RwWriteAcquireLuaTest extends QueueingAcquireLuaContract {

    private RwFixture rw;

    RwWriteAcquireLuaTest() {
        super(Script.RW_WRITE_ACQUIRE);
    }

    /** Runs after the contract's {@code names}, on its {@code lock}. */
    @BeforeEach
    void rwKeys() {
        rw = new RwFixture(lua, lock);
    }

    @Override
    String[] keys() {
        return new String[] {rw.write, rw.token, rw.readers, rw.rtokens, rw.queue, rw.places};
    }

    @Override
    QueueFixture waiting() {
        return rw;
    }

    @Override
    void heldByAnother() throws Exception {
        rw.writeHold("writer-0", 1001, HOLDER_LEASE_MS);
    }

    /** Tries for an owner that must be queued (the reply's first element is 0); returns the wait. */
    private long queued(String owner, long placeMs) throws Exception {
        return (Long) queuedAttempt(owner, placeMs).get(1);
    }

    /* --------------- free --------------- */

    @Test
    void writeAcquire_freeLockOwnerFirstInQueue_acquiresAndLeavesTheQueue() throws Exception {
        long end = lua.farEnd();
        rw.queued("owner-a", 1, end);
        rw.queued("writer-2", 2, end);

        long token = acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(rw.write));
        assertEquals(List.of("writer-2"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "writer-2")), rw.placeEnds());
    }

    @Test
    void writeAcquire_freeLockOwnerOnlyWaiter_acquiresAndTheQueueVanishes() throws Exception {
        rw.queued("owner-a", 1, lua.farEnd());

        acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(0L, lua.redis.exists(rw.queue, rw.places));
    }

    /* --------------- readers --------------- */

    @Test
    void writeAcquire_liveReadersOfOthers_queuedWithTheEarliestLeaseRemaining() throws Exception {
        long end = lua.farEnd();
        rw.readHold("reader-1", 1000, end);
        rw.readHold("reader-2", 1001, end - 5_000);   // added later, ends sooner

        long before = lua.serverMillis();
        long wait = queued("owner-a", PLACE_MS);
        long after = lua.serverMillis();

        RwFixture.assertWaitUntil(wait, end - 5_000, before, after);
        assertEquals(List.of("owner-a"), rw.queueOrder());
        lua.assertEndWithin(rw.places, "owner-a", before + PLACE_MS, after + PLACE_MS);
        lua.assertTtlSetSince(rw.queue, PLACE_MS, before);
        lua.assertTtlSetSince(rw.places, PLACE_MS, before);
        assertEquals(0L, lua.redis.exists(rw.write, rw.token), "nothing is acquired, no token issued");
        assertEquals(List.of("reader-2", "reader-1"), rw.readerNames(), "the readers are not touched");
    }

    @Test
    void writeAcquire_ownReadHoldOnly_acquires() throws Exception {
        // The leftover of a downgrade, or a reader that upgrades with no one else reading.
        long end = lua.farEnd();
        rw.readHold("owner-a", 1000, end);

        long token = acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(rw.write));
        assertEquals(List.of(ScoredValue.just(end, "owner-a")), lua.redis.zrangeWithScores(rw.readers, 0, -1),
                "its read hold is kept");
        assertEquals(Map.of("owner-a", "1000"), lua.redis.hgetall(rw.rtokens));
    }

    @Test
    void writeAcquire_ownReadHoldAndAnotherReader_waitsForTheOtherOnly() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1000, end - 5_000);   // ends first, but is the owner's own
        rw.readHold("reader-b", 1001, end);

        long before = lua.serverMillis();
        long wait = queued("owner-a", PLACE_MS);
        long after = lua.serverMillis();

        RwFixture.assertWaitUntil(wait, end, before, after);
        assertEquals(List.of("owner-a"), rw.queueOrder());
    }

    @Test
    void writeAcquire_readerWhoseLeaseRanOut_isPurgedAndDoesNotBlock() throws Exception {
        rw.readHold("reader-dead", 1000, 1);

        acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens, rw.queue, rw.places),
                "the dead reader is gone from readers and rtokens; the owner was never queued");
    }

    /* --------------- waiting writers --------------- */

    @Test
    void writeAcquire_anotherWriterQueuedFirst_queuedBehindItWithItsPlaceRemaining() throws Exception {
        long end = lua.farEnd();
        rw.queued("writer-1", 1, end);

        long before = lua.serverMillis();
        long wait = queued("owner-a", PLACE_MS);
        long after = lua.serverMillis();

        RwFixture.assertWaitUntil(wait, end, before, after);
        assertEquals(List.of("writer-1", "owner-a"), rw.queueOrder());
        lua.assertEndWithin(rw.places, "owner-a", before + PLACE_MS, after + PLACE_MS);
        assertEquals(0L, lua.redis.exists(rw.write, rw.token));
    }

    @Test
    void writeAcquire_heldByAnother_queuesWithAPlaceLeasedInServerTime() throws Exception {
        rw.writeHold("writer-0", 1001, HOLDER_LEASE_MS);

        long before = lua.serverMillis();
        long wait = queued("owner-a", PLACE_MS);
        long after = lua.serverMillis();

        assertTrue(wait > 0 && wait <= HOLDER_LEASE_MS, () -> "wait " + wait);
        assertEquals(List.of("owner-a"), rw.queueOrder());
        lua.assertEndWithin(rw.places, "owner-a", before + PLACE_MS, after + PLACE_MS);
        lua.assertTtlSetSince(rw.queue, PLACE_MS, before);
        lua.assertTtlSetSince(rw.places, PLACE_MS, before);
    }

    @Test
    void writeAcquire_threeWritersWhileHeld_queueInArrivalOrder() throws Exception {
        rw.writeHold("writer-0", 1001, HOLDER_LEASE_MS);

        for (String owner : List.of("owner-c", "owner-a", "owner-b")) {
            queued(owner, PLACE_MS);
        }

        assertEquals(List.of("owner-c", "owner-a", "owner-b"), rw.queueOrder());
    }

    @Test
    void writeAcquire_deadFirstWriter_isPurgedAndTheNextAcquires() throws Exception {
        rw.queued("writer-dead", 1, 1);
        rw.queued("owner-a", 2, lua.farEnd());

        acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(0L, lua.redis.exists(rw.queue, rw.places), "writer-dead was purged, owner-a left the queue");
    }

    @Test
    void writeAcquire_ownPlaceRanOut_isPurgedAndTheOwnerRequeuesAtTheTail() throws Exception {
        rw.writeHold("writer-0", 1001, HOLDER_LEASE_MS);
        long end = lua.farEnd();
        rw.queued("owner-a", 1, 1);
        rw.queued("writer-2", 2, end);

        queued("owner-a", PLACE_MS);

        assertEquals(List.of("writer-2", "owner-a"), rw.queueOrder(), "a purged writer lost its place");
    }

    /**
     * A writer in the queue without a place (a half-written queue) has no lease to wait for and
     * cannot be served: it is dropped and does not keep the next writer from the free lock.
     */
    @Test
    void writeAcquire_firstWriterWithoutPlace_isDroppedAndTheNextAcquires() throws Exception {
        lua.redis.zadd(rw.queue, 1, "writer-x");
        rw.queued("owner-a", 2, lua.farEnd());

        acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(0L, lua.redis.exists(rw.queue, rw.places), "writer-x was dropped, owner-a left the queue");
    }

    /** A newcomer behind a placeless first writer and a live one waits for the live one's place. */
    @Test
    void writeAcquire_firstWriterWithoutPlaceThenLiveOne_isDroppedAndANewcomerWaitsForTheLiveOne()
            throws Exception {
        long end = lua.farEnd();
        lua.redis.zadd(rw.queue, 1, "writer-x");
        rw.queued("writer-2", 2, end);

        long before = lua.serverMillis();
        long wait = queued("owner-a", PLACE_MS);
        long after = lua.serverMillis();

        RwFixture.assertWaitUntil(wait, end, before, after);
        assertEquals(List.of("writer-2", "owner-a"), rw.queueOrder());
        assertEquals(0L, lua.redis.exists(rw.write, rw.token));
    }

    /* --------------- tokens shared with the read scripts --------------- */

    @Test
    void writeAcquire_tokensInterleavedWithReadHolds_strictlyIncrease() throws Exception {
        String[] readKeys = {rw.write, rw.token, rw.readers, rw.rtokens};
        long last = 0;
        for (int i = 0; i < 50; i++) {
            List<Object> reply = i % 2 == 0
                    ? acquire("owner-" + i, HOLDER_LEASE_MS, PLACE_MS)
                    : lua.run(Script.RW_READ_TRY, readKeys, "owner-" + i, Long.toString(HOLDER_LEASE_MS));
            assertEquals(1L, reply.get(0), () -> "reply " + reply);
            long token = (Long) reply.get(1);
            long previous = last;
            int cycle = i;
            assertTrue(token > previous, () -> "cycle " + cycle + ": token " + token + " after " + previous);
            last = token;
            lua.redis.del(rw.write, rw.readers, rw.rtokens);   // hand-made releases
        }
    }

    /* --------------- wrong type --------------- */

    @Test
    void writeAcquire_lockKeyIsString_createsNoQueue() {
        lua.redis.set(lock, "not a hash");

        lua.failure(script, keys(), args("owner-a", HOLDER_LEASE_MS));

        assertEquals("not a hash", lua.redis.get(lock));
        assertEquals(0L, lua.redis.exists(tokenKey, rw.queue, rw.places), "no token, no place");
        assertNull(lua.redis.zscore(rw.places, "owner-a"));
    }
}
