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
 * waiting writer by name when the last reader leaves (readers whose lease ran out do not count).
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
        rw.readHold("owner-a", 1001, lua.farEnd());

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(1L, ""), release("owner-a", "1001")));

        assertEquals(0L, lua.redis.exists(rw.all()), "the emptied keys are gone, nothing is created");
    }

    @Test
    void release_leaseRanOut_returnsZeroWakesNobodyAndDropsTheStaleHold() throws Exception {
        rw.readHold("owner-a", 1001, 1);
        rw.queued("writer-1", 1, lua.farEnd());

        lua.assertPublishes(rw.wakeups, () -> {
            assertEquals(List.of(0L, ""), release("owner-a", "1001"), "a read hold whose lease ran out is lost");
        });

        assertEquals(List.of(), rw.readerNames(), "the stale hold is gone");
    }

    @Test
    void release_lastReaderWhileTheWriterStillHoldsAfterDowngrade_wakesNobody() throws Exception {
        rw.writeHold("owner-a", 1000, 30_000);
        rw.readHold("owner-a", 1001, lua.farEnd());
        rw.queued("writer-1", 1, lua.farEnd());

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(1L, ""), release("owner-a", "1001")));
    }

    @Test
    void release_wrongToken_returnsZeroAndChangesNothing() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1002, end);
        rw.queued("writer-1", 1, end);

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(0L, ""), release("owner-a", "1001")));

        assertEquals(List.of(ScoredValue.just(end, "owner-a")), lua.redis.zrangeWithScores(rw.readers, 0, -1));
        assertEquals(Map.of("owner-a", "1002"), lua.redis.hgetall(rw.rtokens));
        assertEquals(List.of("writer-1"), rw.queueOrder());
    }

    @Test
    void release_wrongOwner_returnsZeroAndChangesNothing() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1001, end);

        assertEquals(List.of(0L, ""), release("owner-b", "1001"));

        assertEquals(List.of(ScoredValue.just(end, "owner-a")), lua.redis.zrangeWithScores(rw.readers, 0, -1));
        assertEquals(Map.of("owner-a", "1001"), lua.redis.hgetall(rw.rtokens));
    }

    @Test
    void release_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void release_otherLiveReadersRemain_publishesNothingEvenWithWritersQueued() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1001, end);
        rw.readHold("reader-b", 1002, end);
        rw.queued("writer-1", 1, end);

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(1L, ""), release("owner-a", "1001")));

        assertEquals(List.of("reader-b"), rw.readerNames());
        assertEquals(Map.of("reader-b", "1002"), lua.redis.hgetall(rw.rtokens));
        assertEquals(List.of("writer-1"), rw.queueOrder());
    }

    @Test
    void release_lastReaderOut_wakesTheFirstWriterByName() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1001, end);
        rw.queued("writer-1", 1, end);
        rw.queued("writer-2", 2, end);

        lua.assertPublishes(rw.wakeups,
                () -> assertEquals(List.of(1L, "writer-1"), release("owner-a", "1001")), "writer-1");

        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens));
        assertEquals(List.of("writer-1", "writer-2"), rw.queueOrder(), "the woken writer keeps its place");
    }

    @Test
    void release_otherReadersAllRanOut_arePurgedAndTheWriterIsWoken() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1001, end);
        rw.readHold("reader-dead", 1000, 1);
        rw.queued("writer-1", 1, end);

        lua.assertPublishes(rw.wakeups,
                () -> assertEquals(List.of(1L, "writer-1"), release("owner-a", "1001")), "writer-1");

        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens), "the dead reader is gone from both");
    }

    @Test
    void release_deadFirstWriter_isPurgedAndTheNextLiveOneIsWoken() throws Exception {
        long end = lua.farEnd();
        rw.readHold("owner-a", 1001, end);
        rw.queued("writer-dead", 1, 1);
        rw.queued("writer-2", 2, end);

        lua.assertPublishes(rw.wakeups,
                () -> assertEquals(List.of(1L, "writer-2"), release("owner-a", "1001")), "writer-2");

        assertEquals(List.of("writer-2"), rw.queueOrder());
        assertEquals(List.of("writer-2"), lua.redis.zrange(rw.places, 0, -1));
    }

    @Test
    void release_lastReaderOutOnlyDeadWriters_purgesThemAndPublishesNothing() throws Exception {
        rw.readHold("owner-a", 1001, lua.farEnd());
        rw.queued("writer-dead", 1, 1);

        lua.assertPublishes(rw.wakeups, () -> assertEquals(List.of(1L, ""), release("owner-a", "1001")));

        assertEquals(0L, lua.redis.exists(rw.all()));
    }
}
