package dev.synchronizers.redis.script;

import java.util.Map;

/**
 * The keys of one fair lock, named as {@code LockKeys} names them under a base unique to the test
 * (the hold's hash, the waiters' queue and places, the wake-up channel), and hand-made holds and
 * queues for the tests of the scripts that take them, so that only the script under test runs.
 */
final class FairFixture extends QueueFixture {

    final String lock;

    /** The keys under {@code lock}, which is also the hold's key. */
    FairFixture(LuaHarness lua, String lock) {
        super(lua, lock);
        this.lock = lock;
    }

    /** The keys of {@code fair-lock-release.lua}, {@code fair-lock-leave.lua} and {@code lock-force-unlock.lua}. */
    String[] keys() {
        return new String[] {lock, queue, places, wakeups};
    }

    /** A hold with these fields (owner and token, maybe {@code ':waiting'}), living {@code ttlMs}. */
    void hold(Map<String, String> fields, long ttlMs) {
        lua.redis.hset(lock, fields);
        lua.redis.pexpire(lock, ttlMs);
    }
}
