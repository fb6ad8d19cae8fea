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
 * {@code latch-count-down.lua} against a real server: each call decrements; the one that reaches
 * zero deletes the latch and publishes {@code released}; a latch at zero (absent) stays so, silently.
 */
@Tag("redis")
class LatchCountDownLuaTest {

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

    private long countDown() throws Exception {
        return lua.<Long>run(Script.LATCH_COUNT_DOWN, new String[] {latch, wakeups});
    }

    @Test
    void countDown_aboveOne_decrementsAndPublishesNothing() throws Exception {
        lua.redis.set(latch, "3");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(2L, countDown());

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals("2", lua.redis.get(latch));
    }

    @Test
    void countDown_fromOne_deletesTheLatchAndPublishesReleased() throws Exception {
        lua.redis.set(latch, "1");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(0L, countDown());

            assertEquals("released", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(latch), "a latch at zero leaves no key behind");
    }

    @Test
    void countDown_absentLatch_returnsZeroPublishesNothingAndCreatesNothing() throws Exception {
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(0L, countDown());

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(latch));
    }

    @Test
    void countDown_toZeroAndBeyond_releasesExactlyOnce() throws Exception {
        lua.redis.set(latch, "3");
        try (Subscription subscription = lua.subscribe(wakeups)) {

            assertEquals(2L, countDown());
            assertEquals(1L, countDown());
            assertEquals(0L, countDown());
            assertEquals(0L, countDown());
            assertEquals(0L, countDown());

            assertEquals("released", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(latch));
    }
}
