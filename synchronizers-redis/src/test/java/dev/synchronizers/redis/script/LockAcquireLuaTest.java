package dev.synchronizers.redis.script;

import org.junit.jupiter.api.Tag;

/** {@code lock-acquire.lua} against a real server: the tests of {@link AcquireLuaContract}, where a failed attempt leaves no trace. */
@Tag("redis")
class LockAcquireLuaTest extends AcquireLuaContract {

    LockAcquireLuaTest() {
        super(Script.LOCK_ACQUIRE, false);
    }
}
