package dev.synchronizers.redis.lock;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;

/**
 * The takes of one lock cache ({@code LockCache}) released locally but not yet confirmed, to be reported late
 * should the cache turn out lost (docs/design/lock-caching.md, section 3).
 *
 * <p>Keeps the takes released since the start of the last renewal that confirmed the cache
 * ({@link #LIMIT} at most), each as the way to tell its holder ({@link CacheTake#tellLost});
 * why, the cache's class comment says. Not thread-safe: the cache keeps it under its guard.
 */
final class UnconfirmedTakes {

    /**
     * How many released takes not yet confirmed by a renewal are kept to be reported should the
     * cache turn out lost; past it the oldest are forgotten (and would go unreported).
     */
    static final int LIMIT = 4096;

    /** A released take: how to tell its holder, and when it was released, by {@link System#nanoTime()}. */
    private record Released(Consumer<LostHold.Cause> holder, long releasedNanos) {
    }

    /** The takes released since the start of the last renewal that confirmed the cache, oldest first. */
    private final ArrayDeque<Released> released = new ArrayDeque<>();

    /**
     * Keeps a take just released, to be reported should the cache turn out lost, and forgets those
     * released before the start of the last renewal that confirmed the cache.
     *
     * @param holder tells the take's holder that the cache was lost
     * @param cache the cache's lease, which knows its last confirmation
     */
    void keep(Consumer<LostHold.Cause> holder, HoldLease cache) {
        long releasedNanos = System.nanoTime();
        long confirmed = cache.renewedNanos();
        while (!released.isEmpty()
                && (released.peekFirst().releasedNanos - confirmed < 0 || released.size() >= LIMIT)) {
            released.pollFirst();
        }
        released.addLast(new Released(holder, releasedNanos));
    }

    /**
     * The released takes the cache's loss may have overlapped: those after its last confirmation.
     *
     * @param cache the cache's lease; null if none, when there are none
     * @return how to tell their holders, oldest first
     */
    List<Consumer<LostHold.Cause>> since(HoldLease cache) {
        if (cache == null) {
            return List.of();
        }
        long confirmed = cache.renewedNanos();
        return released.stream().filter(take -> take.releasedNanos - confirmed >= 0).map(Released::holder).toList();
    }

    /** Forgets every take: the cache ended, and whichever may have overlapped its loss were taken by {@link #since}. */
    void clear() {
        released.clear();
    }

    /** Tells the holders of released takes that the cache they came from was lost, perhaps while they held it. */
    static void tellLost(List<Consumer<LostHold.Cause>> holders, LostHold.Cause cause) {
        for (Consumer<LostHold.Cause> holder : holders) {
            holder.accept(cause);
        }
    }
}
