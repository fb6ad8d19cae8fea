package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-release.lua} (the non-fair lock's release, and a cache's give-back) against a real
 * server, on holds and lines written by hand: who may release; the hand-over to the first waiter
 * in line whose place is live and whose client listens on its own channel, told there alone, one
 * message for the whole line; and {@code released} on the shared channel for a waiting mark only
 * when nobody in line could be served.
 */
@Tag("redis")
class LockReleaseLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private FairFixture keys;

    @BeforeEach
    void names() {
        keys = new FairFixture(lua, base);
    }

    private void hold(Map<String, String> fields) {
        keys.hold(fields, LEASE_MS);
    }

    private List<Object> release(String owner, String token) throws Exception {
        return lua.run(Script.LOCK_RELEASE, keys.keys(), owner, token);
    }

    /** Asserts a reply {@code {1, served, token}}, the token being the one the lock now records for it. */
    private void assertServed(String served, List<Object> reply) {
        assertEquals(3, reply.size(), () -> "the reply carries the waiter and the token handed over: " + reply);
        assertEquals(List.of(1L, served), reply.subList(0, 2));
        assertEquals(lua.redis.hget(keys.lock, served), Long.toString((Long) reply.get(2)),
                "the token handed over is the one the lock records");
    }

    /* --------------- who may release --------------- */

    @Test
    void release_rightOwnerAndToken_deletesTheHoldAndPublishesNothingWhenNobodyWaits() throws Exception {
        hold(Map.of("client-a:1", "1001"));

        lua.assertPublishes(keys.wakeups, () -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")));

        assertEquals(0L, lua.redis.exists(keys.lock, keys.token, keys.queue, keys.places),
                "no token is issued and no line created when nobody waits");
    }

    @Test
    void release_wrongTokenOrOwner_returnsZeroAndChangesNothing() throws Exception {
        hold(Map.of("client-a:1", "1002", ":waiting", "1"));
        long end = lua.farEnd();
        keys.queued(end, "client-b:7");

        keys.assertServesNobody(() -> {
            assertEquals(List.of(0L, ""), release("client-a:1", "1001"), "an older hold's token");
            assertEquals(List.of(0L, ""), release("client-z:1", "1002"), "another owner");
        }, "client-b:7");

        assertEquals(Map.of("client-a:1", "1002", ":waiting", "1"), lua.redis.hgetall(keys.lock));
        assertEquals(List.of(ScoredValue.just(end, "client-b:7")), keys.placeEnds(), "the line is not touched");
    }

    @Test
    void release_notHeld_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, ""), release("client-a:1", "1001"));
        assertEquals(0L, lua.redis.exists(keys.lock, keys.token, keys.queue, keys.places));
    }

    /* --------------- waiters that only marked the lock --------------- */

    @Test
    void release_withAWaiterRecordedAndNobodyInLine_publishesReleasedOnce() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1"));

        lua.assertPublishes(keys.wakeups, () -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")), "released");

        assertEquals(0L, lua.redis.exists(keys.lock));
    }

    /** A cache is given back by this script, named by its owner and base (docs/design/lock-caching.md). */
    @Test
    void release_aCacheAskedBack_givesItBackAndWakesTheAsker() throws Exception {
        hold(Map.of("client-a:cache", "1001", ":waiting", "1"));

        lua.assertPublishes(keys.wakeups, () -> {
            assertEquals(List.of(0L, ""), release("client-a:cache", "1000"), "an older cache's base");
            assertEquals(List.of(1L, ""), release("client-a:cache", "1001"));
        }, "released");

        assertEquals(0L, lua.redis.exists(keys.lock));
    }

    /** The asker is in line and listens: it is handed the lock, and the shared channel is quiet. */
    @Test
    void release_aCacheAskedBackByAWaiterInLine_handsItTheLock() throws Exception {
        hold(Map.of("client-a:cache", "1001", ":waiting", "1"));
        long end = lua.farEnd();
        keys.queued(end, "client-b:7");

        keys.assertHandsOver(() -> assertServed("client-b:7", release("client-a:cache", "1001")), "client-b:7", end);
    }

    /* --------------- the line: one client served, one message --------------- */

    @Test
    void release_firstInLineListening_handsItTheLockAndTellsItOnItsClientsChannelAlone() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1", ":w:client-b", "2:1"));
        long end = lua.farEnd();
        keys.queued(end, "client-b:7", "client-c:9");

        // assertHandedTo: the hash holds client-b:7 alone, the mark and the counts went with the
        // released hold; assertHandsOver: the grant on client-b's channel, nothing on the shared one.
        keys.assertHandsOver(() -> assertServed("client-b:7", release("client-a:1", "1001")), "client-b:7", end);

        assertEquals(List.of("client-c:9"), keys.queueOrder(), "the served waiter leaves the line");
        assertEquals(List.of(ScoredValue.just(end, "client-c:9")), keys.placeEnds());
    }

    /**
     * A waiter whose client does not listen on its channel cannot learn of a grant: it leaves the
     * line untold, and the next one whose client listens is served.
     */
    @Test
    void release_firstInLineNotListening_isDroppedAndTheNextListeningWaiterServed() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1"));
        long end = lua.farEnd();
        keys.queued(end, "client-gone:3", "client-b:7", "client-c:9");

        keys.assertHandsOver(() -> assertServed("client-b:7", release("client-a:1", "1001")), "client-b:7", end);

        assertEquals(List.of("client-c:9"), keys.queueOrder(), "client-gone:3 is dropped, client-b:7 served");
        assertEquals(List.of(ScoredValue.just(end, "client-c:9")), keys.placeEnds());
    }

    @Test
    void release_expiredFirstPlace_isSkippedThoughItsClientListens() throws Exception {
        hold(Map.of("client-a:1", "1001"));
        keys.queued("client-dead:3", 1, 0);   // a place that ended long ago
        long end = lua.farEnd();
        keys.queued("client-b:7", 2, end);

        try (LuaHarness.Subscription dead = lua.subscribe(keys.channelOf("client-dead:3"))) {
            keys.assertHandsOver(() -> assertServed("client-b:7", release("client-a:1", "1001")), "client-b:7", end);
            dead.assertNothingMore(lua.redis);
        }

        assertEquals(0L, lua.redis.exists(keys.queue, keys.places), "the dead place is purged, client-b:7 served");
    }

    /** Nobody in line listens: the lock is simply free, the line emptied, and the mark's waiters told. */
    @Test
    void release_nobodyInLineListening_freesTheLockAndPublishesReleasedForTheMark() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1"));
        keys.lastToken(1001, LONG_LEASE_MS);
        keys.queued(lua.farEnd(), "client-b:7", "client-c:9");

        lua.assertPublishes(keys.wakeups, () -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")), "released");

        assertEquals(0L, lua.redis.exists(keys.lock, keys.queue, keys.places),
                "the lock is free and nobody who could not hear a grant stays in line");
        assertEquals("1001", lua.redis.get(keys.token), "no token is issued");
    }

    @Test
    void release_nobodyInLineListeningWithoutAMark_publishesNothing() throws Exception {
        hold(Map.of("client-a:1", "1001"));
        keys.queued(lua.farEnd(), "client-b:7");

        lua.assertPublishes(keys.wakeups, () -> assertEquals(List.of(1L, ""), release("client-a:1", "1001")));

        assertEquals(0L, lua.redis.exists(keys.lock, keys.queue, keys.places));
    }

    /** The herd is gone: with N clients in line, all listening, a release sends one message in all. */
    @Test
    void release_manyClientsInLineAllListening_sendsExactlyOneMessage() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1"));
        long end = lua.farEnd();
        List<String> waiters = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            waiters.add("client-" + i + ":" + (10 + i));
        }
        keys.queued(end, waiters.toArray(String[]::new));
        Map<String, List<String>> quiet = new LinkedHashMap<>();
        quiet.put(keys.wakeups, List.of());
        for (String waiter : waiters.subList(1, waiters.size())) {
            quiet.put(keys.channelOf(waiter), List.of());
        }
        String first = waiters.get(0);
        long[] handed = new long[1];

        try (LuaHarness.Subscription firstClient = lua.subscribe(keys.channelOf(first))) {
            lua.assertPublishes(quiet, () -> {
                List<Object> reply = release("client-a:1", "1001");
                assertServed(first, reply);
                handed[0] = (Long) reply.get(2);
            });
            assertEquals(FairFixture.granted(first, handed[0]), firstClient.next());
            firstClient.assertNothingMore(lua.redis);
        }

        assertEquals(waiters.subList(1, waiters.size()), keys.queueOrder(), "the others keep their places");
    }
}
