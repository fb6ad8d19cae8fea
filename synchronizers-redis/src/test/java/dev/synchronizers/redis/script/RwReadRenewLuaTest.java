package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.testkit.RedisExtension;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code rw-read-renew.lua} (batched: a readers zset and an rtokens hash per item, an owner and a
 * token per item) against a real server, on read holds written by hand. A read hold is renewed
 * only while its token matches and its lease is still running; otherwise, and for a key of a
 * foreign type, its item alone yields 0.
 */
@Tag("redis")
class RwReadRenewLuaTest {

    /** The TTL the read holds start with: shorter than the renewal's, so a renewal shows in PTTL. */
    private static final long LEASE_MS = 60_000;

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

    private String readers(String lock) {
        return base + ":" + lock + ":readers";
    }

    private String rtokens(String lock) {
        return base + ":" + lock + ":rtokens";
    }

    /** A read hold of {@code owner} on {@code lock} whose lease ends at {@code leaseEndMs}; keys live {@code ttlMs}. */
    private void hold(String lock, String owner, long token, long leaseEndMs, long ttlMs) {
        lua.redis.zadd(readers(lock), leaseEndMs, owner);
        lua.redis.hset(rtokens(lock), owner, Long.toString(token));
        lua.redis.pexpire(readers(lock), ttlMs);
        lua.redis.pexpire(rtokens(lock), ttlMs);
    }

    /** A read hold whose lease ends with the keys, {@link #LEASE_MS} from now. */
    private void hold(String lock, String owner, long token) {
        hold(lock, owner, token, lua.serverMillis() + LEASE_MS, LEASE_MS);
    }

    /** Runs the script on the locks, with {@code ownersAndTokens} as owner, token, owner, token, ... */
    private List<Object> renew(long leaseMs, String[] locks, String... ownersAndTokens) throws Exception {
        String[] keys = new String[locks.length * 2];
        for (int i = 0; i < locks.length; i++) {
            keys[2 * i] = readers(locks[i]);
            keys[2 * i + 1] = rtokens(locks[i]);
        }
        String[] args = new String[ownersAndTokens.length + 1];
        args[0] = Long.toString(leaseMs);
        System.arraycopy(ownersAndTokens, 0, args, 1, ownersAndTokens.length);
        return lua.run(Script.RW_READ_RENEW, keys, args);
    }

    private void assertLeaseEndsWithin(String lock, String owner, long fromMs, long toMs) {
        Double end = lua.redis.zscore(readers(lock), owner);
        assertTrue(end != null && end >= fromMs && end <= toMs,
                () -> owner + "'s lease ends at " + end + ", expected within [" + fromMs + ", " + toMs + "]");
    }

    private void assertTtlNotReset(String key) {
        long pttl = lua.redis.pttl(key);
        assertTrue(pttl > 0 && pttl <= LEASE_MS, () -> key + " PTTL " + pttl + " was touched");
    }

    /* --------------- renewal --------------- */

    @Test
    void renew_liveLeaseRightToken_movesItsEndAndTheKeysTtlsInServerTime() throws Exception {
        hold("l1", "owner-a", 1001);
        hold("l1", "owner-b", 1002);
        Double othersEnd = lua.redis.zscore(readers("l1"), "owner-b");

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001");
        long after = lua.serverMillis();

        assertEquals(List.of(1L), reply);
        assertLeaseEndsWithin("l1", "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals(othersEnd, lua.redis.zscore(readers("l1"), "owner-b"), "another reader's lease is not touched");
        lua.assertTtlSetSince(readers("l1"), LONG_LEASE_MS, before);
        lua.assertTtlSetSince(rtokens("l1"), LONG_LEASE_MS, before);
        assertEquals(Map.of("owner-a", "1001", "owner-b", "1002"), lua.redis.hgetall(rtokens("l1")),
                "renewal changes no token");
    }

    @Test
    void renew_shorterLeaseThanTheKeysTtl_movesTheEndAndDoesNotShortenTheKeys() throws Exception {
        long since = lua.serverMillis();
        hold("l1", "owner-a", 1001, since + LEASE_MS, LONG_LEASE_MS);

        long before = lua.serverMillis();
        assertEquals(List.of(1L), renew(LEASE_MS / 2, new String[] {"l1"}, "owner-a", "1001"));
        long after = lua.serverMillis();

        assertLeaseEndsWithin("l1", "owner-a", before + LEASE_MS / 2, after + LEASE_MS / 2);
        lua.assertTtlSetSince(readers("l1"), LONG_LEASE_MS, since);
        lua.assertTtlSetSince(rtokens("l1"), LONG_LEASE_MS, since);
    }

    @Test
    void renew_wrongToken_returnsZeroAndChangesNothing() throws Exception {
        // The owner's newer read hold (token 1002); the watchdog still renews the older one.
        hold("l1", "owner-a", 1002);
        Double end = lua.redis.zscore(readers("l1"), "owner-a");

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001"));

        assertEquals(end, lua.redis.zscore(readers("l1"), "owner-a"));
        assertTtlNotReset(readers("l1"));
        assertTtlNotReset(rtokens("l1"));
    }

    @Test
    void renew_absentOwner_returnsZeroAndAddsNoLease() throws Exception {
        hold("l1", "owner-b", 1002);

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1002"));

        assertEquals(List.of("owner-b"), lua.redis.zrange(readers("l1"), 0, -1));
        assertTtlNotReset(readers("l1"));
        assertTtlNotReset(rtokens("l1"));
    }

    @Test
    void renew_absentKeys_returnZeroAndCreateNothing() throws Exception {
        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(readers("l1"), rtokens("l1")));
    }

