package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lettuce.core.ScoredValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-renew-place.lua} (batched, three keys per item: queue, places, asks) against a
 * real server, on queues and grant records written by hand: a place is renewed only while its
 * waiter is queued, never once it is granted. Place ends are checked against the server's clock
 * read around the call.
 */
@Tag("redis")
class SemaphoreRenewPlaceLuaTest extends LuaTestBase {

    /** The place lease the queues start with: shorter than the renewal's, so a renewal shows. */
    private static final long PLACE_MS = 30_000;

    /** The keys of the semaphore under {@code name}. */
    private SemaphoreFixture sem(String name) {
        return new SemaphoreFixture(lua, name);
    }

    /** Queues the waiters of a semaphore in order, each asking for one permit with a place ending {@link #PLACE_MS} from now; returns that end. */
    private long queued(String name, String... waiters) {
        long end = lua.serverMillis() + PLACE_MS;
        sem(name).asking(1, end, waiters);
        expireIn(name, PLACE_MS);
        return end;
    }

    private void expireIn(String name, long ttlMs) {
        for (String key : List.of(sem(name).queue, sem(name).places, sem(name).asks)) {
            lua.redis.pexpire(key, ttlMs);
        }
    }

    /** Runs the script on the semaphores' queues, one waiter each. */
    private List<Object> renewPlace(long placeMs, String[] names, String... waiters) throws Exception {
        return lua.runBatch(Script.SEMAPHORE_RENEW_PLACE, names,
                name -> new String[] {sem(name).queue, sem(name).places, sem(name).asks}, placeMs, waiters);
    }

    /* --------------- renewal --------------- */

