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
 * hand: the token check, then whom it wakes: the first live waiting writer by name, on its client's
 * channel alone, else (when a reader waits) every reader with {@code 'released'} on the shared
 * channel, else nobody.
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
        rw.writeHold("client-a:1", 1001, LEASE_MS);

        rw.assertServesNobody(() -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")), "client-a:1");

        assertEquals(0L, lua.redis.exists(rw.all()), "nothing is left or created");
    }

    @Test
    void release_wrongToken_returnsZeroAndChangesNothing() throws Exception {
        rw.writeHold("client-a:1", 1002, LEASE_MS);
        long end = lua.farEnd();
        rw.queued("client-b:7", 1, end);
        rw.readerWaits();

        rw.assertServesNobody(() -> assertEquals(List.of(0L, ""), release("client-a:1", "1001")), "client-b:7");

        assertHoldKept("client-a:1", "1002");
        assertEquals(List.of("client-b:7"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "client-b:7")), rw.placeEnds());
        assertEquals("1", lua.redis.get(rw.rwait));
    }

    @Test
    void release_wrongOwner_returnsZeroAndChangesNothing() throws Exception {
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        rw.readerWaits();

        rw.assertServesNobody(() -> assertEquals(List.of(0L, ""), release("client-z:1", "1001")), "client-a:1");

        assertHoldKept("client-a:1", "1001");
        assertEquals("1", lua.redis.get(rw.rwait));
    }

    @Test
    void release_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("client-a:1", "1001"));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void release_writersQueued_wakesTheFirstByNameOnItsClientsChannelAndKeepsTheQueue() throws Exception {
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        long end = lua.farEnd();
        rw.queued("client-b:7", 1, end);
        rw.queued("client-c:9", 2, end);
        rw.readerWaits();

        rw.assertWakesWriter(() -> assertEquals(List.of(1L, "client-b:7"), release("client-a:1", "1001")),
                "client-b:7", "client-c:9", "client-a:1");

        assertEquals(0L, lua.redis.exists(rw.write));
        assertEquals(List.of("client-b:7", "client-c:9"), rw.queueOrder(),
                "the woken writer keeps its place until it acquires");
        assertEquals("1", lua.redis.get(rw.rwait), "readers still wait behind the writers");
    }

    @Test
    void release_deadFirstWriter_isPurgedAndTheNextLiveOneIsWoken() throws Exception {
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        rw.queued("client-dead:3", 1, 1);
        rw.queued("client-c:9", 2, lua.farEnd());

        // The dead writer's client listens: had it been woken, its channel would carry its name.
        rw.assertWakesWriter(() -> assertEquals(List.of(1L, "client-c:9"), release("client-a:1", "1001")),
                "client-c:9", "client-dead:3");

        assertEquals(List.of("client-c:9"), rw.queueOrder());
        assertEquals(List.of("client-c:9"), lua.redis.zrange(rw.places, 0, -1));
    }

    /**
     * Writers of three clients wait, every client listening on its own channel and a reader
     * waiting too: one message in all, on the first writer's client's channel; the two other
     * clients and the readers hear nothing, though a second writer of the first client waits
     * further back.
     */
    @Test
    void release_writersOfThreeClientsQueued_tellsTheFirstWritersClientAloneOnce() throws Exception {
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        long end = lua.farEnd();
        rw.queued(end, "client-c:9", "client-b:7", "client-d:4", "client-c:2");
        rw.readerWaits();

        lua.assertPublishes(Map.of(
                rw.wakeups, List.of(),
                rw.channelOf("client-c:9"), List.of("client-c:9"),
                rw.channelOf("client-b:7"), List.of(),
                rw.channelOf("client-d:4"), List.of()),
                () -> assertEquals(List.of(1L, "client-c:9"), release("client-a:1", "1001")));

        assertEquals(List.of("client-c:9", "client-b:7", "client-d:4", "client-c:2"), rw.queueOrder(),
                "every writer keeps its place");
        assertEquals("1", lua.redis.get(rw.rwait), "the readers still wait behind the writers");
    }

    @Test
    void release_readerWaitsNoWriter_deletesRwaitAndWakesEveryReader() throws Exception {
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        rw.readerWaits();

        rw.assertWakesReaders(() -> assertEquals(List.of(1L, "released"), release("client-a:1", "1001")));

        assertEquals(0L, lua.redis.exists(rw.write, rw.rwait));
    }

    @Test
    void release_onlyDeadWritersAndAReaderWaits_purgesThemAndWakesTheReaders() throws Exception {
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        rw.queued("client-dead:3", 1, 1);
        rw.readerWaits();

        rw.assertWakesReaders(() -> assertEquals(List.of(1L, "released"), release("client-a:1", "1001")),
                "client-dead:3");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void release_withOwnReadHold_keepsTheReadHold() throws Exception {
        // A downgrade: the writer took a read hold, then releases the write hold.
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        long end = lua.farEnd();
        rw.readHold("client-a:1", 1002, end);

        rw.assertServesNobody(() -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")), "client-a:1");

        assertEquals(0L, lua.redis.exists(rw.write));
        assertEquals(List.of(ScoredValue.just(end, "client-a:1")), lua.redis.zrangeWithScores(rw.readers, 0, -1));
        assertEquals(Map.of("client-a:1", "1002"), lua.redis.hgetall(rw.rtokens));
    }

    @Test
    void release_readTokenInsteadOfWriteToken_isRefused() throws Exception {
        rw.writeHold("client-a:1", 1001, LEASE_MS);
        rw.readHold("client-a:1", 1002, lua.farEnd());

        assertEquals(List.of(0L, ""), release("client-a:1", "1002"));

        assertHoldKept("client-a:1", "1001");
    }
}
