package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.synchronizers.redis.script.LuaHarness.Subscription;
import dev.synchronizers.testkit.RedisExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code latch-delete.lua} against a real server: deleting a latch still counting down releases
 * its waiters; a latch at zero (absent) is left so, silently.
 */
@Tag("redis")
class LatchDeleteLuaTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String latch;
    private String wakeups;

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

    @BeforeEach
    void names(TestInfo test) {
        String base = LuaHarness.uniqueName(test);
        latch = base + ":latch";
        wakeups = base + ":wake";
    }

    private long delete() throws Exception {
        return lua.<Long>run(Script.LATCH_DELETE, new String[] {latch, wakeups});
    }

    @Test
    void delete_latchCountingDown_deletesItPublishesReleasedAndReturnsOne() throws Exception {
        lua.redis.set(latch, "3");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, delete());

            assertEquals("released", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(latch));
    }

    @Test
    void delete_absentLatch_returnsZeroAndPublishesNothing() throws Exception {
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(0L, delete());

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(latch));
    }

    @Test
    void delete_twice_releasesOnce() throws Exception {
        lua.redis.set(latch, "1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(1L, delete());
            assertEquals(0L, delete());

            assertEquals("released", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
    }
}
