package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-write-leave.lua} against a real server, on write holds and writer queues written by
 * hand: the writer leaves its place, and when it was first and no write hold exists, the next live
 * writer is woken by name, or, with none left and a reader waiting, every reader with
 * {@code 'released'}.
 */
@Tag("redis")
class RwWriteLeaveLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private RwFixture rw;
    /** A place end no test reaches. */
    private long end;

    @BeforeEach
    void names() {
        rw = new RwFixture(lua, base);
        end = lua.farEnd();
    }

    private long leave(String owner) throws Exception {
        return lua.<Long>run(Script.RW_WRITE_LEAVE, new String[] {rw.write, rw.queue, rw.places, rw.rwait, rw.wakeups},
                owner);
    }

    /* --------------- leaving --------------- */

    @Test
    void leave_queuedWriterNotFirst_removesItAndPublishesNothing() throws Exception {
        rw.queued(end, "writer-1", "owner-a", "writer-3");
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, leave("owner-a")));

        assertEquals(List.of("writer-1", "writer-3"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "writer-1"), ScoredValue.just(end, "writer-3")),
                rw.placeEnds());
        assertEquals("1", lua.redis.get(rw.rwait), "readers still wait behind writer-1");
    }

    @Test
    void leave_notQueued_returnsZeroAndChangesNothing() throws Exception {
        rw.queued(end, "writer-1");
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(0L, leave("owner-a")));

        assertEquals(List.of("writer-1"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "writer-1")), rw.placeEnds());
        assertEquals("1", lua.redis.get(rw.rwait));
    }

    @Test
    void leave_emptyQueue_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, leave("owner-a"));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void leave_firstWithoutWriteHold_wakesTheNextWriterByNameAndKeepsRwait() throws Exception {
        rw.queued(end, "owner-a", "writer-2", "writer-3");
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, leave("owner-a")), "writer-2");

        assertEquals(0L, lua.redis.exists(rw.write), "leaving acquires nothing");
        assertEquals(List.of("writer-2", "writer-3"), rw.queueOrder());
        assertEquals("1", lua.redis.get(rw.rwait), "readers still wait behind writer-2");
    }

    @Test
    void leave_firstWithoutWriteHoldNextDead_purgesItAndWakesTheNextLiveWriter() throws Exception {
        rw.queued(end, "owner-a");
        rw.queued("writer-dead", 2, 1);
        rw.queued("writer-3", 3, end);

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, leave("owner-a")), "writer-3");

        assertEquals(List.of("writer-3"), rw.queueOrder());
        assertEquals(List.of("writer-3"), lua.redis.zrange(rw.places, 0, -1));
    }

    @Test
    void leave_lastWriterReaderWaits_deletesRwaitAndWakesEveryReader() throws Exception {
        rw.queued(end, "owner-a");
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, leave("owner-a")), "released");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void leave_lastLiveWriterReaderWaits_purgesTheDeadAndWakesEveryReader() throws Exception {
        rw.queued(end, "owner-a");
        rw.queued("writer-dead", 2, 1);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, leave("owner-a")), "released");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void leave_lastWriterNoReaderWaits_publishesNothing() throws Exception {
        rw.queued(end, "owner-a");

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, leave("owner-a")));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void leave_firstWithWriteHold_publishesNothingAndKeepsRwait() throws Exception {
        rw.writeHold("writer-0", 1001, LEASE_MS);
        rw.queued(end, "owner-a", "writer-2");
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, leave("owner-a")));

        assertEquals(List.of("writer-2"), rw.queueOrder());
        assertEquals("1", lua.redis.get(rw.rwait), "the readers wait for the write hold");
        assertEquals(Map.of("writer-0", "1001"), lua.redis.hgetall(rw.write), "the hold is not touched");
    }

    @Test
    void leave_lastWriterWithWriteHold_keepsRwaitForTheHoldersRelease() throws Exception {
        rw.writeHold("writer-0", 1001, LEASE_MS);
        rw.queued(end, "owner-a");
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, leave("owner-a")));

        assertEquals("1", lua.redis.get(rw.rwait));
    }
}
