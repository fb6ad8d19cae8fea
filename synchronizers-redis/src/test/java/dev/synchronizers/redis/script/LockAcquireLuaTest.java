package dev.synchronizers.redis.script;

import dev.synchronizers.testkit.RedisExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code lock-acquire.lua} against a real server: the tests of {@link AcquireLuaContract}, where a failed attempt leaves no trace. */
@Tag("redis")
class LockAcquireLuaTest extends AcquireLuaContract {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    @BeforeAll
    static void connect() {
        lua = LuaHarness.connect(redis.server().uri());
    }

    @AfterAll
    static void disconnect() {
        if (lua != null) {
            lua.close();
        }
    }

    @Override
    LuaHarness lua() {
        return lua;
    }

    @Override
    Script script() {
        return Script.LOCK_ACQUIRE;
    }

    @Override
    boolean marksWaiter() {
        return false;
    }
}
