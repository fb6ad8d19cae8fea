package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-give-back.lua} (a waiter gives back a hand-over it may have been made without
 * learning it) against a real server, on holds written by hand.
 */
@Tag("redis")
class LockGiveBackLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private String lock;
    private String wakeups;

    @BeforeEach
    void names() {
        lock = base;
        wakeups = lock + ":wake";
    }

    private void hold(Map<String, String> fields) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, LEASE_MS);
    }

    private Long giveBack(String owner) throws Exception {
        return lua.run(Script.LOCK_GIVE_BACK, new String[] {lock, wakeups}, owner);
    }

    /** The owner's hold, whatever its token, is ended; nobody recorded as waiting, so no message. */
    @Test
    void giveBack_ownerHolds_deletesTheHoldWithoutItsToken() throws Exception {
        hold(Map.of("owner-a", "1001"));

        lua.assertPublishes(wakeups, () -> assertEquals(1L, giveBack("owner-a")));

        assertEquals(0L, lua.redis.exists(lock));
    }

    /** A waiter recorded in the hold hears the lock is free, as after a release. */
    @Test
    void giveBack_withAWaiterRecorded_publishesReleasedOnce() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));

        lua.assertPublishes(wakeups, () -> assertEquals(1L, giveBack("owner-a")), "released");

        assertEquals(0L, lua.redis.exists(lock));
    }

    /** Another owner's hold is left alone, so a give-back sent late or twice ends nothing else. */
    @Test
    void giveBack_anotherOwnerHolds_returnsZeroAndChangesNothing() throws Exception {
        hold(Map.of("owner-b", "1002", ":waiting", "1"));

        lua.assertPublishes(wakeups, () -> assertEquals(0L, giveBack("owner-a")));

        assertEquals(Map.of("owner-b", "1002", ":waiting", "1"), lua.redis.hgetall(lock));
        assertTrue(lua.redis.pttl(lock) > 0, "lease kept");
    }

    /** Nothing held: nothing created. */
    @Test
    void giveBack_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, giveBack("owner-a"));
        assertEquals(0L, lua.redis.exists(lock));
    }
}
