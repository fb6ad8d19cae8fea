package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link AcquireLuaContract} for the scripts that queue a refused owner, {@code fair-lock-acquire.lua}
 * ({@link FairLockAcquireLuaTest}), {@code rw-write-acquire.lua} ({@link RwWriteAcquireLuaTest}) and
 * {@code lock-acquire-waiting.lua} ({@link LockAcquireWaitingLuaTest}, the non-fair lock's line):
 * their attempts also carry the lease of the place in the queue, and a queued owner that tries again
 * keeps its position. The rest of their queueing differs and is tested in each class.
 */
abstract class QueueingAcquireLuaContract extends AcquireLuaContract {

    /** The place lease of most attempts: shorter than {@link LuaHarness#LONG_LEASE_MS}. */
    static final long PLACE_MS = 30_000;

    QueueingAcquireLuaContract(Script script) {
        this(script, false);
    }

    QueueingAcquireLuaContract(Script script, boolean marksWaiter) {
        super(script, marksWaiter);
    }

    /** The queue a refused owner joins, with its places. */
    abstract QueueFixture waiting();

    /** Makes the lock held by another owner, with a lease of {@link #HOLDER_LEASE_MS}. */
    abstract void heldByAnother() throws Exception;

    @Override
    String[] args(String owner, long leaseMs) {
        return args(owner, leaseMs, PLACE_MS);
    }

    /** The script's arguments for one attempt with a place lease of {@code placeMs}. */
    String[] args(String owner, long leaseMs, long placeMs) {
        return new String[] {owner, Long.toString(leaseMs), Long.toString(placeMs)};
    }

    List<Object> acquire(String owner, long leaseMs, long placeMs) throws Exception {
        return lua.run(script, keys(), args(owner, leaseMs, placeMs));
    }

    /** Tries for an owner that must be queued (the reply's first element is 0); returns the reply. */
    List<Object> queuedAttempt(String owner, long placeMs) throws Exception {
        List<Object> reply = acquire(owner, HOLDER_LEASE_MS, placeMs);
        assertEquals(0L, reply.get(0), () -> owner + " should be queued, replied " + reply);
        return reply;
    }

    /* --------------- queued again --------------- */

    @Test
    void queue_queuedOwnerTriesAgain_keepsItsPositionAndRefreshesItsPlace() throws Exception {
        heldByAnother();
        queuedAttempt("owner-a", PLACE_MS);
        queuedAttempt("owner-b", PLACE_MS);
        Double arrival = lua.redis.zscore(waiting().queue, "owner-a");

        // A longer place lease on the retry: the new end cannot be mistaken for the old one.
        long before = lua.serverMillis();
        queuedAttempt("owner-a", LONG_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(List.of("owner-a", "owner-b"), waiting().queueOrder());
        assertEquals(arrival, lua.redis.zscore(waiting().queue, "owner-a"), "the arrival order is kept");
        lua.assertEndWithin(waiting().places, "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        lua.assertTtlSetSince(waiting().queue, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(waiting().places, LONG_LEASE_MS, before);
    }

    @Test
    void queue_shorterPlaceLater_doesNotShortenTheKeys() throws Exception {
        heldByAnother();
        long before = lua.serverMillis();
        queuedAttempt("owner-a", LONG_LEASE_MS);

        queuedAttempt("owner-b", PLACE_MS);

        // The keys outlive owner-a's longer place.
        lua.assertTtlSetSince(waiting().queue, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(waiting().places, LONG_LEASE_MS, before);
    }
}
