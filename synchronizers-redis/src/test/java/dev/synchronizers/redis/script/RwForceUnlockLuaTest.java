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
 * name or, with none and a reader waiting, every reader; with nothing held it does nothing.
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
        rw.writeHold("writer-0", 1001, LEASE_MS);
        lua.redis.set(rw.token, "1001");

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, forceUnlock()));

        assertEquals(0L, lua.redis.exists(rw.write));
        assertEquals("1001", lua.redis.get(rw.token), "the token key is kept: tokens only grow");
    }

    @Test
    void forceUnlock_readers_deletesEveryReadHold() throws Exception {
        long end = lua.farEnd();
        rw.readHold("reader-1", 1001, end);
        rw.readHold("reader-2", 1002, end);

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens));
    }

    @Test
    void forceUnlock_writerWithItsOwnReadHold_deletesBoth() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);
        rw.readHold("owner-a", 1002, lua.farEnd());

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(rw.write, rw.readers, rw.rtokens));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void forceUnlock_writersQueued_wakesTheFirstByNameAndKeepsTheQueueAndRwait() throws Exception {
        long end = lua.farEnd();
        rw.writeHold("writer-0", 1001, LEASE_MS);
        rw.queued("writer-1", 1, end);
        rw.queued("writer-2", 2, end);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, forceUnlock()), "writer-1");

        assertEquals(List.of("writer-1", "writer-2"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "writer-1"), ScoredValue.just(end, "writer-2")),
                rw.placeEnds());
        assertEquals("1", lua.redis.get(rw.rwait), "the readers still wait behind writer-1");
    }

    @Test
    void forceUnlock_firstWriterDead_skipsItAndWakesTheFirstLiveOne() throws Exception {
        long end = lua.farEnd();
        rw.writeHold("writer-0", 1001, LEASE_MS);
        rw.queued("dead", 1, 0);
        rw.queued("live", 2, end);

        // The dead writer is skipped, not woken.
        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, forceUnlock()), "live");

        assertEquals(List.of("live"), rw.queueOrder(), "and purged");
    }

    @Test
    void forceUnlock_readersHeldWriterQueued_wakesTheWriter() throws Exception {
        long end = lua.farEnd();
        rw.readHold("reader-1", 1001, end);
        rw.queued("writer-1", 1, end);

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, forceUnlock()), "writer-1");
    }

    @Test
    void forceUnlock_readerWaitsNoWriter_deletesRwaitAndWakesEveryReader() throws Exception {
        rw.writeHold("writer-0", 1001, LEASE_MS);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(1L, forceUnlock()), "released");

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
        rw.queued("writer-1", 1, end);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(0L, forceUnlock()));

        assertEquals(List.of("writer-1"), rw.queueOrder());
        assertEquals("1", lua.redis.get(rw.rwait));
    }
}
