package dev.synchronizers.redis.script;

/**
 * The keys of one semaphore under a base unique to the test, with the suffixes {@code SemaphoreKeys}
 * uses (here also the total's: holdings, leases, the waiters' queue and places, the wake-up channel), and
 * hand-made holdings and queues for the {@code Semaphore*LuaTest} classes, so that only the script
 * under test runs.
 */
final class SemaphoreFixture extends QueueFixture {

    final String total;
    final String holds;
    final String leases;

    SemaphoreFixture(LuaHarness lua, String base) {
        super(lua, base);
        total = base + ":total";
        holds = base + ":holds";
        leases = base + ":leases";
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

    /** {@code count} waiter names {@code w00:1, w01:1, ...}, in queue order. */
    static String[] waiters(int count) {
        String[] names = new String[count];
        for (int i = 0; i < count; i++) {
            names[i] = String.format("w%02d:1", i);
        }
        return names;
    }
}
