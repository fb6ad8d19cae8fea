package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-write-release.lua} against a real server, on holds, readers and queues written by
 * hand: the token check, then whom it wakes: the first live waiting writer by name, else (when a
 * reader waits) every reader with {@code 'released'}, else nobody.
 */
@Tag("redis")
class RwWriteReleaseLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private RwFixture rw;

    @BeforeEach
    void names() {
        rw = new RwFixture(lua, base);
    }

    private List<Object> release(String owner, String token) throws Exception {
        return lua.run(Script.RW_WRITE_RELEASE, new String[] {rw.write, rw.queue, rw.places, rw.rwait, rw.wakeups},
                owner, token);
    }

    private void assertHoldKept(String owner, String token) {
        assertEquals(Map.of(owner, token), lua.redis.hgetall(rw.write));
        lua.assertTtlAtMost(rw.write, LEASE_MS);
    }

    /* --------------- who may release --------------- */

    @Test
    void release_rightOwnerAndToken_deletesTheHoldAndPublishesNothing() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(1L, ""), release("owner-a", "1001")));

        assertEquals(0L, lua.redis.exists(rw.all()), "nothing is left or created");
    }

    @Test
    void release_wrongToken_returnsZeroAndChangesNothing() throws Exception {
        rw.writeHold("owner-a", 1002, LEASE_MS);
        long end = lua.farEnd();
        rw.queued("writer-1", 1, end);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(0L, ""), release("owner-a", "1001")));

        assertHoldKept("owner-a", "1002");
        assertEquals(List.of("writer-1"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "writer-1")), rw.placeEnds());
        assertEquals("1", lua.redis.get(rw.rwait));
    }

    @Test
    void release_wrongOwner_returnsZeroAndChangesNothing() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(0L, ""), release("owner-b", "1001")));

        assertHoldKept("owner-a", "1001");
        assertEquals("1", lua.redis.get(rw.rwait));
    }

    @Test
    void release_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void release_writersQueued_wakesTheFirstByNameAndKeepsTheQueue() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);
        long end = lua.farEnd();
        rw.queued("writer-1", 1, end);
        rw.queued("writer-2", 2, end);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups,
                () -> assertEquals(List.of(1L, "writer-1"), release("owner-a", "1001")), "writer-1");

        assertEquals(0L, lua.redis.exists(rw.write));
        assertEquals(List.of("writer-1", "writer-2"), rw.queueOrder(),
                "the woken writer keeps its place until it acquires");
        assertEquals("1", lua.redis.get(rw.rwait), "readers still wait behind the writers");
    }

    @Test
    void release_deadFirstWriter_isPurgedAndTheNextLiveOneIsWoken() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);
        rw.queued("writer-dead", 1, 1);
        rw.queued("writer-2", 2, lua.farEnd());

        // Had the dead writer been published, its message would come first.
        lua.assertPublishes(rw.wakeups,
                () -> assertEquals(List.of(1L, "writer-2"), release("owner-a", "1001")), "writer-2");

        assertEquals(List.of("writer-2"), rw.queueOrder());
        assertEquals(List.of("writer-2"), lua.redis.zrange(rw.places, 0, -1));
    }

    @Test
    void release_readerWaitsNoWriter_deletesRwaitAndWakesEveryReader() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups,
                () -> assertEquals(List.of(1L, "released"), release("owner-a", "1001")), "released");

        assertEquals(0L, lua.redis.exists(rw.write, rw.rwait));
    }

    @Test
    void release_onlyDeadWritersAndAReaderWaits_purgesThemAndWakesTheReaders() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);
        rw.queued("writer-dead", 1, 1);
        rw.readerWaits();

        lua.assertPublishes(rw.wakeups,
                () -> assertEquals(List.of(1L, "released"), release("owner-a", "1001")), "released");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void release_withOwnReadHold_keepsTheReadHold() throws Exception {
        // A downgrade: the writer took a read hold, then releases the write hold.
        rw.writeHold("owner-a", 1001, LEASE_MS);
        long end = lua.farEnd();
        rw.readHold("owner-a", 1002, end);

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(1L, ""), release("owner-a", "1001")));

        assertEquals(0L, lua.redis.exists(rw.write));
        assertEquals(List.of(ScoredValue.just(end, "owner-a")), lua.redis.zrangeWithScores(rw.readers, 0, -1));
        assertEquals(Map.of("owner-a", "1002"), lua.redis.hgetall(rw.rtokens));
    }

    @Test
    void release_readTokenInsteadOfWriteToken_isRefused() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);
        rw.readHold("owner-a", 1002, lua.farEnd());

        assertEquals(List.of(0L, ""), release("owner-a", "1002"));

        assertHoldKept("owner-a", "1001");
    }
}
