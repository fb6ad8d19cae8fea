package dev.synchronizers.redis.lock;

import dev.synchronizers.LockSnapshot;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * This JVM's holds of one lock: by thread id, and those of handles. A hold has its count, the owner
 * string and token Redis knows it by, and its lease. A thread's hold stays here after it is lost,
 * until its thread unlocks or re-enters, so that {@code unlock()} can say it was lost; a handle's
 * leaves when it ends, the handle itself remembering why.
 */
public final class Holds {

    private final Map<Long, Hold> byThread = new ConcurrentHashMap<>();
    /** The holds of handles, which no thread owns; a handle's hold leaves when it ends. */
    private final Set<Hold> ofHandles = ConcurrentHashMap.newKeySet();

    public Hold get(long threadId) {
        return byThread.get(threadId);
    }

    void put(long threadId, Hold hold) {
        byThread.put(threadId, hold);
    }

    /** Drops {@code hold} if it is still {@code threadId}'s. */
    void remove(long threadId, Hold hold) {
        byThread.remove(threadId, hold);
    }

    void addHandle(Hold hold) {
        ofHandles.add(hold);
    }

    void removeHandle(Hold hold) {
        ofHandles.remove(hold);
    }

    boolean containsThread(long threadId) {
        return byThread.containsKey(threadId);
    }

    /** The holds now, of threads and of handles, for a force-unlock: only holds taken before it can be its victims. */
    public List<Hold> snapshot() {
        List<Hold> all = new ArrayList<>(byThread.values());
        all.addAll(ofHandles);
        return all;
    }

    /** Whether a thread or a handle of this client holds the lock and its hold is not known to be over. */
    public boolean anyLive() {
        for (Hold held : byThread.values()) {
            if (held.lease.endedBecause() == null) {
                return true;
            }
        }
        for (Hold held : ofHandles) {
            if (held.lease.endedBecause() == null) {
                return true;
            }
        }
        return false;
    }

    /** The sum of the hold counts, a handle's hold counting one, for {@code toString()}. */
    int count() {
        int count = ofHandles.size();
        for (Hold held : byThread.values()) {
            count += held.count;
        }
        return count;
    }

    /**
     * What this client knows of a holder a snapshot found: renewed or fixed if it is the hold that
     * thread {@code threadId} or a handle has here ({@code same} says whether the snapshot's entry
     * is that hold), unknown otherwise.
     */
    LockSnapshot.Renewal renewalOf(long threadId, Predicate<Hold> same) {
        Hold own = byThread.get(threadId);
        if (own == null || !same.test(own)) {
            own = null;
            for (Hold held : ofHandles) {
                if (same.test(held)) {
                    own = held;
                }
            }
        }
        if (own == null) {
            return LockSnapshot.Renewal.UNKNOWN;
        }
        return own.lease.fixed() ? LockSnapshot.Renewal.FIXED : LockSnapshot.Renewal.RENEWED;
    }

    /** One thread's hold: its count (touched only by the owning thread), owner, token and lease. */
    public static final class Hold {
        /** The owner string the hold has in Redis. */
        public final String owner;
        /** The hold's fencing token. */
        public final long token;
        /**
         * What Redis has as the value of {@link #owner} while the hold lasts, which scripts that
         * check a hold compare (conditions, verification): the fencing token, except for a hold
         * taken from this client's lock cache, whose owner is the cache's and whose value is the
         * cache's base token (docs/design/lock-caching.md).
         */
        public final String checkToken;
        /** Whether it still keeps its lock object reachable; cleared once, when it ends. */
        final AtomicBoolean pinned = new AtomicBoolean(true);
        /** The hold's handle in the metrics. */
        final Object metric;
        /** Set once, when the hold is booked, before it is put in {@link Holds}. */
        public volatile HoldLease lease;
        public volatile int count = 1;

        Hold(String owner, long token, Object metric) {
            this(owner, token, Long.toString(token), metric);
        }

        Hold(String owner, long token, String checkToken, Object metric) {
            this.owner = owner;
            this.token = token;
            this.checkToken = checkToken;
            this.metric = metric;
        }
    }
}
