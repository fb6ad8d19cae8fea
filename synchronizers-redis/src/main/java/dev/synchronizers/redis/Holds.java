package dev.synchronizers.redis;

import dev.synchronizers.LockSnapshot;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * This JVM's holds of one lock, by thread id: the hold count, the owner string and token Redis
 * knows it by, and its lease. A hold stays here after it is lost, until its thread unlocks or
 * re-enters, so that {@code unlock()} can say it was lost.
 */
final class Holds {

    private final Map<Long, Hold> byThread = new ConcurrentHashMap<>();

    Hold get(long threadId) {
        return byThread.get(threadId);
    }

    void put(long threadId, Hold hold) {
        byThread.put(threadId, hold);
    }

    /** Drops {@code hold} if it is still {@code threadId}'s. */
    void remove(long threadId, Hold hold) {
        byThread.remove(threadId, hold);
    }

    boolean containsThread(long threadId) {
        return byThread.containsKey(threadId);
    }

    /** The holds now, for a force-unlock: only holds taken before it can be its victims. */
    List<Hold> snapshot() {
        return List.copyOf(byThread.values());
    }

    /** Whether a thread of this client holds the lock and its hold is not known to be over. */
    boolean anyLive() {
        for (Hold held : byThread.values()) {
            if (held.lease.endedBecause() == null) {
                return true;
            }
        }
        return false;
    }

    /** The sum of the hold counts, for {@code toString()}. */
    int count() {
        int count = 0;
        for (Hold held : byThread.values()) {
            count += held.count;
        }
        return count;
    }

    /**
     * What this client knows of a holder a snapshot found: renewed or fixed if it is the hold that
     * {@code threadId} has here ({@code same} says whether the snapshot's entry is that hold),
     * unknown otherwise.
     */
    LockSnapshot.Renewal renewalOf(long threadId, java.util.function.Predicate<Hold> same) {
        Hold own = byThread.get(threadId);
        if (own == null || !same.test(own)) {
            return LockSnapshot.Renewal.UNKNOWN;
        }
        return own.lease.fixed() ? LockSnapshot.Renewal.FIXED : LockSnapshot.Renewal.RENEWED;
    }

    /** One thread's hold: its count (touched only by the owning thread), owner, token and lease. */
    static final class Hold {
        /** The owner string the hold has in Redis. */
        final String owner;
        final long token;
        /** Whether it still keeps its lock object reachable; cleared once, when it ends. */
        final AtomicBoolean pinned = new AtomicBoolean(true);
        /** The hold's handle in the metrics. */
        final Object metric;
        /** Set once, when the hold is booked, before it is put in {@link Holds}. */
        volatile HoldLease lease;
        volatile int count = 1;

        Hold(String owner, long token, Object metric) {
            this.owner = owner;
            this.token = token;
            this.metric = metric;
        }
    }
}
