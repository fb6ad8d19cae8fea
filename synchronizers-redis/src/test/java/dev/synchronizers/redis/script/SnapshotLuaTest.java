package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-snapshot.lua}, {@code rw-snapshot.lua} and {@code semaphore-snapshot.lua} against a
 * real server: they report only what is live (a place, read lease or grant whose lease ran out but
 * that no script has purged yet is not), and they change nothing: every key's value and TTL are as
 * before.
 */
@Tag("redis")
class SnapshotLuaTest extends LuaTestBase {

    @Test
    void lockSnapshot_holderWaitCountsAndAnUnpurgedExpiredPlace_reportsTheLiveOnesAndChangesNothing() throws Exception {
        var redis = lua.redis;
        String lock = base;
        String places = base + ":places";
        long now = lua.serverMillis();
        // Counts of waiting threads: one due to try again later, one whose try is overdue (it gave
        // up or died), one without an end (behind a hold of its own client).
        redis.hset(lock, Map.of("client-a:7", "42", ":waiting", "1", ":w:client-b", "3:" + (now + 60_000),
                ":w:client-e", "4:" + (now - 1), ":w:client-a", "2"));
        redis.pexpire(lock, 5000);
        redis.zadd(places, now + 60_000, "client-c:1");
        redis.zadd(places, now - 1_000, "client-d:1");
        Map<String, String> before = picture(lock, places);

        List<Object> reply = lua.run(Script.LOCK_SNAPSHOT, new String[] {lock, places});

        long pttl = (Long) reply.get(0);
        assertTrue(pttl > 0 && pttl <= 5000, "pttl " + pttl);
        assertEquals(1L, reply.get(1), "the expired place is not a waiter");
        assertEquals(Map.of("client-a:7", "42"), pairs((List<?>) reply.get(2)), "the holders, without the marks");
        assertEquals(Map.of("client-b", 3L, "client-a", 2L), pairs((List<?>) reply.get(3)),
                "the counts that still count, per client");
        assertEquals(before, picture(lock, places), "the snapshot changed something");
    }

    /**
     * The non-fair lock's first waiter of a client has a place in line and its client a count of
     * waiting threads, which includes it: the place is not counted again. A place whose client's
     * count no longer counts (its try is overdue) is a waiter in line like any other.
     */
    @Test
    void lockSnapshot_nonFairClientWithACountAndAPlace_isCountedOnce() throws Exception {
        var redis = lua.redis;
        String lock = base;
        String places = base + ":places";
        long now = lua.serverMillis();
        redis.hset(lock, Map.of("client-a:7", "42", ":waiting", "1", ":w:client-b", "3:" + (now + 60_000),
                ":w:client-e", "2:" + (now - 1)));
        redis.pexpire(lock, 5000);
        redis.zadd(places, now + 60_000, "client-b:1");   // client-b's first waiter, in its count
        redis.zadd(places, now + 60_000, "client-c:4");   // a waiter with no count (a fair waiter)
        redis.zadd(places, now + 60_000, "client-e:2");   // its client's count is over

        List<Object> reply = lua.run(Script.LOCK_SNAPSHOT, new String[] {lock, places});

        assertEquals(2L, reply.get(1), "client-c:4 and client-e:2 in line; client-b:1 is in its client's count");
        assertEquals(Map.of("client-b", 3L), pairs((List<?>) reply.get(3)), "the counts that still count");
    }

    @Test
    void lockSnapshot_free_reportsNoHoldAndCreatesNothing() throws Exception {
        String lock = base;
        String places = base + ":places";

        List<Object> reply = lua.run(Script.LOCK_SNAPSHOT, new String[] {lock, places});

        assertEquals(-2L, reply.get(0));
        assertEquals(0L, reply.get(1));
        assertEquals(List.of(), reply.get(2));
        assertEquals(List.of(), reply.get(3));
        assertEquals(0L, lua.redis.exists(lock, places));
    }

