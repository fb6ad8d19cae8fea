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
 * writer is woken by name on its client's channel alone, or, with none left and a reader waiting,
 * every reader with {@code 'released'} on the shared channel.
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
        rw.queued(end, "client-b:7", "client-a:1", "client-c:9");
        rw.readerWaits();

        rw.assertServesNobody(() -> assertEquals(1L, leave("client-a:1")), "client-b:7", "client-c:9");

        assertEquals(List.of("client-b:7", "client-c:9"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "client-b:7"), ScoredValue.just(end, "client-c:9")),
                rw.placeEnds());
        assertEquals("1", lua.redis.get(rw.rwait), "readers still wait behind client-b:7");
    }

    @Test
    void leave_notQueued_returnsZeroAndChangesNothing() throws Exception {
        rw.queued(end, "client-b:7");
        rw.readerWaits();

        rw.assertServesNobody(() -> assertEquals(0L, leave("client-a:1")), "client-b:7", "client-a:1");

        assertEquals(List.of("client-b:7"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "client-b:7")), rw.placeEnds());
        assertEquals("1", lua.redis.get(rw.rwait));
    }

    @Test
    void leave_emptyQueue_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, leave("client-a:1"));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void leave_firstWithoutWriteHold_wakesTheNextWriterByNameOnItsClientsChannelAndKeepsRwait() throws Exception {
        rw.queued(end, "client-a:1", "client-b:7", "client-c:9");
        rw.readerWaits();

        rw.assertWakesWriter(() -> assertEquals(1L, leave("client-a:1")), "client-b:7", "client-c:9", "client-a:1");

        assertEquals(0L, lua.redis.exists(rw.write), "leaving acquires nothing");
        assertEquals(List.of("client-b:7", "client-c:9"), rw.queueOrder());
        assertEquals("1", lua.redis.get(rw.rwait), "readers still wait behind client-b:7");
    }

    @Test
    void leave_firstWithoutWriteHoldNextDead_purgesItAndWakesTheNextLiveWriter() throws Exception {
        rw.queued(end, "client-a:1");
        rw.queued("client-dead:3", 2, 1);
        rw.queued("client-c:9", 3, end);

        rw.assertWakesWriter(() -> assertEquals(1L, leave("client-a:1")), "client-c:9", "client-dead:3", "client-a:1");

        assertEquals(List.of("client-c:9"), rw.queueOrder());
        assertEquals(List.of("client-c:9"), lua.redis.zrange(rw.places, 0, -1));
    }

    @Test
    void leave_lastWriterReaderWaits_deletesRwaitAndWakesEveryReader() throws Exception {
        rw.queued(end, "client-a:1");
        rw.readerWaits();

        rw.assertWakesReaders(() -> assertEquals(1L, leave("client-a:1")), "client-a:1");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void leave_lastLiveWriterReaderWaits_purgesTheDeadAndWakesEveryReader() throws Exception {
        rw.queued(end, "client-a:1");
        rw.queued("client-dead:3", 2, 1);
        rw.readerWaits();

        rw.assertWakesReaders(() -> assertEquals(1L, leave("client-a:1")), "client-a:1", "client-dead:3");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void leave_lastWriterNoReaderWaits_publishesNothing() throws Exception {
        rw.queued(end, "client-a:1");

        rw.assertServesNobody(() -> assertEquals(1L, leave("client-a:1")), "client-a:1");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void leave_firstWithWriteHold_publishesNothingAndKeepsRwait() throws Exception {
        rw.writeHold("client-z:5", 1001, LEASE_MS);
        rw.queued(end, "client-a:1", "client-b:7");
        rw.readerWaits();

        rw.assertServesNobody(() -> assertEquals(1L, leave("client-a:1")), "client-b:7", "client-z:5");

        assertEquals(List.of("client-b:7"), rw.queueOrder());
        assertEquals("1", lua.redis.get(rw.rwait), "the readers wait for the write hold");
        assertEquals(Map.of("client-z:5", "1001"), lua.redis.hgetall(rw.write), "the hold is not touched");
    }

    @Test
    void leave_lastWriterWithWriteHold_keepsRwaitForTheHoldersRelease() throws Exception {
        rw.writeHold("client-z:5", 1001, LEASE_MS);
        rw.queued(end, "client-a:1");
        rw.readerWaits();

        rw.assertServesNobody(() -> assertEquals(1L, leave("client-a:1")), "client-z:5");

        assertEquals("1", lua.redis.get(rw.rwait));
    }
}
