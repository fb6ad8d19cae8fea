package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rw-read-renew.lua} (batched: a readers zset and an rtokens hash per item, an owner and a
 * token per item) against a real server, on read holds written by hand. A read hold is renewed
 * only while its token matches and its lease is still running; otherwise, and for a key of a
 * foreign type, its item alone yields 0.
 */
@Tag("redis")
class RwReadRenewLuaTest extends LuaTestBase {

    /** The TTL the read holds start with: shorter than the renewal's, so a renewal shows in PTTL. */
    private static final long LEASE_MS = 60_000;

    /** The keys of the read-write lock named {@code name} within this test. */
    private RwFixture rw(String name) {
        return new RwFixture(lua, base + ":" + name);
    }

    /** A read hold whose lease ends with the keys, {@link #LEASE_MS} from now. */
    private void hold(String lock, String owner, long token) {
        rw(lock).readHold(owner, token, lua.serverMillis() + LEASE_MS, LEASE_MS);
    }

    /** Runs the script on the locks, with {@code ownersAndTokens} as owner, token, owner, token, ... */
    private List<Object> renew(long leaseMs, String[] locks, String... ownersAndTokens) throws Exception {
        return lua.runBatch(Script.RW_READ_RENEW, locks, name -> new String[] {rw(name).readers, rw(name).rtokens},
                leaseMs, ownersAndTokens);
    }

    /* --------------- renewal --------------- */

    @Test
    void renew_liveLeaseRightToken_movesItsEndAndTheKeysTtlsInServerTime() throws Exception {
        hold("l1", "owner-a", 1001);
        hold("l1", "owner-b", 1002);
        Double othersEnd = lua.redis.zscore(rw("l1").readers, "owner-b");

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001");
        long after = lua.serverMillis();

        assertEquals(List.of(1L), reply);
        lua.assertEndWithin(rw("l1").readers, "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals(othersEnd, lua.redis.zscore(rw("l1").readers, "owner-b"), "another reader's lease is not touched");
        lua.assertTtlSetSince(rw("l1").readers, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(rw("l1").rtokens, LONG_LEASE_MS, before);
        assertEquals(Map.of("owner-a", "1001", "owner-b", "1002"), lua.redis.hgetall(rw("l1").rtokens),
                "renewal changes no token");
    }

    @Test
    void renew_shorterLeaseThanTheKeysTtl_movesTheEndAndDoesNotShortenTheKeys() throws Exception {
        long since = lua.serverMillis();
        rw("l1").readHold("owner-a", 1001, since + LEASE_MS, LONG_LEASE_MS);

        long before = lua.serverMillis();
        assertEquals(List.of(1L), renew(LEASE_MS / 2, new String[] {"l1"}, "owner-a", "1001"));
        long after = lua.serverMillis();

        lua.assertEndWithin(rw("l1").readers, "owner-a", before + LEASE_MS / 2, after + LEASE_MS / 2);
        lua.assertTtlSetSince(rw("l1").readers, LONG_LEASE_MS, since);
        lua.assertTtlSetSince(rw("l1").rtokens, LONG_LEASE_MS, since);
    }

    @Test
    void renew_wrongToken_returnsZeroAndChangesNothing() throws Exception {
        // The owner's newer read hold (token 1002); the watchdog still renews the older one.
        hold("l1", "owner-a", 1002);
        Double end = lua.redis.zscore(rw("l1").readers, "owner-a");

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001"));

        assertEquals(end, lua.redis.zscore(rw("l1").readers, "owner-a"));
        lua.assertTtlAtMost(rw("l1").readers, LEASE_MS);
        lua.assertTtlAtMost(rw("l1").rtokens, LEASE_MS);
    }

    @Test
    void renew_absentOwner_returnsZeroAndAddsNoLease() throws Exception {
        hold("l1", "owner-b", 1002);

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1002"));

        assertEquals(List.of("owner-b"), lua.redis.zrange(rw("l1").readers, 0, -1));
        lua.assertTtlAtMost(rw("l1").readers, LEASE_MS);
        lua.assertTtlAtMost(rw("l1").rtokens, LEASE_MS);
    }

    @Test
    void renew_absentKeys_returnZeroAndCreateNothing() throws Exception {
        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001"));

        assertEquals(0L, lua.redis.exists(rw("l1").readers, rw("l1").rtokens));
    }

    @Test
    void renew_tokenButNoLease_returnsZeroAndAddsNoLease() throws Exception {
        hold("l1", "owner-b", 1002);
        lua.redis.hset(rw("l1").rtokens, "owner-a", "1001");   // a token whose lease entry is gone

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001"));

        assertEquals(List.of("owner-b"), lua.redis.zrange(rw("l1").readers, 0, -1));
    }

    @Test
    void renew_leaseAlreadyRunOut_returnsZeroAndLeavesItForThePurge() throws Exception {
        rw("l1").readHold("owner-a", 1001, 1, LEASE_MS);   // ended long ago, not yet purged

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"l1"}, "owner-a", "1001"));

