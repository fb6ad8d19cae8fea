package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What {@code fair-lock-release.lua} and {@code lock-force-unlock.lua} have in common, run against
 * each by {@link FairLockReleaseLuaTest} and {@link LockForceUnlockLuaTest}: once the hold is
 * deleted, no message when nobody waits, and the purge of places that ran out. What each does for
 * a waiting mark ({@code ':waiting'}: the release says nothing, the forced unlock publishes
 * {@code released}) and for the first live waiter in line (the release hands it the lock, the
 * forced unlock wakes it by name) differs and is tested in each class. The holds and queues are
 * written by hand.
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
     * of an unlock that served no fair waiter, as far as the script's reply tells.
     */
    abstract void assertUnlocks() throws Exception;

    /* --------------- nobody waits, expired places --------------- */

    @Test
    void unlock_withoutWaiter_publishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));

        lua.assertPublishes(fair.wakeups, this::assertUnlocks);
    }

    @Test
    void unlock_onlyExpiredWaiters_purgesThemAndPublishesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        fair.queued("fair-dead", 1, 0);

        // Its client listens: had the script told it, its channel would show it.
        fair.assertServesNobody(this::assertUnlocks, "fair-dead");

        assertEquals(0L, lua.redis.exists(fair.lock, fair.queue, fair.places), "the purged keys are empty, so gone");
    }
}
