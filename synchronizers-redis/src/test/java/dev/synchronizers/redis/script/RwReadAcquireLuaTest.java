package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-read-acquire.lua} against a real server: the tests of {@link RwReadAcquireLuaContract}
 * (a refusal sets {@code rwait}), and the waiting writers a reader queues behind: the wait is the
 * first writer's place remaining, the writer itself still reads (downgrade), and readers and
 * writer places that ran out are purged.
 */
@Tag("redis")
class RwReadAcquireLuaTest extends RwReadAcquireLuaContract {

    RwReadAcquireLuaTest() {
        super(Script.RW_READ_ACQUIRE, true);
    }

    @Override
    String[] keys() {
        return new String[] {rw.write, rw.token, rw.readers, rw.rtokens, rw.queue, rw.places, rw.rwait};
    }

    /* --------------- waiting writers --------------- */

    @Test
    void readAcquire_writerQueued_refusedWithItsPlaceRemainingAndSetsRwait() throws Exception {
        long end = lua.farEnd();
        rw.queued("writer-1", 1, end);
        rw.queued("writer-2", 2, end - 1_000);   // a sooner end, but second in line

        long before = lua.serverMillis();
        List<Object> reply = read("owner-a", READ_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(0L, reply.get(0), () -> "a reader waits behind a waiting writer, replied " + reply);
        RwFixture.assertWaitUntil((Long) reply.get(1), end, before, after);
        assertEquals("1", lua.redis.get(rw.rwait));
        lua.assertTtlSetSince(rw.rwait, end - before, before);   // as long as the reader may sleep, past its own lease
        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens, rw.token, rw.write), "nothing is acquired");
        assertEquals(List.of("writer-1", "writer-2"), rw.queueOrder(), "the queue is not touched");
    }

    @Test
    void readAcquire_writerQueuedBehindLiveReaders_newReaderIsStillRefused() throws Exception {
        // A stream of readers cannot starve the writer: readers already in keep their holds, new ones wait.
        long end = lua.farEnd();
        rw.readHold("reader-1", 1000, end);
        rw.queued("writer-1", 1, end);

        List<Object> reply = read("owner-a", READ_LEASE_MS);

        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        assertEquals(List.of("reader-1"), rw.readerNames());
        assertEquals(Map.of("reader-1", "1000"), lua.redis.hgetall(rw.rtokens));
    }

    @Test
    void readAcquire_theWriterItselfWithWritersQueued_reads() throws Exception {
        rw.writeHold("owner-a", 1001, WRITE_LEASE_MS);
        rw.queued("writer-1", 1, lua.farEnd());

        long token = acquired("owner-a", READ_LEASE_MS);

        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(rw.rtokens));
        assertEquals(Map.of("owner-a", "1001"), lua.redis.hgetall(rw.write));
        assertEquals(List.of("writer-1"), rw.queueOrder());
        assertEquals(0L, lua.redis.exists(rw.rwait), "an acquiring reader records no waiting reader");
    }

    @Test
    void readAcquire_refusedAgainWithLongerLease_extendsRwait() throws Exception {
        rw.queued("writer-1", 1, lua.farEnd());
        assertEquals(0L, read("owner-a", READ_LEASE_MS).get(0));

        long before = lua.serverMillis();
        assertEquals(0L, read("owner-b", LONG_LEASE_MS).get(0));

        lua.assertTtlSetSince(rw.rwait, LONG_LEASE_MS, before);
    }

    /* --------------- purges --------------- */

    @Test
    void readAcquire_readerWhoseLeaseRanOut_isPurgedFromReadersAndRtokens() throws Exception {
        rw.readHold("reader-dead", 1000, 1);   // its lease ended long ago
        long end = lua.farEnd();
        rw.readHold("reader-live", 1001, end);

        long token = acquired("owner-a", READ_LEASE_MS);

        assertEquals(Set.of("reader-live", "owner-a"), Set.copyOf(rw.readerNames()));
        assertEquals(Map.of("reader-live", "1001", "owner-a", Long.toString(token)), lua.redis.hgetall(rw.rtokens));
    }

    @Test
    void readAcquire_writerWhosePlaceRanOut_isPurgedAndNoLongerBlocks() throws Exception {
        rw.queued("writer-dead", 1, 1);   // stopped renewing its place long ago

        acquired("owner-a", READ_LEASE_MS);

        assertEquals(0L, lua.redis.exists(rw.queue, rw.places, rw.rwait), "the dead writer is gone from both");
    }

    @Test
    void readAcquire_deadFirstWriterLiveSecond_waitsForTheLiveOnesPlace() throws Exception {
        long end = lua.farEnd();
        rw.queued("writer-dead", 1, 1);
        rw.queued("writer-2", 2, end);

        long before = lua.serverMillis();
        List<Object> reply = read("owner-a", READ_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        RwFixture.assertWaitUntil((Long) reply.get(1), end, before, after);
        assertEquals(List.of("writer-2"), rw.queueOrder());
        assertNull(lua.redis.zscore(rw.places, "writer-dead"));
    }

    /**
     * A writer in the queue without a place (a half-written queue) has no lease to wait for and
     * cannot be served: it is dropped and keeps no reader out.
     */
    @Test
    void readAcquire_writerWithoutPlace_isDroppedAndNoLongerBlocks() throws Exception {
        lua.redis.zadd(rw.queue, 1, "writer-x");

        acquired("owner-a", READ_LEASE_MS);

        assertEquals(0L, lua.redis.exists(rw.queue, rw.places, rw.rwait), "writer-x was dropped");
    }

    /** A reader behind a placeless first writer and a live one waits for the live one's place. */
    @Test
    void readAcquire_firstWriterWithoutPlaceThenLiveOne_waitsForTheLiveOnesPlace() throws Exception {
        long end = lua.farEnd();
        lua.redis.zadd(rw.queue, 1, "writer-x");
        rw.queued("writer-2", 2, end);

        long before = lua.serverMillis();
        List<Object> reply = read("owner-a", READ_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        RwFixture.assertWaitUntil((Long) reply.get(1), end, before, after);
        assertEquals(List.of("writer-2"), rw.queueOrder());
    }

    @Test
    void readAcquire_writeHoldAndQueuedWriter_waitsForTheWriteHold() throws Exception {
        rw.writeHold("writer-0", 1001, WRITE_LEASE_MS);
        rw.queued("writer-1", 1, lua.farEnd());

        List<Object> reply = read("owner-a", READ_LEASE_MS);

        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        long wait = (Long) reply.get(1);
        // The write hold's PTTL, not the (longer) place of the queued writer.
        assertTrue(wait > 0 && wait <= WRITE_LEASE_MS, () -> "wait " + wait);
    }

    /** The mark outlives the reader's own lease when the writer's lease is longer: the reader sleeps that long. */
    @Test
    void readAcquire_writerLeaseLongerThanTheReaders_marksForTheWritersRemainingLease() throws Exception {
        // Read before the writer's lease is set: the mark's lease, counted from here, is no shorter.
        long before = lua.serverMillis();
        lua.redis.hset(rw.write, "writer", "1");
        lua.redis.pexpire(rw.write, LONG_LEASE_MS);

        List<Object> reply = read("owner-a", 1_000);

        assertEquals(0L, reply.get(0));
        lua.assertTtlSetSince(rw.rwait, LONG_LEASE_MS, before);
    }
}
