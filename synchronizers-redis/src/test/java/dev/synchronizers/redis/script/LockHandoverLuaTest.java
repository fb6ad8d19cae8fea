package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-handover.lua} (the non-fair lock's hand-over from the releasing thread to another
 * thread of its client) against a real server, on holds and lines written by hand: who may hand
 * over, the new hold (its token by the usual rule, its own lease, the waiting mark kept), whether
 * it replies that another client waits (a place in the line, or the mark), the client's count of
 * waiters it records for snapshots, and that nothing is published. The keys are named as
 * {@code LockKeys} names them, which {@link FairFixture} does for every lock (the hold, the last
 * token, the line, the wake-up channel).
 */
@Tag("redis")
class LockHandoverLuaTest extends LuaTestBase {

    /** The lease of a hold written by hand. */
    private static final long LEASE_MS = 60_000;

    /** The lease of the hold handed over: longer than {@link #LEASE_MS}, so a lease not set, or set on a refusal, would show. */
    private static final long HANDED_LEASE_MS = 90_000;

    /** How far ahead of the server's clock a token written by hand is (about 17 minutes). */
    private static final long AHEAD_MICROS = 1_000_000_000L;

    private FairFixture keys;

    @BeforeEach
    void names() {
        keys = new FairFixture(lua, base);
    }

    private void hold(Map<String, String> fields) {
        keys.hold(fields, LEASE_MS);
    }

    private List<Object> handover(String owner, String token, String next) throws Exception {
        return handover(owner, token, next, 0);
    }

    /** Hands over, telling the script that {@code waiters} threads of the client still wait once next has it. */
    private List<Object> handover(String owner, String token, String next, int waiters) throws Exception {
        return lua.run(Script.LOCK_HANDOVER, keys.handoverKeys(),
                owner, token, next, Long.toString(HANDED_LEASE_MS), Integer.toString(waiters));
    }

    /**
     * Hands {@code owner-a}'s hold {@code token} over to {@code owner-b} while subscribed to the
     * wake-up channel; asserts the reply {@code {1, token, waiting}}, that nothing was published,
     * and the new hold ({@link #assertHandedTo}), with the waiting mark if the reply says another
     * client waits. Returns the new token.
     */
    private long handsOver(String token, long waiting) throws Exception {
        return handsOver(token, waiting, waiting == 1);
    }

    /** As {@link #handsOver(String, long)}, the new hold having the waiting mark if {@code marked}. */
    private long handsOver(String token, long waiting, boolean marked) throws Exception {
        long[] handed = new long[1];
        long since = lua.serverMicros();
        lua.assertPublishes(keys.wakeups, () -> {
            List<Object> reply = handover("owner-a", token, "owner-b");
            assertEquals(3, reply.size(), () -> "reply " + reply);
            assertEquals(1L, reply.get(0), () -> "reply " + reply);
            assertEquals(waiting, reply.get(2), () -> "the waiting flag, reply " + reply);
            handed[0] = (Long) reply.get(1);
        });
        assertHandedTo("owner-b", handed[0], since, marked);
        return handed[0];
    }

    /**
     * Asserts that {@code next} holds the lock with {@code handed}, given by a script run at a server
     * time no earlier than {@code sinceMicros}: the hash holds it alone, with the waiting mark if
     * {@code marked}; the lock is leased {@link #HANDED_LEASE_MS}; the token key records the token
     * and lives one second past it, as an acquire leaves it.
     */
    private void assertHandedTo(String next, long handed, long sinceMicros, boolean marked) {
        Map<String, String> expected = marked
                ? Map.of(next, Long.toString(handed), ":waiting", "1")
                : Map.of(next, Long.toString(handed));
        assertEquals(expected, lua.redis.hgetall(keys.lock),
                "the released owner is gone, the next one holds the token replied, the mark is as it was");
        assertTrue(handed >= sinceMicros, () -> "token " + handed + " below the server time " + sinceMicros);
        assertEquals(Long.toString(handed), lua.redis.get(keys.token), "the token key records the token handed over");

        // Each bound from the server's clock, as FairFixture.assertHandedTo takes them: the script
        // ran between sinceMicros and the reading after the PTTL.
        long tokenPttl = lua.redis.pttl(keys.token);
        long afterMicros = lua.serverMicros();
        long elapsed = afterMicros / 1_000 - sinceMicros / 1_000;
        long tokenTtlMax = Math.floorDiv(handed - sinceMicros, 1_000) + 1_000;
        long tokenTtlMin = Math.floorDiv(handed - afterMicros, 1_000) + 1_000 - elapsed;
        assertTrue(tokenPttl <= tokenTtlMax && tokenPttl >= tokenTtlMin,
                () -> "token key PTTL " + tokenPttl + ", expected within [" + tokenTtlMin + ", " + tokenTtlMax + "]");
        lua.assertTtlSetSince(keys.lock, HANDED_LEASE_MS, sinceMicros / 1_000);
    }

