package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-write-try.lua} against a real server: the tests of {@link AcquireLuaContract} (its lock
 * is the write hold's hash; a refused try leaves no trace), and readers: a live read hold of
 * another owner refuses the try with its remaining lease, one that ran out or the owner's own
 * does not; waiting writers do not (the try barges).
 */
@Tag("redis")
class RwWriteTryLuaTest extends AcquireLuaContract {

    private RwFixture rw;

    RwWriteTryLuaTest() {
        super(Script.RW_WRITE_TRY, false);
    }

    /** Runs after the contract's {@code names}, on its {@code lock}. */
    @BeforeEach
    void rwKeys() {
        rw = new RwFixture(lua, lock);
    }

    @Override
    String[] keys() {
        return new String[] {rw.write, rw.token, rw.readers};
    }

    /* --------------- waiting writers --------------- */

    @Test
    void writeTry_writersQueued_bargesAndLeavesTheQueueAlone() throws Exception {
        long end = lua.farEnd();
        rw.queued("writer-1", 1, end);
        rw.queued("writer-2", 2, end);

        long token = acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(rw.write));
        assertEquals(List.of("writer-1", "writer-2"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "writer-1"), ScoredValue.just(end, "writer-2")),
                rw.placeEnds());
    }

    /* --------------- readers --------------- */

    @Test
    void writeTry_liveReadersOfOthers_refusedWithTheEarliestLeaseRemaining() throws Exception {
        long end = lua.farEnd();
        rw.readHold("reader-1", 1000, end);
        rw.readHold("reader-2", 1001, end - 5_000);

        long before = lua.serverMillis();
        List<Object> reply = acquire("owner-a", HOLDER_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        RwFixture.assertWaitUntil((Long) reply.get(1), end - 5_000, before, after);
        assertEquals(0L, lua.redis.exists(rw.write, rw.token, rw.queue, rw.places), "no hold, no token, no place");
        assertEquals(List.of("reader-2", "reader-1"), rw.readerNames());
    }

    @Test
    void writeTry_readerWhoseLeaseRanOut_doesNotRefuseAndIsLeftForThePurge() throws Exception {
        rw.readHold("reader-dead", 1000, 1);

        long token = acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(rw.write));
        assertEquals(1.0, lua.redis.zscore(rw.readers, "reader-dead"), "the try does not purge");
        assertEquals(Map.of("reader-dead", "1000"), lua.redis.hgetall(rw.rtokens));
    }

    @Test
    void writeTry_ownReadHold_acquiresAndKeepsIt() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1000, end);

        long token = acquired("owner-a", HOLDER_LEASE_MS);

        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(rw.write));
        assertEquals(List.of(ScoredValue.just(end, "owner-a")), lua.redis.zrangeWithScores(rw.readers, 0, -1));
    }

    @Test
    void writeTry_ownReadHoldAndAnotherReader_refusedWithTheOthersLease() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1000, end - 5_000);
        rw.readHold("reader-b", 1001, end);

        long before = lua.serverMillis();
        List<Object> reply = acquire("owner-a", HOLDER_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        RwFixture.assertWaitUntil((Long) reply.get(1), end, before, after);
        assertEquals(0L, lua.redis.exists(rw.write));
    }
}
