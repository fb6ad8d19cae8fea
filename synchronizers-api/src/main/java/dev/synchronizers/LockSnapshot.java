package dev.synchronizers;

import java.util.List;
import java.util.Objects;

/**
 * A picture of one lock at one moment, taken by {@link DistributedLock#snapshot()} in one read-only
 * call to the store (to each of its servers at once, for a quorum of servers): who holds it, with
 * which fencing token and how much lease left, and how many wait. It is out of date as soon as it
 * is returned: use it for monitoring and diagnosis, never to decide whether to take or release the
 * lock.
 *
 * @param name the lock's name
 * @param holders the holders at that moment: none, one (a lock, a fair lock, a write lock), or any
 *     number (the readers of a read lock)
 * @param queueLength an estimate of how many threads of all clients waited at that moment, as
 *     {@link DistributedLock#getQueueLength()} defines it
 */
public record LockSnapshot(String name, List<Holder> holders, int queueLength) {

    /**
     * Checks and copies the components.
     *
     * @param name the lock's name
     * @param holders the holders at that moment: none, one (a lock, a fair lock, a write lock), or any
     *     number (the readers of a read lock)
     * @param queueLength an estimate of how many threads of all clients waited at that moment, as
     *     {@link DistributedLock#getQueueLength()} defines it
     * @throws NullPointerException if {@code name} or {@code holders} is null or holds null
     * @throws IllegalArgumentException if {@code queueLength} is negative
     */
    public LockSnapshot {
        Objects.requireNonNull(name, "name");
        holders = List.copyOf(holders);
        if (queueLength < 0) {
            throw new IllegalArgumentException("queueLength must be >= 0: " + queueLength);
        }
    }

    /**
     * Tells whether anyone held the lock at that moment.
     *
     * @return true if there was a holder
     */
    public boolean isLocked() {
        return !holders.isEmpty();
    }

    /** Whether a hold's lease is renewed by its client's watchdog. */
    public enum Renewal {
        /** Renewed by the watchdog until released (taken without a lease time). */
        RENEWED,
        /** A fixed lease the caller chose: it ends when it runs out. */
        FIXED,
        /** Not known to the client that took the snapshot: the store records leases, not how they are kept. */
        UNKNOWN,
        /**
         * The lock as the snapshot's own client caches it ({@code RedisSynchronizers.Builder#lockCaching}):
         * held in the store by the client, renewed by its watchdog, and kept between its threads'
         * holds. The holder's thread is the client's thread that holds it locally, or {@code -1} while
         * none does (cached, idle); its fencing token is the latest one a thread of the client took
         * from the cache. Another client's cached lock shows as {@link #UNKNOWN}, with thread
         * {@code -1} and the token the cache began with: which of that client's threads holds it,
         * if any, is known only there.
         */
        CACHED
    }

    /**
     * One holder of a lock.
     *
     * @param clientId the holding client's id ({@code RedisSynchronizers.clientId()}, or
     *     {@code Redlock.clientId()})
     * @param threadId the holding thread's id in that client's JVM; {@code -1} if the store's record
     *     names none (written by another program, or a lock a client caches; see {@link Renewal#CACHED})
     * @param fencingToken the token of the hold
     * @param leaseRemainingMillis how long the hold's lease had left, in milliseconds, by the store's
     *     clock (for a quorum of servers: what a quorum of them still had, each by its own clock);
     *     {@code -1} if the hold had no lease
     * @param renewal whether the lease is renewed; known only for holds of the client that took the
     *     snapshot ({@link Renewal#CACHED} for the lock it caches)
     */
    public record Holder(String clientId, long threadId, long fencingToken, long leaseRemainingMillis,
            Renewal renewal) {

        /**
         * Checks the components.
         *
         * @param clientId the holding client's id ({@code RedisSynchronizers.clientId()}, or
         *     {@code Redlock.clientId()})
         * @param threadId the holding thread's id in that client's JVM; {@code -1} if the store's record
         *     names none (written by another program, or a lock a client caches; see {@link Renewal#CACHED})
         * @param fencingToken the token of the hold
         * @param leaseRemainingMillis how long the hold's lease had left, in milliseconds, by the store's
         *     clock (for a quorum of servers: what a quorum of them still had, each by its own clock);
         *     {@code -1} if the hold had no lease
         * @param renewal whether the lease is renewed; known only for holds of the client that took the
         *     snapshot ({@link Renewal#CACHED} for the lock it caches)
         * @throws NullPointerException if {@code clientId} or {@code renewal} is null
         */
        public Holder {
            Objects.requireNonNull(clientId, "clientId");
            Objects.requireNonNull(renewal, "renewal");
        }
    }
}
