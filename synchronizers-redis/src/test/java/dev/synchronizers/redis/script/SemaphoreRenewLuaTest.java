package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-renew.lua} (batched: a holds hash and a leases zset per item, a client per
 * item) against a real server, on holdings written by hand. A lease is renewed only while it is
 * still running; one that ran out, an absent client or a key of a foreign type yields 0 for its
 * item alone.
 */
@Tag("redis")
class SemaphoreRenewLuaTest extends LuaTestBase {

    /** The TTL the holdings start with: shorter than the renewal's, so a renewal shows in PTTL. */
    private static final long LEASE_MS = 60_000;

    /** The keys of the semaphore named {@code name} within this test. */
    private SemaphoreFixture sem(String name) {
        return new SemaphoreFixture(lua, base + ":" + name);
    }

    /** Books permits whose lease ends with the keys, {@link #LEASE_MS} from now. */
    private void hold(String semaphore, String client, long permits) {
        sem(semaphore).hold(client, permits, lua.serverMillis() + LEASE_MS, LEASE_MS);
    }

    /** Runs the script on the semaphores, one client each. */
    private List<Object> renew(long leaseMs, String[] semaphores, String... clients) throws Exception {
        return lua.runBatch(Script.SEMAPHORE_RENEW, semaphores,
                name -> new String[] {sem(name).holds, sem(name).leases}, leaseMs, clients);
    }

    /* --------------- renewal --------------- */

    @Test
    void renew_liveLease_movesItsEndAndTheKeysTtlsInServerTime() throws Exception {
        hold("s1", "c1", 2);
        hold("s1", "c2", 1);
        Double othersEnd = lua.redis.zscore(sem("s1").leases, "c2");

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"s1"}, "c1");
        long after = lua.serverMillis();

        assertEquals(List.of(1L), reply);
        lua.assertEndWithin(sem("s1").leases, "c1", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals(othersEnd, lua.redis.zscore(sem("s1").leases, "c2"), "another client's lease is not touched");
        lua.assertTtlSetSince(sem("s1").holds, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(sem("s1").leases, LONG_LEASE_MS, before);
        assertEquals(Map.of("c1", "2", "c2", "1", ":sum", "3"), lua.redis.hgetall(sem("s1").holds),
                "renewal changes no holding");
    }

    @Test
    void renew_shorterLeaseThanTheKeysTtl_movesTheEndAndDoesNotShortenTheKeys() throws Exception {
        long since = lua.serverMillis();
        sem("s1").hold("c1", 1, since + LEASE_MS, LONG_LEASE_MS);

        long before = lua.serverMillis();
        assertEquals(List.of(1L), renew(LEASE_MS / 2, new String[] {"s1"}, "c1"));
        long after = lua.serverMillis();

        lua.assertEndWithin(sem("s1").leases, "c1", before + LEASE_MS / 2, after + LEASE_MS / 2);
        lua.assertTtlSetSince(sem("s1").holds, LONG_LEASE_MS, since);
        lua.assertTtlSetSince(sem("s1").leases, LONG_LEASE_MS, since);
    }

    @Test
    void renew_absentClient_returnsZeroAndAddsNoLease() throws Exception {
        hold("s1", "c2", 1);

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"s1"}, "c1"));

        assertEquals(List.of("c2"), lua.redis.zrange(sem("s1").leases, 0, -1));
        lua.assertTtlAtMost(sem("s1").holds, LEASE_MS);
        lua.assertTtlAtMost(sem("s1").leases, LEASE_MS);
    }

    @Test
    void renew_absentKeys_returnZeroAndCreateNothing() throws Exception {
        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"s1"}, "c1"));

        assertEquals(0L, lua.redis.exists(sem("s1").holds, sem("s1").leases));
    }

    @Test
    void renew_leaseAlreadyRunOut_returnsZeroAndLeavesItForThePurge() throws Exception {
        sem("s1").hold("c1", 2, 1, LEASE_MS);   // ended long ago, not yet purged

        assertEquals(List.of(0L), renew(LONG_LEASE_MS, new String[] {"s1"}, "c1"));

        assertEquals(1.0, lua.redis.zscore(sem("s1").leases, "c1"), "the run-out lease is not revived");
        assertEquals(Map.of("c1", "2", ":sum", "2"), lua.redis.hgetall(sem("s1").holds));
        lua.assertTtlAtMost(sem("s1").holds, LEASE_MS);
        lua.assertTtlAtMost(sem("s1").leases, LEASE_MS);
    }

    /* --------------- batches --------------- */

    @Test
    void renew_severalSemaphores_renewsOnlyTheLiveLeases() throws Exception {
        hold("live", "c1", 1);
        hold("other", "c2", 1);
        sem("ranout").hold("c1", 1, 1, LEASE_MS);
        hold("live2", "c1", 3);

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"live", "other", "missing", "ranout", "live2"},
                "c1", "c1", "c1", "c1", "c1");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 0L, 0L, 0L, 1L), reply);
        for (String semaphore : List.of("live", "live2")) {
            lua.assertEndWithin(sem(semaphore).leases, "c1", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
            lua.assertTtlSetSince(sem(semaphore).holds, LONG_LEASE_MS, before);
            lua.assertTtlSetSince(sem(semaphore).leases, LONG_LEASE_MS, before);
        }
        for (String semaphore : List.of("other", "ranout")) {
            lua.assertTtlAtMost(sem(semaphore).holds, LEASE_MS);
            lua.assertTtlAtMost(sem(semaphore).leases, LEASE_MS);
        }
        assertEquals(List.of("c2"), lua.redis.zrange(sem("other").leases, 0, -1));
        assertEquals(0L, lua.redis.exists(sem("missing").holds, sem("missing").leases));
    }

    @Test
    void renew_leasesKeyOfAForeignTypeInTheBatch_returnsZeroForItAndRenewsTheOthers() throws Exception {
        lua.redis.set(sem("foreign").leases, "not a zset");
        hold("held", "c1", 1);

        long before = lua.serverMillis();
        List<Object> reply = renew(LONG_LEASE_MS, new String[] {"foreign", "held"}, "c1", "c1");
        long after = lua.serverMillis();

        assertEquals(List.of(0L, 1L), reply);
        lua.assertEndWithin(sem("held").leases, "c1", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        lua.assertTtlSetSince(sem("held").leases, LONG_LEASE_MS, before);
        assertEquals("not a zset", lua.redis.get(sem("foreign").leases));
        assertEquals(-1L, lua.redis.pttl(sem("foreign").leases), "the foreign key gets no TTL");
        assertEquals(0L, lua.redis.exists(sem("foreign").holds), "no holds hash is created");
    }
}
