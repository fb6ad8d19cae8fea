package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code cond-renew-place.lua} (batched, four keys per item) against a real server, on conditions
 * written by hand: a signal passed on is told {@code 'granted:<waiter>'} on the next waiter's
 * client's channel alone.
 */
@Tag("redis")
class CondRenewPlaceLuaTest extends LuaTestBase {

    private List<Object> renew(long placeMs, String[] locks, String... waiters) throws Exception {
        return lua.runBatch(Script.COND_RENEW_PLACE, locks, lock -> new CondFixture(lua, lock).leaveKeys(), placeMs,
                waiters);
    }

    /**
     * A waiting waiter's place is renewed (1); a signalled one, which takes its signal up only once
     * it has the lock again, has its signal renewed (2), so that the signal stays its own however
     * long the lock is kept after it.
     */
    @Test
    void renew_waitingAndSignalled_renewsThePlaceAndTheSignal() throws Exception {
        CondFixture first = new CondFixture(lua, base + ":1");
        CondFixture second = new CondFixture(lua, base + ":2");
        first.waiting(lua.serverMillis() + 30_000, "client-a:1:1");
        second.waiting(lua.serverMillis() + 30_000, "client-x:2:1");
        lua.redis.zadd(second.signalled, (double) (lua.serverMillis() + 1_000), "client-b:7:1");
        lua.redis.pexpire(second.signalled, 2_000);
        long before = lua.serverMillis();
        List<Object> reply = renew(LuaHarness.LONG_LEASE_MS, new String[] {first.lock, second.lock},
                "client-a:1:1", "client-b:7:1");
        long after = lua.serverMillis();
        assertEquals(List.of(1L, 2L), reply);
        lua.assertEndWithin(first.places, "client-a:1:1", before + LuaHarness.LONG_LEASE_MS,
                after + LuaHarness.LONG_LEASE_MS);
        lua.assertEndWithin(second.signalled, "client-b:7:1", before + LuaHarness.LONG_LEASE_MS,
                after + LuaHarness.LONG_LEASE_MS);
        lua.assertTtlSetSince(second.signalled, 2 * LuaHarness.LONG_LEASE_MS, before);
        assertEquals(List.of("client-x:2:1"), lua.redis.zrange(second.queue, 0, -1), "the other waiter still waits");
    }

    /** A signal whose lease ran out is not renewed: its waiter stopped renewing it, and it passes on. */
    @Test
    void renew_ownSignalRanOut_isPassedOnNotRenewed() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "client-n:3:1");
        lua.redis.zadd(cond.signalled, (double) (lua.serverMillis() - 1), "client-l:4:1");
        lua.redis.pexpire(cond.signalled, LuaHarness.LONG_LEASE_MS);
        cond.assertSignals(() -> assertEquals(List.of(0L),
                renew(30_000, new String[] {cond.lock}, "client-l:4:1")), List.of("client-n:3:1"), "client-l:4:1");
        assertEquals(List.of("client-n:3:1"), lua.redis.zrange(cond.signalled, 0, -1));
    }

    /** A place whose lease ran out is not renewed: its waiter stopped renewing. */
    @Test
    void renew_placeRanOut_isNotRenewed() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.serverMillis() - 1, "client-a:1:1");
        assertEquals(List.of(0L), renew(30_000, new String[] {cond.lock}, "client-a:1:1"));
    }

    /** A live waiter's renewal passes on a signal that a dead waiter never took up: here to that live waiter. */
    @Test
    void renew_expiredSignalOfADeadWaiter_passesItOn() throws Exception {
        CondFixture cond = new CondFixture(lua, base);
        cond.waiting(lua.farEnd(), "client-v:5:1");
        lua.redis.zadd(cond.signalled, (double) (lua.serverMillis() - 1), "client-d:6:1");
        lua.redis.pexpire(cond.signalled, LuaHarness.LONG_LEASE_MS);
        cond.assertSignals(() -> assertEquals(List.of(2L),
                renew(30_000, new String[] {cond.lock}, "client-v:5:1"), "signalled now, its signal renewed"),
                List.of("client-v:5:1"), "client-d:6:1");
        assertEquals(List.of("client-v:5:1"), lua.redis.zrange(cond.signalled, 0, -1));
    }
}
