package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-force-unlock.lua} against a real server, on holds and queues written by hand: it
 * deletes the write hold, the readers and their tokens, then wakes the first waiting writer by
 * name, on its client's channel alone, or, with none and a reader waiting, every reader on the
 * shared channel; with nothing held it does nothing.
 */
@Tag("redis")
class RwForceUnlockLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private RwFixture rw;

    @BeforeEach
    void names() {
        rw = new RwFixture(lua, base);
    }

    private long forceUnlock() throws Exception {
        return lua.<Long>run(Script.RW_FORCE_UNLOCK,
                new String[] {rw.write, rw.readers, rw.rtokens, rw.queue, rw.places, rw.rwait, rw.wakeups});
    }

    /* --------------- what is released --------------- */

    @Test
    void forceUnlock_writeHold_deletesItAndPublishesNothing() throws Exception {
        rw.writeHold("client-z:5", 1001, LEASE_MS);
        lua.redis.set(rw.token, "1001");

        rw.assertServesNobody(() -> assertEquals(1L, forceUnlock()), "client-z:5");

        assertEquals(0L, lua.redis.exists(rw.write));
        assertEquals("1001", lua.redis.get(rw.token), "the token key is kept: tokens only grow");
    }

    @Test
    void forceUnlock_readers_deletesEveryReadHold() throws Exception {
        long end = lua.farEnd();
        rw.readHold("client-r:1", 1001, end);
        rw.readHold("client-r:2", 1002, end);

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens));
    }

    @Test
    void forceUnlock_writerWithItsOwnReadHold_deletesBoth() throws Exception {
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        rw.readHold("client-a:1", 1002, lua.farEnd());

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(rw.write, rw.readers, rw.rtokens));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void forceUnlock_writersQueued_wakesTheFirstByNameOnItsClientsChannelAndKeepsTheQueueAndRwait() throws Exception {
        long end = lua.farEnd();
        rw.writeHold("client-z:5", 1001, LEASE_MS);
        rw.queued("client-b:7", 1, end);
        rw.queued("client-c:9", 2, end);
        rw.readerWaits();

        rw.assertWakesWriter(() -> assertEquals(1L, forceUnlock()), "client-b:7", "client-c:9", "client-z:5");

        assertEquals(List.of("client-b:7", "client-c:9"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "client-b:7"), ScoredValue.just(end, "client-c:9")),
                rw.placeEnds());
        assertEquals("1", lua.redis.get(rw.rwait), "the readers still wait behind client-b:7");
    }

    @Test
    void forceUnlock_firstWriterDead_skipsItAndWakesTheFirstLiveOne() throws Exception {
        long end = lua.farEnd();
        rw.writeHold("client-z:5", 1001, LEASE_MS);
        rw.queued("client-dead:3", 1, 0);
        rw.queued("client-live:6", 2, end);

        // The dead writer is skipped, not woken, though its client listens.
        rw.assertWakesWriter(() -> assertEquals(1L, forceUnlock()), "client-live:6", "client-dead:3");

        assertEquals(List.of("client-live:6"), rw.queueOrder(), "and purged");
    }

    @Test
    void forceUnlock_readersHeldWriterQueued_wakesTheWriter() throws Exception {
        long end = lua.farEnd();
        rw.readHold("client-r:1", 1001, end);
        rw.queued("client-b:7", 1, end);

        rw.assertWakesWriter(() -> assertEquals(1L, forceUnlock()), "client-b:7", "client-r:1");
    }

    @Test
    void forceUnlock_readerWaitsNoWriter_deletesRwaitAndWakesEveryReader() throws Exception {
        rw.writeHold("client-z:5", 1001, LEASE_MS);
        rw.readerWaits();

        rw.assertWakesReaders(() -> assertEquals(1L, forceUnlock()), "client-z:5");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    /* --------------- nothing held --------------- */

    @Test
    void forceUnlock_nothingHeld_returnsZeroAndPublishesNothing() throws Exception {
        lua.assertPublishes(rw.wakeups, () -> assertEquals(0L, forceUnlock()));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void forceUnlock_nothingHeldButWaiters_returnsZeroAndLeavesThemAlone() throws Exception {
        long end = lua.farEnd();
        rw.queued("client-b:7", 1, end);
        rw.readerWaits();

        rw.assertServesNobody(() -> assertEquals(0L, forceUnlock()), "client-b:7");

        assertEquals(List.of("client-b:7"), rw.queueOrder());
        assertEquals("1", lua.redis.get(rw.rwait));
    }
}
