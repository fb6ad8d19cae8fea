package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-give-back.lua} (a waiter gives back a hand-over it may have been made without
 * learning it) against a real server, on holds and lines written by hand: it ends the owner's hold
 * whatever its token and serves the line as {@code lock-release.lua} does.
 */
@Tag("redis")
class LockGiveBackLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private FairFixture keys;
    private String lock;
    private String wakeups;

    @BeforeEach
    void names() {
        keys = new FairFixture(lua, base);
        lock = keys.lock;
        wakeups = keys.wakeups;
    }

    private void hold(Map<String, String> fields) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, LEASE_MS);
    }

    private Long giveBack(String owner) throws Exception {
        return lua.run(Script.LOCK_GIVE_BACK, keys.keys(), owner);
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

    /** A waiter in line whose client listens is handed the lock, told on its client's channel alone. */
    @Test
    void giveBack_waiterInLineListening_handsItTheLock() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1"));
        long end = lua.farEnd();
        keys.queued(end, "client-gone:3", "client-b:7", "client-c:9");

        // client-gone:3's client does not listen: dropped, and the next one served.
        keys.assertHandsOver(() -> assertEquals(1L, giveBack("client-a:1")), "client-b:7", end);

        assertEquals(List.of("client-c:9"), keys.queueOrder());
    }

    /** Nobody in line listens: the lock is free, the line emptied, the mark's waiters told. */
    @Test
    void giveBack_nobodyInLineListening_publishesReleasedForTheMark() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1"));
        keys.queued(lua.farEnd(), "client-b:7");

        lua.assertPublishes(wakeups, () -> assertEquals(1L, giveBack("client-a:1")), "released");

        assertEquals(0L, lua.redis.exists(lock, keys.queue, keys.places, keys.token));
    }

    /** Another owner's hold is left alone, so a give-back sent late or twice ends nothing else. */
    @Test
    void giveBack_anotherOwnerHolds_returnsZeroAndChangesNothing() throws Exception {
        hold(Map.of("owner-b", "1002", ":waiting", "1"));

        keys.queued(lua.farEnd(), "client-c:9");

        keys.assertServesNobody(() -> assertEquals(0L, giveBack("owner-a")), "client-c:9");

        assertEquals(Map.of("owner-b", "1002", ":waiting", "1"), lua.redis.hgetall(lock));
        assertEquals(List.of("client-c:9"), keys.queueOrder());
        assertTrue(lua.redis.pttl(lock) > 0, "lease kept");
    }

    /** Nothing held: nothing created. */
    @Test
    void giveBack_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, giveBack("owner-a"));
        assertEquals(0L, lua.redis.exists(lock));
    }
}
