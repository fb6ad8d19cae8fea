package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.SetArgs;
import java.util.Map;

/**
 * The keys of one fair lock, named as {@code LockKeys} names them under a base unique to the test
 * (the hold's hash, the last fencing token, the waiters' queue and places, the wake-up channel
 * and each client's own channel under it), hand-made holds and queues for the tests of the scripts
 * that take them, so that only the script under test runs, and the checks of a lock handed to a
 * waiter in Redis. The non-fair lock's keys are named the same way, so its tests use this fixture too.
 */
final class FairFixture extends QueueFixture {

    final String lock;
    final String token;

    /** The keys under {@code lock}, which is also the hold's key. */
    FairFixture(LuaHarness lua, String lock) {
        super(lua, lock);
        this.lock = lock;
        this.token = lock + ":token";
    }

    /**
     * The keys of {@code fair-lock-release.lua}, {@code fair-lock-leave.lua}, {@code lock-release.lua}
     * and {@code lock-give-back.lua}.
     */
    String[] keys() {
        return new String[] {lock, token, queue, places, wakeups};
    }

    /** The keys of {@code lock-acquire-waiting.lua} and {@code fair-lock-acquire.lua}. */
    String[] acquireKeys() {
        return new String[] {lock, token, queue, places};
    }

    /** The keys of {@code lock-handover.lua}. */
    String[] handoverKeys() {
        return new String[] {lock, token, queue, places};
    }

    /** The keys of {@code lock-snapshot.lua}. */
    String[] snapshotKeys() {
        return new String[] {lock, places};
    }

    /** The keys of {@code lock-force-unlock.lua}, which issues no token. */
    String[] forceUnlockKeys() {
        return new String[] {lock, queue, places, wakeups};
    }

    /** A hold with these fields (owner and token, maybe {@code ':waiting'}), living {@code ttlMs}. */
    void hold(Map<String, String> fields, long ttlMs) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, ttlMs);
    }

    /** Records {@code last} as the last token issued, its key living {@code ttlMs}. */
    void lastToken(long last, long ttlMs) {
        lua.redis.set(token, Long.toString(last), SetArgs.Builder.px(ttlMs));
    }

    /** The message that tells {@code waiter} it was handed the lock with {@code token}. */
    static String granted(String waiter, long token) {
        return "granted:" + waiter + "=" + token;
    }

    /**
     * Asserts that the lock was handed to {@code waiter} by a script run at a server time no earlier
     * than {@code sinceMicros}, and returns the token it got: the hash holds that waiter's token and
     * nothing else, leased until the waiter's place would have ended ({@code placeEndMs}); the token
     * key records the token and lives one second past it, as an acquire leaves it.
     */
    long assertHandedTo(String waiter, long placeEndMs, long sinceMicros) {
        Map<String, String> hash = lua.redis.hgetall(lock);
        assertEquals(1, hash.size(), () -> "the hash holds the served waiter alone: " + hash);
        assertTrue(hash.containsKey(waiter), () -> waiter + " should hold the lock, hash " + hash);
        long handed = Long.parseLong(hash.get(waiter));
        assertTrue(handed >= sinceMicros, () -> "token " + handed + " below the server time " + sinceMicros);
        assertEquals(Long.toString(handed), lua.redis.get(token), "the token key records the token handed over");

        // Each bound from the server's clock: the script ran between sinceMicros and the reading
        // after the PTTLs, and a key's expiry is set in whole milliseconds of its own clock.
        long sinceMs = sinceMicros / 1_000;
        long lockPttl = lua.redis.pttl(lock);
        long tokenPttl = lua.redis.pttl(token);
        long afterMicros = lua.serverMicros();
        long afterMs = afterMicros / 1_000;
        long elapsed = afterMs - sinceMs;
        assertTrue(lockPttl <= placeEndMs - sinceMs && lockPttl >= placeEndMs - afterMs - elapsed,
                () -> "lock PTTL " + lockPttl + " does not end at the place's end " + placeEndMs
                        + " (server time in [" + sinceMs + ", " + afterMs + "])");
        long tokenTtlMax = Math.floorDiv(handed - sinceMicros, 1_000) + 1_000;
        long tokenTtlMin = Math.floorDiv(handed - afterMicros, 1_000) + 1_000 - elapsed;
        assertTrue(tokenPttl <= tokenTtlMax && tokenPttl >= tokenTtlMin,
                () -> "token key PTTL " + tokenPttl + ", expected within [" + tokenTtlMin + ", " + tokenTtlMax + "]");
        return handed;
    }

    /**
     * Runs {@code action}, a script that must hand the lock to {@code waiter}, while the waiter's
     * client is subscribed to its own channel ({@link #channelOf}) and another connection to the
     * shared wake-up channel; asserts the hand-over ({@link #assertHandedTo}), that the client's
     * channel got the grant naming the waiter and its new token and nothing more, and that the
     * shared channel got nothing. Returns the token handed over.
     */
    long assertHandsOver(LuaHarness.Action action, String waiter, long placeEndMs) throws Exception {
        try (LuaHarness.Subscription shared = lua.subscribe(wakeups);
                LuaHarness.Subscription own = lua.subscribe(channelOf(waiter))) {
            long since = lua.serverMicros();
            action.run();
            long handed = assertHandedTo(waiter, placeEndMs, since);
            assertEquals(granted(waiter, handed), own.next(), "the grant names the waiter and its token");
            own.assertNothingMore(lua.redis);
            shared.assertNothingMore(lua.redis);
            return handed;
        }
    }
}
