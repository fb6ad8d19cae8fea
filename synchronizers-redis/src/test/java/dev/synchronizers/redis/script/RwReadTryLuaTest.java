package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-read-try.lua} against a real server: the tests of {@link RwReadAcquireLuaContract}
 * (a refusal leaves no {@code rwait}), and barging: waiting writers do not stop the try, a write
 * hold of another owner does, and the queue is never touched.
 */
@Tag("redis")
class RwReadTryLuaTest extends RwReadAcquireLuaContract {

    RwReadTryLuaTest() {
        super(Script.RW_READ_TRY, false);
    }

    @Override
    String[] keys() {
        return new String[] {rw.write, rw.token, rw.readers, rw.rtokens};
    }

    @Test
    void readTry_writerQueued_bargesAndLeavesTheQueueAlone() throws Exception {
        long end = lua.farEnd();
        rw.queued("writer-1", 1, end);
        rw.queued("writer-2", 2, end);

        long token = acquired("owner-a", READ_LEASE_MS);

        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(rw.rtokens));
        assertEquals(List.of("writer-1", "writer-2"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "writer-1"), ScoredValue.just(end, "writer-2")),
                rw.placeEnds());
        assertEquals(0L, lua.redis.exists(rw.rwait, rw.write));
    }

    @Test
    void readTry_writeHoldAndQueuedWriters_refusedWithoutRwait() throws Exception {
        rw.writeHold("writer-0", 1001, WRITE_LEASE_MS);
        rw.queued("writer-1", 1, lua.farEnd());

        List<Object> reply = read("owner-a", READ_LEASE_MS);

        assertEquals(0L, reply.get(0), () -> "a try does not barge over a write hold, replied " + reply);
        assertEquals(0L, lua.redis.exists(rw.rwait, rw.readers, rw.rtokens));
        assertEquals(List.of("writer-1"), rw.queueOrder());
    }

    @Test
    void readTry_theWriterItselfWithWritersQueued_reads() throws Exception {
        rw.writeHold("owner-a", 1001, WRITE_LEASE_MS);
        rw.queued("writer-1", 1, lua.farEnd());

        long token = acquired("owner-a", READ_LEASE_MS);

        assertEquals(Map.of("owner-a", Long.toString(token)), lua.redis.hgetall(rw.rtokens));
        assertEquals(Map.of("owner-a", "1001"), lua.redis.hgetall(rw.write));
    }
}