    @Test
    void renew_tokenButNoLease_returnsZeroAndAddsNoLease() throws Exception {
        hold("l1", "owner-b", 1002);
        lua.redis.hset(rtokens("l1"), "owner-a", "1001");   // a token whose lease entry is gone

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001"));

        assertEquals(List.of("owner-b"), lua.redis.zrange(readers("l1"), 0, -1));
    }

    @Test
    void renew_leaseAlreadyRunOut_returnsZeroAndLeavesItForThePurge() throws Exception {
        hold("l1", "owner-a", 1001, 1, LEASE_MS);   // ended long ago, not yet purged

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001"));

        assertEquals(1.0, lua.redis.zscore(readers("l1"), "owner-a"), "the run-out lease is not revived");
        assertEquals(Map.of("owner-a", "1001"), lua.redis.hgetall(rtokens("l1")));
        assertTtlNotReset(readers("l1"));
        assertTtlNotReset(rtokens("l1"));
    }

    /* --------------- batches --------------- */

    @Test
    void renew_severalLocks_renewsOnlyTheLiveMatchingHolds() throws Exception {
        hold("live", "owner-a", 1001);
        hold("other", "owner-b", 1002);
        hold("stale", "owner-a", 1005);
        hold("ranout", "owner-a", 1003, 1, LEASE_MS);
        hold("live2", "owner-a", 1004);

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"live", "other", "stale", "missing", "ranout", "live2"},
                "owner-a", "1001", "owner-a", "1002", "owner-a", "1004", "owner-a", "1001", "owner-a", "1003",
                "owner-a", "1004");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 0L, 0L, 0L, 0L, 1L), reply);
        for (String lock : List.of("live", "live2")) {
            assertLeaseEndsWithin(lock, "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
            lua.assertTtlSetSince(readers(lock), LONG_LEASE_MS, before);
            lua.assertTtlSetSince(rtokens(lock), LONG_LEASE_MS, before);
        }
        for (String lock : List.of("other", "stale", "ranout")) {
            assertTtlNotReset(readers(lock));
            assertTtlNotReset(rtokens(lock));
        }
        assertEquals(List.of("owner-b"), lua.redis.zrange(readers("other"), 0, -1));
        assertEquals(0L, lua.redis.exists(readers("missing"), rtokens("missing")));
    }

    @Test
    void renew_readersKeyOfAForeignTypeInTheBatch_returnsZeroForItAndRenewsTheOthers() throws Exception {
        lua.redis.set(readers("foreign"), "not a zset");
        lua.redis.hset(rtokens("foreign"), "owner-a", "1001");
        hold("held", "owner-a", 1002);

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"foreign", "held"}, "owner-a", "1001", "owner-a", "1002");
        long after = lua.serverMillis();

        assertEquals(List.of(0L, 1L), reply);
        assertLeaseEndsWithin("held", "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals("not a zset", lua.redis.get(readers("foreign")));
        assertEquals(-1L, lua.redis.pttl(readers("foreign")), "the foreign key gets no TTL");
        assertEquals(-1L, lua.redis.pttl(rtokens("foreign")), "nor does its rtokens hash");
    }

    @Test
    void renew_rtokensKeyOfAForeignTypeInTheBatch_returnsZeroForItAndRenewsTheOthers() throws Exception {
        lua.redis.zadd(readers("foreign"), lua.serverMillis() + LEASE_MS, "owner-a");
        lua.redis.pexpire(readers("foreign"), LEASE_MS);
        lua.redis.rpush(rtokens("foreign"), "1001");
        hold("held", "owner-a", 1002);

        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"held", "foreign"}, "owner-a", "1002", "owner-a", "1001");

        assertEquals(List.of(1L, 0L), reply);
        assertTtlNotReset(readers("foreign"));
        assertEquals(List.of("1001"), lua.redis.lrange(rtokens("foreign"), 0, -1));
    }
}
