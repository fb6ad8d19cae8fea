package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code fair-lock-leave.lua} against a real server, on holds and fair queues written by hand. */
@Tag("redis")
class FairLockLeaveLuaTest extends LuaTestBase {

    private FairFixture fair;
    /** A place end no test reaches, read from the server's clock. */
    private long placeEnd;

    @BeforeEach
    void names() {
        fair = new FairFixture(lua, base);
        placeEnd = lua.farEnd();
    }

    private void held() {
        fair.hold(Map.of("holder", "1001"), LONG_LEASE_MS);
    }

    private long leave(String owner) throws Exception {
        return lua.<Long>run(Script.FAIR_LOCK_LEAVE, fair.keys(), owner);
    }

    /* --------------- leaving --------------- */

    @Test
    void leave_queuedOwner_removesItFromQueueAndPlacesAndReturnsOne() throws Exception {
        held();
        fair.queued(placeEnd, "owner-a", "owner-b", "owner-c");

        assertEquals(1L, leave("owner-b"));

        assertEquals(List.of("owner-a", "owner-c"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-a"), ScoredValue.just(placeEnd, "owner-c")),
                fair.placeEnds());
        assertEquals(Map.of("holder", "1001"), lua.redis.hgetall(fair.lock), "the hold is not touched");
    }

    @Test
    void leave_onlyWaiter_theQueueVanishes() throws Exception {
        held();
        fair.queued(placeEnd, "owner-a");

        assertEquals(1L, leave("owner-a"));

        assertEquals(0L, lua.redis.exists(fair.queue, fair.places));
    }

    @Test
    void leave_ownerNotQueued_returnsZeroAndChangesNothing() throws Exception {
        fair.queued(placeEnd, "owner-a");

        lua.assertPublishes(fair.wakeups, () -> assertEquals(0L, leave("owner-x")));

        assertEquals(List.of("owner-a"), fair.queueOrder());
        assertEquals(List.of(ScoredValue.just(placeEnd, "owner-a")), fair.placeEnds());
    }

    @Test
    void leave_emptyQueue_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, leave("owner-a"));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.queue, fair.places));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void leave_headOfQueueOnFreeLock_wakesTheNextHeadByName() throws Exception {
        fair.queued(placeEnd, "owner-a", "owner-b", "owner-c");

        lua.assertPublishes(fair.wakeups, () -> assertEquals(1L, leave("owner-a")), "owner-b");

        assertEquals(0L, lua.redis.exists(fair.lock), "leaving acquires nothing");
        assertEquals(List.of("owner-b", "owner-c"), fair.queueOrder());
    }

    @Test
    void leave_headOfQueueOnHeldLock_publishesNothing() throws Exception {
        held();
        fair.queued(placeEnd, "owner-a", "owner-b");

        lua.assertPublishes(fair.wakeups, () -> assertEquals(1L, leave("owner-a")));
    }

    @Test
    void leave_notHeadOnFreeLock_publishesNothing() throws Exception {
        fair.queued(placeEnd, "owner-a", "owner-b", "owner-c");

        lua.assertPublishes(fair.wakeups, () -> assertEquals(1L, leave("owner-b")));

        assertEquals(List.of("owner-a", "owner-c"), fair.queueOrder());
    }

    @Test
    void leave_lastWaiterOnFreeLock_publishesNothing() throws Exception {
        fair.queued(placeEnd, "owner-a");

        lua.assertPublishes(fair.wakeups, () -> assertEquals(1L, leave("owner-a")));

        assertEquals(0L, lua.redis.exists(fair.queue, fair.places));
    }
}