    /** Asserts that the hand-over is refused with {@code {0, 0, 0}} and publishes nothing. */
    private void assertRefused(String owner, String token, String next) throws Exception {
        lua.assertPublishes(keys.wakeups,
                () -> assertEquals(List.of(0L, 0L, 0L), handover(owner, token, next), "refused"));
    }

    /** Asserts that the hold is as written by hand: these fields, its lease neither reset nor removed. */
    private void assertKept(Map<String, String> fields) {
        assertEquals(fields, lua.redis.hgetall(keys.lock));
        lua.assertTtlAtMost(keys.lock, LEASE_MS);
    }

    /** Records a last token {@link #AHEAD_MICROS} ahead of the server's clock, its key living as an acquire sets it. */
    private long lastTokenAheadOfClock() {
        long last = lua.serverMicros() + AHEAD_MICROS;
        keys.lastToken(last, AHEAD_MICROS / 1_000 + 1_000);
        return last;
    }

    /* --------------- the hand-over --------------- */

    @Test
    void handover_rightOwnerAndToken_theNextOwnerHoldsANewTokenWithItsOwnLease() throws Exception {
        hold(Map.of("owner-a", "1001"));

        // No waiting mark: the reply's waiting flag is 0 and no mark appears.
        handsOver("1001", 0);

        assertEquals(0L, lua.redis.exists(keys.queue, keys.places), "no fair keys are created");
    }