        assertEquals(1.0, lua.redis.zscore(rw("l1").readers, "owner-a"), "the run-out lease is not revived");
        assertEquals(Map.of("owner-a", "1001"), lua.redis.hgetall(rw("l1").rtokens));
        lua.assertTtlAtMost(rw("l1").readers, LEASE_MS);
        lua.assertTtlAtMost(rw("l1").rtokens, LEASE_MS);
    }

    /* --------------- batches --------------- */

    @Test
    void renew_severalLocks_renewsOnlyTheLiveMatchingHolds() throws Exception {
        hold("live", "owner-a", 1001);
        hold("other", "owner-b", 1002);
        hold("stale", "owner-a", 1005);
        rw("ranout").readHold("owner-a", 1003, 1, LEASE_MS);
        hold("live2", "owner-a", 1004);

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"live", "other", "stale", "missing", "ranout", "live2"},
                "owner-a", "1001", "owner-a", "1002", "owner-a", "1004", "owner-a", "1001", "owner-a", "1003",
                "owner-a", "1004");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 0L, 0L, 0L, 0L, 1L), reply);
        for (String lock : List.of("live", "live2")) {
            lua.assertEndWithin(rw(lock).readers, "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
            lua.assertTtlSetSince(rw(lock).readers, LONG_LEASE_MS, before);
            lua.assertTtlSetSince(rw(lock).rtokens, LONG_LEASE_MS, before);
        }
        for (String lock : List.of("other", "stale", "ranout")) {
            lua.assertTtlAtMost(rw(lock).readers, LEASE_MS);
            lua.assertTtlAtMost(rw(lock).rtokens, LEASE_MS);
        }
        assertEquals(List.of("owner-b"), lua.redis.zrange(rw("other").readers, 0, -1));
        assertEquals(0L, lua.redis.exists(rw("missing").readers, rw("missing").rtokens));
    }

    @Test
    void renew_readersKeyOfAForeignTypeInTheBatch_returnsZeroForItAndRenewsTheOthers() throws Exception {
        lua.redis.set(rw("foreign").readers, "not a zset");
        lua.redis.hset(rw("foreign").rtokens, "owner-a", "1001");
        hold("held", "owner-a", 1002);

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"foreign", "held"}, "owner-a", "1001", "owner-a", "1002");
        long after = lua.serverMillis();

        assertEquals(List.of(0L, 1L), reply);
        lua.assertEndWithin(rw("held").readers, "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals("not a zset", lua.redis.get(rw("foreign").readers));
        assertEquals(-1L, lua.redis.pttl(rw("foreign").readers), "the foreign key gets no TTL");
        assertEquals(-1L, lua.redis.pttl(rw("foreign").rtokens), "nor does its rtokens hash");
    }

    @Test
    void renew_rtokensKeyOfAForeignTypeInTheBatch_returnsZeroForItAndRenewsTheOthers() throws Exception {
        lua.redis.zadd(rw("foreign").readers, lua.serverMillis() + LEASE_MS, "owner-a");
        lua.redis.pexpire(rw("foreign").readers, LEASE_MS);
        lua.redis.rpush(rw("foreign").rtokens, "1001");
        hold("held", "owner-a", 1002);

        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"held", "foreign"}, "owner-a", "1002", "owner-a", "1001");

        assertEquals(List.of(1L, 0L), reply);
        lua.assertTtlAtMost(rw("foreign").readers, LEASE_MS);
        assertEquals(List.of("1001"), lua.redis.lrange(rw("foreign").rtokens, 0, -1));
    }
}
