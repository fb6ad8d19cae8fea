package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.ScoredValue;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code fair-lock-renew-place.lua} (batched, two keys per item) against a real server, on queues
 * written by hand. Place ends are checked against the server's clock read around the call.
 */
@Tag("redis")
class FairLockRenewPlaceLuaTest {

    /** The place lease the queues start with: shorter than the renewal's, so a renewal shows. */
    private static final long PLACE_MS = 30_000;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private String base;

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
        base = LuaHarness.uniqueName(test);
    }

    private static String queue(String lock) {
        return lock + ":queue";
    }

    private static String places(String lock) {
        return lock + ":places";
    }

    /** Queues the owners of a lock in order, each with a place ending {@link #PLACE_MS} from now; returns that end. */
    private long queued(String lock, String... owners) {
        long end = lua.serverMillis() + PLACE_MS;
        for (int i = 0; i < owners.length; i++) {
            lua.redis.zadd(queue(lock), i + 1, owners[i]);
            lua.redis.zadd(places(lock), end, owners[i]);
        }
        lua.redis.pexpire(queue(lock), PLACE_MS);
        lua.redis.pexpire(places(lock), PLACE_MS);
        return end;
    }

    /* --------------- renewal --------------- */

    @Test
    void renewPlace_oneQueuedOneNot_renewsOnlyTheQueuedOne() throws Exception {
        String first = base + ":1";
        String second = base + ":2";
        queued(first, "owner-a", "owner-b");
        long otherEnd = queued(second, "owner-x");

        long before = lua.serverMillis();
        List<Object> reply = lua.run(Script.FAIR_LOCK_RENEW_PLACE,
                new String[] {queue(first), places(first), queue(second), places(second)},
                Long.toString(LONG_LEASE_MS), "owner-b", "owner-z");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 0L), reply);
        Double renewed = lua.redis.zscore(places(first), "owner-b");
        assertTrue(renewed != null && renewed >= before + LONG_LEASE_MS && renewed <= after + LONG_LEASE_MS,
                () -> "owner-b's place ends at " + renewed + ", expected within [" + (before + LONG_LEASE_MS)
                        + ", " + (after + LONG_LEASE_MS) + "]");
        assertEquals(List.of("owner-a", "owner-b"), lua.redis.zrange(queue(first), 0, -1), "the order is kept");
        lua.assertTtlSetSince(queue(first), LONG_LEASE_MS, before);
        lua.assertTtlSetSince(places(first), LONG_LEASE_MS, before);

        assertNull(lua.redis.zscore(places(second), "owner-z"), "no place for an owner not queued");
        assertEquals(List.of("owner-x"), lua.redis.zrange(queue(second), 0, -1));
        assertEquals(List.of(ScoredValue.just(otherEnd, "owner-x")), lua.redis.zrangeWithScores(places(second), 0, -1));
        long otherPttl = lua.redis.pttl(queue(second));
        assertTrue(otherPttl > 0 && otherPttl <= PLACE_MS, () -> "the other queue's TTL was touched: " + otherPttl);
    }

    @Test
    void renewPlace_sameQueueTwice_renewsBoth() throws Exception {
        String lock = base + ":1";
        queued(lock, "owner-a", "owner-b");

        long before = lua.serverMillis();
        List<Object> reply = lua.run(Script.FAIR_LOCK_RENEW_PLACE,
                new String[] {queue(lock), places(lock), queue(lock), places(lock)},
                Long.toString(LONG_LEASE_MS), "owner-a", "owner-b");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 1L), reply);
        for (String owner : List.of("owner-a", "owner-b")) {
            Double end = lua.redis.zscore(places(lock), owner);
            assertTrue(end != null && end >= before + LONG_LEASE_MS && end <= after + LONG_LEASE_MS,
                    () -> owner + "'s place ends at " + end);
        }
    }

    @Test
    void renewPlace_ownerNotQueuedAnywhere_createsNoKey() throws Exception {
        String lock = base + ":1";

        assertEquals(List.of(0L), lua.run(Script.FAIR_LOCK_RENEW_PLACE,
                new String[] {queue(lock), places(lock)}, Long.toString(LONG_LEASE_MS), "owner-a"));

        assertEquals(0L, lua.redis.exists(queue(lock), places(lock)));
    }

    @Test
    void renewPlace_shorterThanTheKeysTtl_doesNotShortenTheKeys() throws Exception {
        String lock = base + ":1";
        queued(lock, "owner-a");
        long before = lua.serverMillis();
        lua.redis.pexpire(queue(lock), LONG_LEASE_MS);
        lua.redis.pexpire(places(lock), LONG_LEASE_MS);

        assertEquals(List.of(1L), lua.run(Script.FAIR_LOCK_RENEW_PLACE,
                new String[] {queue(lock), places(lock)}, Long.toString(PLACE_MS), "owner-a"));

        lua.assertTtlSetSince(queue(lock), LONG_LEASE_MS, before);
        lua.assertTtlSetSince(places(lock), LONG_LEASE_MS, before);
    }
}
