package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code cond-renew-place.lua} (batched, four keys per item) against a real server, on conditions written by hand. */
@Tag("redis")
class CondRenewPlaceLuaTest extends LuaTestBase {

    private List<Object> renew(long placeMs, String[] locks, String... waiters) throws Exception {
        return lua.runBatch(Script.COND_RENEW_PLACE, locks, lock -> new CondFixture(lua, lock).leaveKeys(), placeMs,
                waiters);
    }

    @Test
    void renew_waitingAndSignalled_renewsOnlyTheWaiting() throws Exception {
        CondFixture first = new CondFixture(lua, base + ":1");
        CondFixture second = new CondFixture(lua, base + ":2");
        first.waiting(lua.serverMillis() + 30_000, "w-a");
        second.waiting(lua.serverMillis() + 30_000, "w-x");
        lua.redis.zadd(second.signalled, (double) lua.farEnd(), "w-b");
        long before = lua.serverMillis();
        List<Object> reply = renew(LuaHarness.LONG_LEASE_MS, new String[] {first.lock, second.lock}, "w-a", "w-b");
        long after = lua.serverMillis();
        assertEquals(List.of(1L, 0L), reply);
        lua.assertEndWithin(first.places, "w-a", before + LuaHarness.LONG_LEASE_MS, after + LuaHarness.LONG_LEASE_MS);
    }

    /** A place whose lease ran out is not renewed: its waiter stopped renewing. */
    @Test
    void renew_placeRanOut_isNotRenewed() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.serverMillis() - 1, "w-a");
        assertEquals(List.of(0L), renew(30_000, new String[] {cond.lock}, "w-a"));
    }

    /** A live waiter's renewal passes on a signal that a dead waiter never took up: here to that live waiter. */
    @Test
    void renew_expiredSignalOfADeadWaiter_passesItOn() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "w-live");
        lua.redis.zadd(cond.signalled, (double) (lua.serverMillis() - 1), "w-dead");
        lua.redis.pexpire(cond.signalled, LuaHarness.LONG_LEASE_MS);
        lua.assertPublishes(cond.wake, () -> assertEquals(List.of(0L),
                renew(30_000, new String[] {cond.lock}, "w-live"), "no longer waiting: signalled"),
                "granted:w-live");
        assertEquals(List.of("w-live"), lua.redis.zrange(cond.signalled, 0, -1));
    }
}
