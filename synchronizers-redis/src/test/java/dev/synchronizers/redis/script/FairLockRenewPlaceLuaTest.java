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
 * {@code fair-lock-renew-place.lua} (batched, two keys per item) against a real server, on queues
 * written by hand. Place ends are checked against the server's clock read around the call.
 */
@Tag("redis")
class FairLockRenewPlaceLuaTest extends LuaTestBase {

    /** The place lease the queues start with: shorter than the renewal's, so a renewal shows. */
    private static final long PLACE_MS = 30_000;

    /** The keys of the fair lock {@code lock}. */
    private FairFixture fair(String lock) {
        return new FairFixture(lua, lock);
    }

    /** Queues the owners of a lock in order, each with a place ending {@link #PLACE_MS} from now; returns that end. */
    private long queued(String lock, String... owners) {
        long end = lua.serverMillis() + PLACE_MS;
        fair(lock).queued(end, owners);
        lua.redis.pexpire(fair(lock).queue, PLACE_MS);
        lua.redis.pexpire(fair(lock).places, PLACE_MS);
        return end;
    }

    /** Runs the script on the locks' queues, one owner each. */
    private List<Object> renewPlace(long placeMs, String[] locks, String... owners) throws Exception {
        return lua.runBatch(Script.FAIR_LOCK_RENEW_PLACE, locks,
                lock -> new String[] {fair(lock).queue, fair(lock).places}, placeMs, owners);
    }

    /* --------------- renewal --------------- */

    @Test
    void renewPlace_oneQueuedOneNot_renewsOnlyTheQueuedOne() throws Exception {
        String first = base + ":1";
        String second = base + ":2";
        queued(first, "owner-a", "owner-b");
        long otherEnd = queued(second, "owner-x");

        long before = lua.serverMillis();
        List<Object> reply = renewPlace(LONG_LEASE_MS, new String[] {first, second}, "owner-b", "owner-z");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 0L), reply);
        lua.assertEndWithin(fair(first).places, "owner-b", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals(List.of("owner-a", "owner-b"), fair(first).queueOrder(), "the order is kept");
        lua.assertTtlSetSince(fair(first).queue, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(fair(first).places, LONG_LEASE_MS, before);

        assertNull(lua.redis.zscore(fair(second).places, "owner-z"), "no place for an owner not queued");
        assertEquals(List.of("owner-x"), fair(second).queueOrder());
        assertEquals(List.of(ScoredValue.just(otherEnd, "owner-x")), fair(second).placeEnds());
        lua.assertTtlAtMost(fair(second).queue, PLACE_MS);   // the other queue's TTL is not touched
    }

    @Test
    void renewPlace_sameQueueTwice_renewsBoth() throws Exception {
        String lock = base + ":1";
        queued(lock, "owner-a", "owner-b");

        long before = lua.serverMillis();
        List<Object> reply = renewPlace(LONG_LEASE_MS, new String[] {lock, lock}, "owner-a", "owner-b");
        long after = lua.serverMillis();

        assertEquals(List.of(1L, 1L), reply);
        for (String owner : List.of("owner-a", "owner-b")) {
            lua.assertEndWithin(fair(lock).places, owner, before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        }
    }

    @Test
    void renewPlace_ownerNotQueuedAnywhere_createsNoKey() throws Exception {
        String lock = base + ":1";

        assertEquals(List.of(0L), renewPlace(LONG_LEASE_MS, new String[] {lock}, "owner-a"));

        assertEquals(0L, lua.redis.exists(fair(lock).queue, fair(lock).places));
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
        String hashPlaces = base + ":3";
        lua.redis.set(fair(stringQueue).queue, "not a queue");
        queued(fine, "owner-b");
        lua.redis.zadd(fair(hashPlaces).queue, 1, "owner-c");
        lua.redis.hset(fair(hashPlaces).places, "owner-c", "not a place");

        long before = lua.serverMillis();
        List<Object> reply = renewPlace(LONG_LEASE_MS, new String[] {stringQueue, fine, hashPlaces},
                "owner-a", "owner-b", "owner-c");
        long after = lua.serverMillis();

        assertEquals(List.of(0L, 1L, 0L), reply);
        lua.assertEndWithin(fair(fine).places, "owner-b", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals("not a queue", lua.redis.get(fair(stringQueue).queue));
        assertEquals(0L, lua.redis.exists(fair(stringQueue).places), "no place made beside a foreign queue");
        assertEquals(Map.of("owner-c", "not a place"), lua.redis.hgetall(fair(hashPlaces).places));
        assertEquals(-1L, lua.redis.pttl(fair(hashPlaces).queue), "the item's keys are not touched");
    }

    /**
     * A place whose lease ran out but that no script has purged yet is not brought back: its
     * waiter stopped renewing it and may be dead, and renewing it would give it back its old
     * position at the front.
     */
    @Test
    void renewPlace_placeExpiredButNotPurged_reportsItLostAndLeavesItExpired() throws Exception {
        String lock = base + ":1";
        long ended = lua.serverMillis() - 1_000;
        fair(lock).queued(ended, "owner-a", "owner-b");
        lua.redis.pexpire(fair(lock).queue, PLACE_MS);
        lua.redis.pexpire(fair(lock).places, PLACE_MS);

        assertEquals(List.of(0L), renewPlace(LONG_LEASE_MS, new String[] {lock}, "owner-a"));

        assertEquals(List.of(ScoredValue.just(ended, "owner-a"), ScoredValue.just(ended, "owner-b")),
                fair(lock).placeEnds(), "the place keeps its end");
        lua.assertTtlAtMost(fair(lock).places, PLACE_MS);
        lua.assertTtlAtMost(fair(lock).queue, PLACE_MS);
    }

    /** A queue member without a place (a half-written queue) has no lease to renew: it gets none. */
    @Test
    void renewPlace_queuedWithoutPlace_reportsItLostAndMakesNoPlace() throws Exception {
        String lock = base + ":1";
        queued(lock, "owner-a");
        lua.redis.zadd(fair(lock).queue, 2, "owner-b");

        assertEquals(List.of(0L), renewPlace(LONG_LEASE_MS, new String[] {lock}, "owner-b"));

        assertNull(lua.redis.zscore(fair(lock).places, "owner-b"));
        lua.assertTtlAtMost(fair(lock).places, PLACE_MS);
    }

    @Test
    void renewPlace_shorterThanTheKeysTtl_doesNotShortenTheKeys() throws Exception {
        String lock = base + ":1";
        queued(lock, "owner-a");
        long before = lua.serverMillis();
        lua.redis.pexpire(fair(lock).queue, LONG_LEASE_MS);
        lua.redis.pexpire(fair(lock).places, LONG_LEASE_MS);

        assertEquals(List.of(1L), renewPlace(PLACE_MS, new String[] {lock}, "owner-a"));

        lua.assertTtlSetSince(fair(lock).queue, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(fair(lock).places, LONG_LEASE_MS, before);
    }
}
