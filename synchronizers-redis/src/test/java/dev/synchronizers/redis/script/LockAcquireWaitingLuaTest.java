package dev.synchronizers.redis.script;

import org.junit.jupiter.api.Tag;

/** {@code lock-acquire-waiting.lua} against a real server: the tests of {@link AcquireLuaContract}, where a failed attempt marks a waiter. */
@Tag("redis")
class LockAcquireWaitingLuaTest extends AcquireLuaContract {

    LockAcquireWaitingLuaTest() {
        super(Script.LOCK_ACQUIRE_WAITING, true);
    }

    /** One waiting thread of the owner's client, as the client's first waiter reports. */
    @Override
    String[] args(String owner, long leaseMs) {
        return new String[] {owner, Long.toString(leaseMs), "1"};
    }
}
