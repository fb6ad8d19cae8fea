package dev.synchronizers.redis.script;

import io.lettuce.core.ScoredValue;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the fixtures of the primitives with a queue share ({@link FairFixture}, {@link RwFixture},
 * {@link SemaphoreFixture}): the waiters' queue, their places and the wake-up channel under one
 * base, with the suffixes {@code LockKeys} and {@code SemaphoreKeys} use (each client's own channel
 * under the wake-up channel), and waiters queued by hand.
 */
abstract class QueueFixture {

    final String queue;
    final String places;
    final String wakeups;

    final LuaHarness lua;

    QueueFixture(LuaHarness lua, String base) {
        this.lua = lua;
        queue = base + ":queue";
        places = base + ":places";
        wakeups = base + ":wake";
    }

    /** Queues a waiter at {@code order} whose place ends at {@code placeEndMs} (server time); the keys get no TTL. */
    void queued(String waiter, long order, long placeEndMs) {
        lua.redis.zadd(queue, order, waiter);
        lua.redis.zadd(places, placeEndMs, waiter);
    }

    /** Queues the waiters in the given order, each with a place ending at {@code placeEndMs}. */
    void queued(long placeEndMs, String... waiters) {
        for (int i = 0; i < waiters.length; i++) {
            queued(waiters[i], i + 1, placeEndMs);
        }
    }

    List<String> queueOrder() {
        return lua.redis.zrange(queue, 0, -1);
    }

    /** The places with their ends, in the order of their ends. */
    List<ScoredValue<String>> placeEnds() {
        return lua.redis.zrangeWithScores(places, 0, -1);
    }

    /**
     * The client of an owner as the scripts read it: the part before its first {@code ':'}, or the
     * whole string if it has none.
     */
    static String clientOf(String owner) {
        return LuaHarness.clientOf(owner);
    }

    /** The channel {@code waiter}'s client hears what names it on: {@code '<wakeups>:<client>'}. */
    String channelOf(String waiter) {
        return LuaHarness.clientChannel(wakeups, waiter);
    }

    /**
     * Runs {@code action} while the clients of {@code listening} are subscribed to their own
     * channels and another connection to the shared one, and asserts that none of them got a
     * message: a script that serves nobody, though these waiters' clients would hear a grant.
     */
    void assertServesNobody(LuaHarness.Action action, String... listening) throws Exception {
        Map<String, List<String>> channels = new LinkedHashMap<>();
        channels.put(wakeups, List.of());
        for (String waiter : listening) {
            channels.put(channelOf(waiter), List.of());
        }
        lua.assertPublishes(channels, action);
    }
}