    @Test
    void rwSnapshot_writerLiveAndExpiredReaders_reportsTheLiveOnesAndChangesNothing() throws Exception {
        var redis = lua.redis;
        String write = base;
        String readers = base + ":readers";
        String rtokens = base + ":rtokens";
        String places = base + ":places";
        String rwait = base + ":rwait";
        long now = lua.serverMillis();
        redis.hset(write, "client-a:1", "10");
        redis.pexpire(write, 4000);
        redis.zadd(readers, now + 30_000, "client-b:2");
        redis.zadd(readers, now - 500, "client-c:3");
        redis.hset(rtokens, Map.of("client-b:2", "11", "client-c:3", "9"));
        redis.zadd(places, now + 30_000, "client-d:4");
        redis.set(rwait, "1");
        Map<String, String> before = picture(write, readers, rtokens, places, rwait);

        List<Object> reply = lua.run(Script.RW_SNAPSHOT, new String[] {write, readers, rtokens, places, rwait});

        assertTrue((Long) reply.get(0) > 0 && (Long) reply.get(0) <= 4000, "write pttl " + reply.get(0));
        assertEquals(1L, reply.get(1), "one waiting writer");
        assertEquals(1L, reply.get(2), "readers wait");
        assertEquals(Map.of("client-a:1", "10"), pairs((List<?>) reply.get(3)));
        List<?> live = (List<?>) reply.get(4);
        assertEquals(3, live.size(), "one live reader: " + live);
        assertEquals("client-b:2", live.get(0));
        assertEquals("11", live.get(1));
        long remaining = (Long) live.get(2);
        assertTrue(remaining > 0 && remaining <= 30_000, "remaining " + remaining);
        assertEquals(before, picture(write, readers, rtokens, places, rwait), "the snapshot changed something");
    }

    @Test
    void semaphoreSnapshot_liveExpiredAndGivenUpGrants_reportsOnlyLiveHoldingsAndChangesNothing() throws Exception {
        var redis = lua.redis;
        String total = base;
        String holds = base + ":holds";
        String leases = base + ":leases";
        String places = base + ":places";
        long now = lua.serverMillis();
        redis.set(total, "10");
        redis.hset(holds, Map.of("client-a:1:1", "3", "client-b:2:5", "2", "client-c:3:9", "0", ":sum", "5"));
        redis.zadd(leases, now + 30_000, "client-a:1:1");
        redis.zadd(leases, now - 100, "client-b:2:5");
        redis.zadd(leases, now + 30_000, "client-c:3:9");
        redis.zadd(places, now + 30_000, "client-d:4:1");
        Map<String, String> before = picture(total, holds, leases, places);

        List<Object> reply = lua.run(Script.SEMAPHORE_SNAPSHOT, new String[] {total, holds, leases, places});

        assertEquals(10L, reply.get(0));
        assertEquals(1L, reply.get(1), "one queued waiter");
        List<?> grants = (List<?>) reply.get(2);
        assertEquals(3, grants.size(), "only the live grant that holds permits: " + grants);
        assertEquals("client-a:1:1", grants.get(0));
        assertEquals(3L, grants.get(1));
        assertEquals(before, picture(total, holds, leases, places), "the snapshot changed something");
    }

    /** Each key's type, value (as DUMP serialises it) and whether it has a TTL. */
    private static Map<String, String> picture(String... keys) {
        Map<String, String> picture = new LinkedHashMap<>();
        for (String key : keys) {
            byte[] dump = lua.redis.dump(key);
            picture.put(key, (dump == null ? "absent" : java.util.HexFormat.of().formatHex(dump))
                    + " ttl=" + (lua.redis.pttl(key) >= 0));
        }
        return picture;
    }

    private static Map<String, Object> pairs(List<?> flat) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            map.put((String) flat.get(i), flat.get(i + 1));
        }
        return map;
    }
}
