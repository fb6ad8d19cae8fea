package dev.synchronizers.redis.script;

import org.junit.jupiter.api.Tag;

/** {@code lock-acquire-waiting.lua} against a real server: the tests of {@link AcquireLuaContract}, where a failed attempt marks a waiter. */
@Tag("redis")
class LockAcquireWaitingLuaTest extends AcquireLuaContract {

    LockAcquireWaitingLuaTest() {
        super(Script.LOCK_ACQUIRE_WAITING, true);
    }
}
