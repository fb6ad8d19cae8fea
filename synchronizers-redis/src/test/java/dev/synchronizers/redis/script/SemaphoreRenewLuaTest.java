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
 * {@code semaphore-renew.lua} (batched: a holds hash and a leases zset per item, a client per
 * item) against a real server, on holdings written by hand. A lease is renewed only while it is
 * still running; one that ran out, an absent client or a key of a foreign type yields 0 for its
 * item alone.
 */
@Tag("redis")
class SemaphoreRenewLuaTest {

    /** The TTL the holdings start with: shorter than the renewal's, so a renewal shows in PTTL. */
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

    private String holds(String semaphore) {
        return base + ":" + semaphore + ":holds";
    }

    private String leases(String semaphore) {
        return base + ":" + semaphore + ":leases";
    }

    /** Books permits of a semaphore for a client whose lease ends at {@code leaseEndMs}; keys live {@code ttlMs}. */
    private void hold(String semaphore, String client, long permits, long leaseEndMs, long ttlMs) {
        lua.redis.hincrby(holds(semaphore), client, permits);
        lua.redis.hincrby(holds(semaphore), ":sum", permits);
        lua.redis.zadd(leases(semaphore), leaseEndMs, client);
        lua.redis.pexpire(holds(semaphore), ttlMs);
        lua.redis.pexpire(leases(semaphore), ttlMs);
    }

    /** Books permits whose lease ends with the keys, {@link #LEASE_MS} from now. */
    private void hold(String semaphore, String client, long permits) {
        hold(semaphore, client, permits, lua.serverMillis() + LEASE_MS, LEASE_MS);
    }

    /** Runs the script on the semaphores, one client each. */
    private List<Object> renew(long leaseMs, String[] semaphores, String... clients) throws Exception {
        String[] keys = new String[semaphores.length * 2];
        for (int i = 0; i < semaphores.length; i++) {
            keys[2 * i] = holds(semaphores[i]);
            keys[2 * i + 1] = leases(semaphores[i]);
        }
        String[] args = new String[clients.length + 1];
        args[0] = Long.toString(leaseMs);
        System.arraycopy(clients, 0, args, 1, clients.length);
        return lua.run(Script.SEMAPHORE_RENEW, keys, args);
    }

    private void assertLeaseEndsWithin(String semaphore, String client, long fromMs, long toMs) {
        Double end = lua.redis.zscore(leases(semaphore), client);
        assertTrue(end != null && end >= fromMs && end <= toMs,
                () -> client + "'s lease ends at " + end + ", expected within [" + fromMs + ", " + toMs + "]");
    }

    private void assertTtlNotReset(String key) {
        long pttl = lua.redis.pttl(key);
        assertTrue(pttl > 0 && pttl <= LEASE_MS, () -> key + " PTTL " + pttl + " was touched");
    }

    /* --------------- renewal --------------- */

    @Test
    void renew_liveLease_movesItsEndAndTheKeysTtlsInServerTime() throws Exception {
        hold("s1", "c1", 2);
        hold("s1", "c2", 1);
        Double othersEnd = lua.redis.zscore(leases("s1"), "c2");

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"s1"}, "c1");
        long after = lua.serverMillis();

        assertEquals(List.of(1L), reply);
        assertLeaseEndsWithin("s1", "c1", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals(othersEnd, lua.redis.zscore(leases("s1"), "c2"), "another client's lease is not touched");
        lua.assertTtlSetSince(holds("s1"), LONG_LEASE_MS, before);
        lua.assertTtlSetSince(leases("s1"), LONG_LEASE_MS, before);
        assertEquals(Map.of("c1", "2", "c2", "1", ":sum", "3"), lua.redis.hgetall(holds("s1")),
                "renewal changes no holding");
    }

    @Test
    void renew_shorterLeaseThanTheKeysTtl_movesTheEndAndDoesNotShortenTheKeys() throws Exception {
        long since = lua.serverMillis();
        hold("s1", "c1", 1, since + LEASE_MS, LONG_LEASE_MS);

        long before = lua.serverMillis();
        assertEquals(List.of(1L), renew(LEASE_MS / 2, new String[] {"s1"}, "c1"));
        long after = lua.serverMillis();

        assertLeaseEndsWithin("s1", "c1", before + LEASE_MS / 2, after + LEASE_MS / 2);
        lua.assertTtlSetSince(holds("s1"), LONG_LEASE_MS, since);
        lua.assertTtlSetSince(leases("s1"), LONG_LEASE_MS, since);
    }

    @Test
    void renew_absentClient_returnsZeroAndAddsNoLease() throws Exception {
        hold("s1", "c2", 1);

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"s1"}, "c1"));

        assertEquals(List.of("c2"), lua.redis.zrange(leases("s1"), 0, -1));
        assertTtlNotReset(holds("s1"));
        assertTtlNotReset(leases("s1"));
    }

    @Test
    void renew_absentKeys_returnZeroAndCreateNothing() throws Exception {
        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"s1"}, "c1"));

        assertEquals(0L, lua.redis.exists(holds("s1"), leases("s1")));
    }

    @Test
    void renew_leaseAlreadyRunOut_returnsZeroAndLeavesItForThePurge() throws Exception {
        hold("s1", "c1", 2, 1, LEASE_MS);   // ended long ago, not yet purged

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"s1"}, "c1"));

        assertEquals(1.0, lua.redis.zscore(leases("s1"), "c1"), "the run-out lease is not revived");
        assertEquals(Map.of("c1", "2", ":sum", "2"), lua.redis.hgetall(holds("s1")));
        assertTtlNotReset(holds("s1"));
        assertTtlNotReset(leases("s1"));
    }

    /* --------------- batches --------------- */

    @Test
    void renew_severalSemaphores_renewsOnlyTheLiveLeases() throws Exception {
        hold("live", "c1", 1);
        hold("other", "c2", 1);
        hold("ranout", "c1", 1, 1, LEASE_MS);
        hold("live2", "c1", 3);

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"live", "other", "missing", "ranout", "live2"},
                "c1", "c1", "c1", "c1", "c1");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 0L, 0L, 0L, 1L), reply);
        for (String semaphore : List.of("live", "live2")) {
            assertLeaseEndsWithin(semaphore, "c1", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
            lua.assertTtlSetSince(holds(semaphore), LONG_LEASE_MS, before);
            lua.assertTtlSetSince(leases(semaphore), LONG_LEASE_MS, before);
        }
        for (String semaphore : List.of("other", "ranout")) {
            assertTtlNotReset(holds(semaphore));
            assertTtlNotReset(leases(semaphore));
        }
        assertEquals(List.of("c2"), lua.redis.zrange(leases("other"), 0, -1));
        assertEquals(0L, lua.redis.exists(holds("missing"), leases("missing")));
    }

    @Test
    void renew_leasesKeyOfAForeignTypeInTheBatch_returnsZeroForItAndRenewsTheOthers() throws Exception {
        lua.redis.set(leases("foreign"), "not a zset");
        hold("held", "c1", 1);

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"foreign", "held"}, "c1", "c1");
        long after = lua.serverMillis();

        assertEquals(List.of(0L, 1L), reply);
        assertLeaseEndsWithin("held", "c1", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        lua.assertTtlSetSince(leases("held"), LONG_LEASE_MS, before);
        assertEquals("not a zset", lua.redis.get(leases("foreign")));
        assertEquals(-1L, lua.redis.pttl(leases("foreign")), "the foreign key gets no TTL");
        assertEquals(0L, lua.redis.exists(holds("foreign")), "no holds hash is created");
    }
}