    @Test
    void handover_withWaitingMark_keepsTheMarkAndRepliesWaiting() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));

        // assertHandedTo checks that the mark is still there, beside the new owner alone.
        handsOver("1001", 1);
    }

    /** Another client's waiter in the line counts as a waiter without any mark. */
    @Test
    void handover_anotherClientInLineWithoutMark_repliesWaiting() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long end = lua.farEnd();
        keys.queued(end, "client-z:4");

        handsOver("1001", 1, false);

        assertEquals(List.of(ScoredValue.just(end, "client-z:4")), keys.placeEnds(), "the line is not touched");
    }

    /**
     * The thread handed the lock is often its client's first waiter, the one with the client's
     * place in line: that place is its own client's, not another client waiting (the header:
     * "waiting is 1 if another client waits").
     */
    @Test
    void handover_onlyTheNextOwnersOwnPlaceInLine_repliesNotWaiting() throws Exception {
        hold(Map.of("client-a:1", "1001"));
        keys.queued(lua.farEnd(), "client-a:2");

        List<Object> reply = handover("client-a:1", "1001", "client-a:2", 0);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(0L, reply.get(2), () -> "no other client waits, reply " + reply);
    }

    /**
     * The owner handed the lock holds it, so it waits no more: its release must not hand the lock
     * back to it from a place it had while it waited (lock-acquire-waiting.lua takes an owner that
     * takes the lock out of line in the same way).
     */
    @Test
    void handover_nextOwnerInLine_itsReleaseDoesNotHandTheLockBackToIt() throws Exception {
        hold(Map.of("client-a:1", "1001"));
        keys.queued(lua.farEnd(), "client-a:2");
        List<Object> handed = handover("client-a:1", "1001", "client-a:2", 0);
        assertEquals(1L, handed.get(0), () -> "reply " + handed);

        try (LuaHarness.Subscription client = lua.subscribe(keys.channelOf("client-a:2"))) {
            List<Object> released = lua.run(Script.LOCK_RELEASE, keys.keys(), "client-a:2", String.valueOf(handed.get(1)));
            assertEquals(List.of(1L, ""), released, "nobody waits: the lock is free");
            client.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(keys.lock), "the lock is free, not held by the owner that released it");
    }

    @Test
    void handover_emptyLineWithoutMark_repliesNotWaiting() throws Exception {
        hold(Map.of("owner-a", "1001"));

        handsOver("1001", 0, false);
    }

    @Test
    void handover_newToken_isAboveTheReleasedOneAndTheServerTime() throws Exception {
        // The hold released had the last token issued, at the server's time.
        long released = lua.serverMicros();
        keys.lastToken(released, 1_000);
        hold(Map.of("owner-a", Long.toString(released)));

        // handsOver checks the token against the server's time before the script ran.
        long handed = handsOver(Long.toString(released), 0);
        long after = lua.serverMicros();

        assertTrue(handed > released, () -> "token " + handed + " handed over after " + released);
        assertTrue(handed <= Math.max(after, released + 1),
                () -> "token " + handed + " is neither the server time (at most " + after + ") nor "
                        + released + " + 1");
    }

    @Test
    void handover_lastTokenAheadOfClock_issuesTheTokenRightAfterIt() throws Exception {
        hold(Map.of("owner-a", "1001"));
        long last = lastTokenAheadOfClock();

        // assertHandedTo checks the token key: last + 1, living its lead on the clock plus a second;
        // and the hash: the token of 16 digits written as a plain integer (no exponent, no ".0").
        long handed = handsOver("1001", 0);

        assertEquals(last + 1, handed, "max(server time, last token + 1)");
    }

    @Test
    void handover_sameOldTokenAgain_isRefused() throws Exception {
        hold(Map.of("owner-a", "1001", ":waiting", "1"));
        long handed = handsOver("1001", 1);
        Map<String, String> handedHold = Map.of("owner-b", Long.toString(handed), ":waiting", "1");

        // A repeated hand-over (a reply lost to a timeout, a command replayed after a reconnect).
        assertRefused("owner-a", "1001", "owner-c");
        // Nor is the old token the new owner's.
        assertRefused("owner-b", "1001", "owner-c");

        assertEquals(handedHold, lua.redis.hgetall(keys.lock), "the hold handed over stays");
        lua.assertTtlAtMost(keys.lock, HANDED_LEASE_MS);
        assertEquals(Long.toString(handed), lua.redis.get(keys.token), "no token is issued");
    }

    /* --------------- the client's count of waiters, for snapshots --------------- */

    @Test
    void handover_waitersLeftInTheClient_recordsTheirCountWithoutAnEndBesideOtherClientsCounts() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1", ":w:client-a", "3:99", ":w:client-z", "2:123"));

        List<Object> reply = handover("client-a:1", "1001", "client-a:2", 2);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(Map.of("client-a:2", String.valueOf(reply.get(1)), ":waiting", "1", ":w:client-a", "2",
                ":w:client-z", "2:123"), lua.redis.hgetall(keys.lock),
                "the client's count is the one given, lasting as the hold does; another client's is left as it was");
    }

    @Test
    void handover_noWaiterLeftInTheClient_removesItsCount() throws Exception {
        hold(Map.of("client-a:1", "1001", ":waiting", "1", ":w:client-a", "1"));

        List<Object> reply = handover("client-a:1", "1001", "client-a:2", 0);

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(Map.of("client-a:2", String.valueOf(reply.get(1)), ":waiting", "1"),
                lua.redis.hgetall(keys.lock));
    }

    @Test
    void handover_refused_leavesTheCountsAsTheyWere() throws Exception {
        Map<String, String> fields = Map.of("client-a:1", "1002", ":w:client-a", "4");
        hold(fields);

        assertEquals(List.of(0L, 0L, 0L), handover("client-a:1", "1001", "client-a:2", 1));

        assertKept(fields);
    }

    /* --------------- refused: nothing changes --------------- */

    @Test
    void handover_wrongToken_returnsZeroAndChangesNothing() throws Exception {
        // A late hand-over of an older hold of the same owner, whose newer hold has token 1002.
        hold(Map.of("owner-a", "1002", ":waiting", "1"));
        keys.lastToken(1002, LONG_LEASE_MS);

        assertRefused("owner-a", "1001", "owner-b");

        assertKept(Map.of("owner-a", "1002", ":waiting", "1"));
        assertEquals("1002", lua.redis.get(keys.token), "no token is issued");
        lua.assertTtlAtMost(keys.token, LONG_LEASE_MS);
    }

    @Test
    void handover_wrongOwner_returnsZeroAndChangesNothing() throws Exception {
        hold(Map.of("owner-a", "1001"));
        keys.lastToken(1001, LONG_LEASE_MS);

        assertRefused("owner-b", "1001", "owner-c");

        assertKept(Map.of("owner-a", "1001"));
        assertEquals("1001", lua.redis.get(keys.token), "no token is issued");
        lua.assertTtlAtMost(keys.token, LONG_LEASE_MS);
    }

    @Test
    void handover_freeLock_returnsZeroAndCreatesNothing() throws Exception {
        assertRefused("owner-a", "1001", "owner-b");

        assertEquals(0L, lua.redis.exists(keys.lock, keys.token, keys.queue, keys.places));
    }
}
