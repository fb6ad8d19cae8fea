package dev.synchronizers;

import java.util.Objects;

/**
 * What a {@link LostHoldListener} is told about a hold that its owner lost while it still believed
 * it held it.
 *
 * @param name the synchronizer's name, as given to {@link Synchronizers}
 * @param kind what kind of synchronizer it is, e.g. {@code "lock"}
 * @param threadId the id of the thread that owned the hold ({@code Thread.threadId()} on JDK 19 and
 *     later, {@link Thread#getId()} before), or {@code -1} for a hold of a {@link LockHandle} or
 *     the permits of a {@link PermitHandle}
 * @param fencingToken the fencing token of the lost hold, or {@code -1} where the kind has none
 * @param cause why the hold was lost
 * @param handle the lock handle that owned the hold, or null for a hold of a thread, and for
 *     permits of a semaphore (a {@link PermitHandle} learns of its loss through
 *     {@link PermitHandle#isHeld()})
 */
public record LostHold(String name, String kind, long threadId, long fencingToken, Cause cause, LockHandle handle) {

    /**
     * Creates the event.
     *
     * @param name the synchronizer's name, as given to {@link Synchronizers}
     * @param kind what kind of synchronizer it is, e.g. {@code "lock"}
     * @param threadId the id of the thread that owned the hold ({@code Thread.threadId()} on JDK 19 and
     *     later, {@link Thread#getId()} before), or {@code -1} for a hold of a {@link LockHandle} or
     *     the permits of a {@link PermitHandle}
     * @param fencingToken the fencing token of the lost hold, or {@code -1} where the kind has none
     * @param cause why the hold was lost
     * @param handle the lock handle that owned the hold, or null for a hold of a thread, and for
     *     permits of a semaphore (a {@link PermitHandle} learns of its loss through
     *     {@link PermitHandle#isHeld()})
     * @throws NullPointerException if {@code name}, {@code kind} or {@code cause} is null
     */
    public LostHold {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(cause, "cause");
    }

    /**
     * Creates the event of a hold that a thread owned.
     *
     * @param name the synchronizer's name, as given to {@link Synchronizers}
     * @param kind what kind of synchronizer it is, e.g. {@code "lock"}
     * @param threadId the id of the thread that owned the hold ({@code Thread.threadId()} on JDK 19 and
     *     later, {@link Thread#getId()} before), or {@code -1} for a hold of a {@link LockHandle} or
     *     the permits of a {@link PermitHandle}
     * @param fencingToken the fencing token of the lost hold, or {@code -1} where the kind has none
     * @param cause why the hold was lost
     * @throws NullPointerException if {@code name}, {@code kind} or {@code cause} is null
     */
    public LostHold(String name, String kind, long threadId, long fencingToken, Cause cause) {
        this(name, kind, threadId, fencingToken, cause, null);
    }

    /** Why a hold was lost. */
    public enum Cause {
        /**
         * The store no longer had the hold when the watchdog renewed it: it expired (for example
         * after a long GC or network pause), was forced by {@code forceUnlock()}, or was lost in a
         * restart or failover.
         */
        GONE,
        /**
         * The watchdog could not reach the store for a whole lease, so the hold may have expired
         * there; it is treated as lost rather than assumed to be held.
         */
        UNRENEWABLE,
        /**
         * The owning thread ended without releasing the hold. The watchdog stops renewing it, so it
         * frees itself in the store when its lease runs out, as if the process had died. Also the
         * cause with which a handle's {@code lost()} stage completes when its client is closed
         * while it is held (listeners are not told of that: the caller chose to close).
         */
        ABANDONED,
        /**
         * A hold taken with a fixed lease reached the end of that lease before it was released.
         * Listeners are not told of this cause, which the caller chose; {@code unlock()} reports it.
         */
        LEASE_EXPIRED
    }
}
