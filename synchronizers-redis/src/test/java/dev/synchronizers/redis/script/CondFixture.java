package dev.synchronizers.redis.script;

import java.util.List;

/**
 * The keys of condition 0 of a lock whose hold hash is {@code lock}, as the condition scripts take
 * them, and the waiters a test writes by hand.
 *
 * <p>A signalled waiter is told {@code 'granted:<waiter>'} on its client's channel
 * ({@link #channelOf}: the wake-up channel, {@code ':'}, the waiter up to its first {@code ':'}),
 * never on the shared wake-up channel.
 */
final class CondFixture {

    final String lock;
    final String queue;
    final String places;
    final String signalled;
    final String signals;
    final String wake;
    private final LuaHarness lua;

    CondFixture(LuaHarness lua, String lock) {
        this.lua = lua;
        this.lock = lock;
        String base = lock + ":cond:0";
        this.queue = base + ":queue";
        this.places = base + ":places";
        this.signalled = base + ":signalled";
        this.signals = base + ":signals";
        this.wake = base + ":wake";
    }

    /** Queues the waiters in this order, each with a place ending at {@code placeEnd}. */
    void waiting(long placeEnd, String... waiters) {
        for (String waiter : waiters) {
            lua.redis.zadd(queue, (double) lua.redis.zcard(queue), waiter);
            lua.redis.zadd(places, (double) placeEnd, waiter);
        }
        lua.redis.pexpire(queue, LuaHarness.LONG_LEASE_MS);
        lua.redis.pexpire(places, LuaHarness.LONG_LEASE_MS);
    }

    /** Makes {@code owner} the holder of the lock with {@code token}. */
    void held(String owner, long token) {
        lua.redis.hset(lock, owner, Long.toString(token));
        lua.redis.pexpire(lock, LuaHarness.LONG_LEASE_MS);
    }

    String[] awaitKeys() {
        return new String[] {lock, queue, places, signalled, wake};
    }

    String[] signalKeys() {
        return new String[] {lock, queue, places, signalled, signals, wake};
    }

    String[] leaveKeys() {
        return new String[] {queue, places, signalled, wake};
    }

    /** The channel {@code waiter}'s client hears its signals on: {@code '<wake>:<client>'}. */
    String channelOf(String waiter) {
        return LuaHarness.clientChannel(wake, waiter);
    }

    /**
     * Runs {@code action} and asserts that it told each of {@code signalled}, in this order,
     * {@code 'granted:<waiter>'} on its client's channel, and nothing else: nothing on the shared
     * channel, nothing more on those clients' channels, nothing on the channels of the clients of
     * {@code others}. With no waiter signalled, it asserts that nobody was told anything.
     */
    void assertSignals(LuaHarness.Action action, List<String> signalled, String... others) throws Exception {
        lua.assertTellsClients(wake, action, List.of(), signalled.stream().map(w -> "granted:" + w).toList(), others);
    }
}
