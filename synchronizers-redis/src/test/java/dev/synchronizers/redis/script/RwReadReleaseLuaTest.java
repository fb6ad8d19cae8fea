package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-read-release.lua} against a real server, on read holds and writer queues written by
 * hand: the token check, and the wake-up: nobody while other live readers remain, the first live
 * waiting writer by name, on its client's channel alone, when the last reader leaves (readers whose
 * lease ran out do not count).
 */
@Tag("redis")
class RwReadReleaseLuaTest extends LuaTestBase {

    private RwFixture rw;

    @BeforeEach
    void names() {
        rw = new RwFixture(lua, base);
    }

    private List<Object> release(String owner, String token) throws Exception {
        return lua.run(Script.RW_READ_RELEASE,
                new String[] {rw.write, rw.readers, rw.rtokens, rw.queue, rw.places, rw.wakeups},
                owner, token);
    }

    /* --------------- who may release --------------- */

    @Test
    void release_rightOwnerAndToken_removesTheReadHoldAndPublishesNothing() throws Exception {
        rw.readHold("client-a:1", 1001, lua.farEnd());

        rw.assertServesNobody(() -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")), "client-a:1");

        assertEquals(0L, lua.redis.exists(rw.all()), "the emptied keys are gone, nothing is created");
    }

    @Test
    void release_leaseRanOut_returnsZeroWakesNobodyAndDropsTheStaleHold() throws Exception {
        rw.readHold("client-a:1", 1001, 1);
        rw.queued("client-b:7", 1, lua.farEnd());

        rw.assertServesNobody(() -> {
            assertEquals(List.of(0L, ""), release("client-a:1", "1001"), "a read hold whose lease ran out is lost");
        }, "client-b:7");

        assertEquals(List.of(), rw.readerNames(), "the stale hold is gone");
    }

    @Test
    void release_lastReaderWhileTheWriterStillHoldsAfterDowngrade_wakesNobody() throws Exception {
        rw.writeHold("client-a:1", 1000, 30_000);
        rw.readHold("client-a:1", 1001, lua.farEnd());
        rw.queued("client-b:7", 1, lua.farEnd());

        rw.assertServesNobody(() -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")), "client-b:7");
    }

    @Test
    void release_wrongToken_returnsZeroAndChangesNothing() throws Exception {
        long end = lua.farEnd();
        rw.readHold("client-a:1", 1002, end);
        rw.queued("client-b:7", 1, end);

        rw.assertServesNobody(() -> assertEquals(List.of(0L, ""), release("client-a:1", "1001")), "client-b:7");

        assertEquals(List.of(ScoredValue.just(end, "client-a:1")), lua.redis.zrangeWithScores(rw.readers, 0, -1));
        assertEquals(Map.of("client-a:1", "1002"), lua.redis.hgetall(rw.rtokens));
        assertEquals(List.of("client-b:7"), rw.queueOrder());
    }

    @Test
    void release_wrongOwner_returnsZeroAndChangesNothing() throws Exception {
        long end = lua.farEnd();
        rw.readHold("client-a:1", 1001, end);

        assertEquals(List.of(0L, ""), release("client-z:1", "1001"));

        assertEquals(List.of(ScoredValue.just(end, "client-a:1")), lua.redis.zrangeWithScores(rw.readers, 0, -1));
        assertEquals(Map.of("client-a:1", "1001"), lua.redis.hgetall(rw.rtokens));
    }

    @Test
    void release_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("client-a:1", "1001"));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void release_otherLiveReadersRemain_publishesNothingEvenWithWritersQueued() throws Exception {
        long end = lua.farEnd();
        rw.readHold("client-a:1", 1001, end);
        rw.readHold("client-r:2", 1002, end);
        rw.queued("client-b:7", 1, end);

        rw.assertServesNobody(() -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")), "client-b:7");

        assertEquals(List.of("client-r:2"), rw.readerNames());
        assertEquals(Map.of("client-r:2", "1002"), lua.redis.hgetall(rw.rtokens));
        assertEquals(List.of("client-b:7"), rw.queueOrder());
    }

    @Test
    void release_lastReaderOut_wakesTheFirstWriterByNameOnItsClientsChannel() throws Exception {
        long end = lua.farEnd();
        rw.readHold("client-a:1", 1001, end);
        rw.queued("client-b:7", 1, end);
        rw.queued("client-c:9", 2, end);

        rw.assertWakesWriter(() -> assertEquals(List.of(1L, "client-b:7"), release("client-a:1", "1001")),
                "client-b:7", "client-c:9", "client-a:1");

        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens));
        assertEquals(List.of("client-b:7", "client-c:9"), rw.queueOrder(), "the woken writer keeps its place");
    }

    @Test
    void release_otherReadersAllRanOut_arePurgedAndTheWriterIsWoken() throws Exception {
        long end = lua.farEnd();
        rw.readHold("client-a:1", 1001, end);
        rw.readHold("client-rdead:4", 1000, 1);
        rw.queued("client-b:7", 1, end);

        rw.assertWakesWriter(() -> assertEquals(List.of(1L, "client-b:7"), release("client-a:1", "1001")),
                "client-b:7", "client-rdead:4");

        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens), "the dead reader is gone from both");
    }

    @Test
    void release_deadFirstWriter_isPurgedAndTheNextLiveOneIsWoken() throws Exception {
        long end = lua.farEnd();
        rw.readHold("client-a:1", 1001, end);
        rw.queued("client-dead:3", 1, 1);
        rw.queued("client-c:9", 2, end);

        rw.assertWakesWriter(() -> assertEquals(List.of(1L, "client-c:9"), release("client-a:1", "1001")),
                "client-c:9", "client-dead:3");

        assertEquals(List.of("client-c:9"), rw.queueOrder());
        assertEquals(List.of("client-c:9"), lua.redis.zrange(rw.places, 0, -1));
    }

    @Test
    void release_lastReaderOutOnlyDeadWriters_purgesThemAndPublishesNothing() throws Exception {
        rw.readHold("client-a:1", 1001, lua.farEnd());
        rw.queued("client-dead:3", 1, 1);

        rw.assertServesNobody(() -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")), "client-dead:3");

        assertEquals(0L, lua.redis.exists(rw.all()));
    }
}
