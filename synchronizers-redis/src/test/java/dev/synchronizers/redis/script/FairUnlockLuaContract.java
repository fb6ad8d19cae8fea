package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What {@code fair-lock-release.lua} and {@code lock-force-unlock.lua} have in common, run against
 * each by {@link FairLockReleaseLuaTest} and {@link LockForceUnlockLuaTest}: once the hold is
 * deleted, the wake-ups: {@code released} for a recorded non-fair waiter, the first live fair
 * waiter by name (its place kept until it acquires), and the purge of places that ran out. The
 * holds and queues are written by hand.
 */
abstract class FairUnlockLuaContract extends LuaTestBase {

    /** The lease of a hold written by hand. */
    static final long LEASE_MS = 60_000;

    FairFixture fair;

    @BeforeEach
    void names() {
        fair = new FairFixture(lua, base);
    }

    void hold(Map<String, String> fields) {
        fair.hold(fields, LEASE_MS);
    }

    /**
     * Runs the script on the hold of {@code owner-a} with token {@code 1001} and asserts the reply
     * of an unlock that woke the fair waiter {@code woken} ({@code ""} for none), as far as the
     * script's reply tells.
     */
    abstract void assertUnlocks(String woken) throws Exception;

    /* --------------- wake-ups --------------- */

    @Test
    void unlock_withWaiter_publishesReleased() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));

        lua.assertPublishes(fair.wakeups, () -> assertUnlocks(""), "released");

        assertEquals(0L, lua.redis.exists(fair.lock));
    }

    @Test
    void unlock_withoutWaiter_publishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));

        lua.assertPublishes(fair.wakeups, () -> assertUnlocks(""));
    }

    @Test
    void unlock_withQueuedFairWaiter_publishesItsOwner() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = lua.farEnd();
        fair.queued(end, "fair-b", "fair-c");

        // The first waiter is woken by name.
        lua.assertPublishes(fair.wakeups, () -> assertUnlocks("fair-b"), "fair-b");

        assertEquals(0L, lua.redis.exists(fair.lock));
        assertEquals(List.of("fair-b", "fair-c"), fair.queueOrder(),
                "the woken waiter keeps its place until it acquires");
        assertEquals(List.of(ScoredValue.just(end, "fair-b"), ScoredValue.just(end, "fair-c")), fair.placeEnds());
    }

    @Test
    void unlock_expiredHeadOfQueue_isPurgedAndTheNextLiveWaiterIsWoken() throws Exception {
        hold(Map.of("owner-a", "1001"));
        fair.queued("fair-dead", 1, 0);   // a place that ended long ago
        fair.queued("fair-b", 2, lua.farEnd());

        // Had the dead waiter been published, its message would come first.
        lua.assertPublishes(fair.wakeups, () -> assertUnlocks("fair-b"), "fair-b");

        assertEquals(List.of("fair-b"), fair.queueOrder());
        assertEquals(List.of("fair-b"), lua.redis.zrange(fair.places, 0, -1));
    }

    @Test
    void unlock_onlyExpiredWaiters_purgesThemAndPublishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        fair.queued("fair-dead", 1, 0);

        lua.assertPublishes(fair.wakeups, () -> assertUnlocks(""));

        assertEquals(0L, lua.redis.exists(fair.lock, fair.queue, fair.places), "the purged keys are empty, so gone");
    }

    @Test
    void unlock_withWaitingMarkAndQueuedFairWaiter_publishesBoth() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        fair.queued("fair-b", 1, lua.farEnd());

        lua.assertPublishes(fair.wakeups, () -> assertUnlocks("fair-b"), "released", "fair-b");
    }
}
