package dev.synchronizers.redis.watchdog;

import dev.synchronizers.LostHold;

/**
 * The lease of one hold as its lock sees it, whoever keeps it: the watchdog of one server
 * ({@link Watchdog.Lease}), or a quorum of nodes' watchdogs ({@code quorum.QuorumLease}). The
 * lock asks it whether the hold is still believed held and how it is leased; ending it is its
 * keeper's business.
 */
public interface HoldLease {

    /**
     * Tells whether the hold is known to be over: lost, or a fixed lease past its end by the local
     * clock (which its keeper may not have noticed yet).
     *
     * @return the reason it is over, or null while it is believed held (or was released)
     */
    LostHold.Cause endedBecause();

    /**
     * Tells whether this is a fixed lease, which nobody renews.
     *
     * @return true for a fixed lease
     */
    boolean fixed();

    /**
     * Returns the fixed lease in milliseconds, or 0 for a renewed one.
     *
     * @return the fixed lease
     */
    long fixedMillis();

    /**
     * Returns when, by {@link System#nanoTime()}, the lease was last known to run a full lease from:
     * when the acquiring command was sent, then the start of each renewal that confirmed it.
     *
     * @return the start of the lease as last confirmed
     */
    long renewedNanos();
}
