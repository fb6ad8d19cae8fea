package dev.synchronizers.redis.script;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The keys of one semaphore under a base unique to the test, with the suffixes {@code SemaphoreKeys}
 * uses (here also the total's: holdings, leases, the waiters' queue, places and asks, the wake-up
 * channel), and hand-made holdings, queues and grant records for the {@code Semaphore*LuaTest}
 * classes, so that only the script under test runs.
 *
 * <p>A waiter's client is the part of its name before the first {@code ':'}: the grant of
 * {@code c1:1} is booked under {@code c1}.
 */
final class SemaphoreFixture extends QueueFixture {

    final String total;
    final String holds;
    final String leases;
    final String asks;

    SemaphoreFixture(LuaHarness lua, String base) {
        super(lua, base);
        total = base + ":total";
        holds = base + ":holds";
        leases = base + ":leases";
        asks = base + ":asks";
    }

    /** The channel of the client of {@code waiter} (its name up to the first {@code ':'}), which the scripts tell it on. */
    String clientChannel(String waiter) {
        int colon = waiter.indexOf(':');
        return wakeups + ":" + (colon < 0 ? waiter : waiter.substring(0, colon));
    }

    /**
     * Runs {@code action} and asserts that each of {@code messages} ({@code granted:<waiter>}, or a
     * waiter's bare name) went to the channel of the client of the waiter it names, in order, and
     * that nothing else went there, to the channels of the clients {@code c0} to {@code c4}, or to
     * the semaphore's shared channel.
     */
    void assertPublishes(LuaHarness.Action action, String... messages) throws Exception {
        Map<String, List<String>> expected = silence();
        for (String message : messages) {
            String waiter = message.startsWith("granted:") ? message.substring("granted:".length()) : message;
            expected.computeIfAbsent(clientChannel(waiter), channel -> new ArrayList<>()).add(message);
        }
        lua.assertPublishes(expected, action);
    }

    /**
     * Runs {@code action} and asserts that {@code released} went once to the channel of each
     * client of {@code waiters} (a client with two waiters hears it once), and nothing else to
     * those channels, to the channels of {@code c0} to {@code c4}, or to the shared channel.
     */
    void assertReleasedTo(LuaHarness.Action action, String... waiters) throws Exception {
        Map<String, List<String>> expected = silence();
        for (String waiter : waiters) {
            expected.put(clientChannel(waiter), List.of("released"));
        }
        lua.assertPublishes(expected, action);
    }

    /** The shared channel and the channels of clients {@code c0} to {@code c4}, each expecting nothing. */
    private Map<String, List<String>> silence() {
        Map<String, List<String>> expected = new LinkedHashMap<>();
        expected.put(wakeups, new ArrayList<>());
        for (int i = 0; i < 5; i++) {
            expected.put(wakeups + ":c" + i, new ArrayList<>());
        }
        return expected;
    }

    /**
     * The keys of {@code semaphore-acquire.lua}, {@code semaphore-release.lua},
     * {@code semaphore-leave.lua} and {@code semaphore-add.lua}.
     */
    String[] keys() {
        return new String[] {total, holds, leases, queue, places, asks, wakeups};
    }

    /**
     * Books permits for a client whose lease ends at {@code leaseEndMs} (server time), as an
     * acquire would; the holdings and leases live {@code ttlMs}.
     */
    void hold(String client, long permits, long leaseEndMs, long ttlMs) {
        lua.redis.hincrby(holds, client, permits);
        lua.redis.hincrby(holds, ":sum", permits);
        lua.redis.zadd(leases, leaseEndMs, client);
        lua.redis.pexpire(holds, ttlMs);
        lua.redis.pexpire(leases, ttlMs);
    }

    /**
     * Queues a waiter at {@code order} asking for {@code permits}, whose place ends at
     * {@code placeEndMs} (server time), as an acquire that queued it would; the keys get no TTL.
     */
    void asking(String waiter, long order, long permits, long placeEndMs) {
        queued(waiter, order, placeEndMs);
        lua.redis.hset(asks, waiter, Long.toString(permits));
    }

    /** Queues the waiters in the given order, each asking for {@code permits} with a place ending at {@code placeEndMs}. */
    void asking(long permits, long placeEndMs, String... waiters) {
        for (int i = 0; i < waiters.length; i++) {
            asking(waiters[i], i + 1, permits, placeEndMs);
        }
    }

    /**
     * Writes the grant record of a waiter served from the line and not yet claimed: its place
     * (ending at {@code placeEndMs}) and its ask, not in the queue. The permits its client holds
     * for it are booked separately ({@link #hold}); the keys get no TTL.
     */
    void granted(String waiter, long permits, long placeEndMs) {
        lua.redis.zadd(places, placeEndMs, waiter);
        lua.redis.hset(asks, waiter, Long.toString(permits));
    }

    /**
     * The asks of queued and granted waiters: waiter -> permits. The scripts keep a copy of the
     * place's end after the permits ({@code "<permits> <end>"}); only the permits are shown.
     */
    Map<String, String> asks() {
        Map<String, String> permits = new java.util.HashMap<>();
        lua.redis.hgetall(asks).forEach((waiter, ask) -> permits.put(waiter, ask.split(" ", 2)[0]));
        return permits;
    }

    /**
     * The holdings: grant -> permits, and {@code :sum}; without the hints the scripts keep beside
     * them ({@code :total}, {@code :lmin}, {@code :pmin}, {@code :ttl}: see semaphore-acquire.lua),
     * which no contract fixes.
     */
    Map<String, String> holdings() {
        Map<String, String> holdings = new java.util.HashMap<>(lua.redis.hgetall(holds));
        holdings.keySet().removeAll(java.util.Set.of(":total", ":lmin", ":pmin", ":ttl", ":over", ":over-clients"));
        return holdings;
    }

    /**
     * Asserts that a key lives at least {@code ttlMs} from {@code sinceMs} and at most twice that:
     * the hot scripts set twice what they need, so that most calls set no TTL at all.
     */
    void assertTtlCovers(String key, long ttlMs, long sinceMs) {
        long pttl = lua.redis.pttl(key);
        long elapsed = lua.serverMillis() - sinceMs;
        org.junit.jupiter.api.Assertions.assertTrue(pttl >= ttlMs - elapsed && pttl <= 2 * ttlMs,
                () -> key + " PTTL " + pttl + ", expected " + ttlMs + " less at most " + elapsed + " ms, up to twice that");
    }

    /**
     * Drops the hints the scripts keep in the holdings, as after a hand edit of the state (a total
     * or a place end written by the test) that no script made: the next script recomputes them.
     */
    void forgetHints() {
        lua.redis.hdel(holds, ":total", ":lmin", ":pmin", ":ttl", ":over", ":over-clients");
    }

    /** {@code count} waiter names {@code w00:1, w01:1, ...}, in queue order, each of its own client. */
    static String[] waiters(int count) {
        String[] names = new String[count];
        for (int i = 0; i < count; i++) {
            names[i] = String.format("w%02d:1", i);
        }
        return names;
    }
}