    @Test
    void renewPlace_oneQueuedOneNot_renewsOnlyTheQueuedOne() throws Exception {
        String first = base + ":1";
        String second = base + ":2";
        queued(first, "c1:1:1", "c2:1:1");
        long otherEnd = queued(second, "c3:1:1");

        long before = lua.serverMillis();
        List<Object> reply = renewPlace(LONG_LEASE_MS, new String[] {first, second}, "c2:1:1", "c9:1:1");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 0L), reply);
        lua.assertEndWithin(sem(first).places, "c2:1:1", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals(List.of("c1:1:1", "c2:1:1"), sem(first).queueOrder(), "the order is kept");
        assertEquals(Map.of("c1:1:1", "1", "c2:1:1", "1"), sem(first).asks(), "the asks are kept");
        lua.assertTtlSetSince(sem(first).queue, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(sem(first).places, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(sem(first).asks, LONG_LEASE_MS, before);

        assertNull(lua.redis.zscore(sem(second).places, "c9:1:1"), "no place for a waiter not queued");
        assertEquals(List.of("c3:1:1"), sem(second).queueOrder());
        assertEquals(List.of(ScoredValue.just(otherEnd, "c3:1:1")), sem(second).placeEnds());
        lua.assertTtlAtMost(sem(second).queue, PLACE_MS);   // the other queue's TTLs are not touched
        lua.assertTtlAtMost(sem(second).asks, PLACE_MS);
    }

    @Test
    void renewPlace_sameQueueTwice_renewsBoth() throws Exception {
        String name = base + ":1";
        queued(name, "c1:1:1", "c2:1:1");

        long before = lua.serverMillis();
        List<Object> reply = renewPlace(LONG_LEASE_MS, new String[] {name, name}, "c1:1:1", "c2:1:1");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 1L), reply);
        for (String waiter : List.of("c1:1:1", "c2:1:1")) {
            lua.assertEndWithin(sem(name).places, waiter, before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        }
    }

    @Test
    void renewPlace_grantedWaiter_returnsZeroAndLeavesItsRecordAsItWas() throws Exception {
        String name = base + ":1";
        long end = queued(name, "c2:1:1");
        sem(name).granted("c1:1:1", 2, end);   // served from the line, not yet claimed

        assertEquals(List.of(0L), renewPlace(LONG_LEASE_MS, new String[] {name}, "c1:1:1"));

        assertEquals(List.of(ScoredValue.just(end, "c1:1:1"), ScoredValue.just(end, "c2:1:1")),
                sem(name).placeEnds(), "the grant record keeps its end");
        assertEquals(Map.of("c1:1:1", "2", "c2:1:1", "1"), sem(name).asks());
        assertEquals(List.of("c2:1:1"), sem(name).queueOrder(), "it is not queued again");
        lua.assertTtlAtMost(sem(name).places, PLACE_MS);
        lua.assertTtlAtMost(sem(name).asks, PLACE_MS);
    }

    @Test
    void renewPlace_waiterNotQueuedAnywhere_createsNoKey() throws Exception {
        String name = base + ":1";

        assertEquals(List.of(0L), renewPlace(LONG_LEASE_MS, new String[] {name}, "c1:1:1"));

        assertEquals(0L, lua.redis.exists(sem(name).queue, sem(name).places, sem(name).asks));
    }

    /* --------------- items that cannot be renewed --------------- */

    /**
     * One item whose queue or places key holds another Redis type is that item's loss alone: the
     * other items of the batch are renewed, and the foreign keys are left as they were.
     */
    @Test
    void renewPlace_itemWithKeysOfAnotherType_reportsThatItemLostAndRenewsTheOthers() throws Exception {
        String stringQueue = base + ":1";
        String fine = base + ":2";
        String stringPlaces = base + ":3";
        lua.redis.set(sem(stringQueue).queue, "not a queue");
        queued(fine, "c2:1:1");
        lua.redis.zadd(sem(stringPlaces).queue, 1, "c3:1:1");
        lua.redis.set(sem(stringPlaces).places, "not places");

        long before = lua.serverMillis();
        List<Object> reply = renewPlace(LONG_LEASE_MS, new String[] {stringQueue, fine, stringPlaces},
                "c1:1:1", "c2:1:1", "c3:1:1");
        long after = lua.serverMillis();

        assertEquals(List.of(0L, 1L, 0L), reply);
        lua.assertEndWithin(sem(fine).places, "c2:1:1", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals("not a queue", lua.redis.get(sem(stringQueue).queue));
        assertEquals(0L, lua.redis.exists(sem(stringQueue).places), "no place made beside a foreign queue");
        assertEquals("not places", lua.redis.get(sem(stringPlaces).places));
        assertEquals(-1L, lua.redis.pttl(sem(stringPlaces).queue), "the item's keys are not touched");
    }

    /**
     * A place whose lease ran out but that no script has purged yet is not brought back: its
     * waiter stopped renewing it and may be dead, and renewing it would give it back its old
     * position at the front.
     */
    @Test
    void renewPlace_placeExpiredButNotPurged_reportsItLostAndLeavesItExpired() throws Exception {
        String name = base + ":1";
        long ended = lua.serverMillis() - 1_000;
        sem(name).asking(1, ended, "c1:1:1", "c2:1:1");
        expireIn(name, PLACE_MS);

        assertEquals(List.of(0L), renewPlace(LONG_LEASE_MS, new String[] {name}, "c1:1:1"));

        assertEquals(List.of(ScoredValue.just(ended, "c1:1:1"), ScoredValue.just(ended, "c2:1:1")),
                sem(name).placeEnds(), "the place keeps its end");
        lua.assertTtlAtMost(sem(name).places, PLACE_MS);
        lua.assertTtlAtMost(sem(name).queue, PLACE_MS);
    }

    /** A queue member without a place (a half-written queue) has no lease to renew: it gets none. */
    @Test
    void renewPlace_queuedWithoutPlace_reportsItLostAndMakesNoPlace() throws Exception {
        String name = base + ":1";
        queued(name, "c1:1:1");
        lua.redis.zadd(sem(name).queue, 2, "c2:1:1");

        assertEquals(List.of(0L), renewPlace(LONG_LEASE_MS, new String[] {name}, "c2:1:1"));

        assertNull(lua.redis.zscore(sem(name).places, "c2:1:1"));
        lua.assertTtlAtMost(sem(name).places, PLACE_MS);
    }

    @Test
    void renewPlace_shorterThanTheKeysTtl_doesNotShortenTheKeys() throws Exception {
        String name = base + ":1";
        queued(name, "c1:1:1");
        long before = lua.serverMillis();
        expireIn(name, LONG_LEASE_MS);

        assertEquals(List.of(1L), renewPlace(PLACE_MS, new String[] {name}, "c1:1:1"));

        lua.assertTtlSetSince(sem(name).queue, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(sem(name).places, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(sem(name).asks, LONG_LEASE_MS, before);
    }
}
