package dev.synchronizers.redis.script;

import dev.synchronizers.testkit.RedisExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The lifecycle every script test shares: a server from {@link RedisExtension} for the class, one
 * {@link LuaHarness} on it, opened before the class's tests and closed after them, and a key-name
 * base unique to each test ({@link LuaHarness#uniqueName}), set before the subclass's own
 * {@code @BeforeEach} methods run.
 *
 * <p>The extension and the harness are static fields of this class, shared by the subclasses one
 * class after the other: the extension starts the server in each class's {@code beforeAll} and
 * stops it in its {@code afterAll}, so the test classes must not run concurrently.
 */
@Tag("redis")
abstract class LuaTestBase {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    static LuaHarness lua;

    /** A key-name base unique to the running test, e.g. {@code test:lock:{LockReleaseLuaTest.release_x:1f2e3d4c}}. */
    String base;

    @BeforeAll
    static void connect() {
        lua = LuaHarness.connect(redis.server().uri());
    }

    @AfterAll
    static void disconnect() {
        if (lua != null) {
            lua.close();
            lua = null;
        }
    }

    @BeforeEach
    void uniqueBase(TestInfo test) {
        base = LuaHarness.uniqueName(test);
    }
}
