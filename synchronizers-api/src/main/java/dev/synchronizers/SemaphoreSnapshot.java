package dev.synchronizers;

import java.util.List;
import java.util.Objects;

/**
 * A picture of one semaphore at one moment, taken by {@link DistributedSemaphore#snapshot()} in one
 * read-only call to the store: its total, what is free, which clients hold how many permits and
 * for how long, and how many wait. It is out of date as soon as it is returned: use it for
 * monitoring and diagnosis (for example, to find the client that holds permits nobody releases),
 * never for control.
 *
 * @param name the semaphore's name
 * @param totalPermits the total at that moment
 * @param availablePermits the permits free at that moment: the total minus what live grants held
 *     (negative after the total shrank below what was held)
 * @param holders the clients that held permits at that moment, one entry each
 * @param queueLength how many acquisitions of all clients waited at that moment
 */
public record SemaphoreSnapshot(String name, int totalPermits, int availablePermits, List<PermitHolder> holders,
        int queueLength) {

    /**
     * Checks and copies the components.
     *
     * @param name the semaphore's name
     * @param totalPermits the total at that moment
     * @param availablePermits the permits free at that moment: the total minus what live grants held
     *     (negative after the total shrank below what was held)
     * @param holders the clients that held permits at that moment, one entry each
     * @param queueLength how many acquisitions of all clients waited at that moment
     * @throws NullPointerException if {@code name} or {@code holders} is null or holds null
     * @throws IllegalArgumentException if {@code totalPermits} or {@code queueLength} is negative
     */
    public SemaphoreSnapshot {
        Objects.requireNonNull(name, "name");
        holders = List.copyOf(holders);
        if (totalPermits < 0) {
            throw new IllegalArgumentException("totalPermits must be >= 0: " + totalPermits);
        }
        if (queueLength < 0) {
            throw new IllegalArgumentException("queueLength must be >= 0: " + queueLength);
        }
    }

    /**
     * The permits one client held.
     *
     * @param clientId the client's id ({@code RedisSynchronizers.clientId()})
     * @param permits how many permits it held, over all its grants
     * @param grants how many acquisitions those permits came from
     * @param leaseRemainingMillis the shortest remaining lease among its grants, in milliseconds, by
     *     the store's clock: when the first of its permits would return to the pool if its client
     *     stopped renewing
     */
    public record PermitHolder(String clientId, int permits, int grants, long leaseRemainingMillis) {

        /**
         * Checks the components.
         *
         * @param clientId the client's id ({@code RedisSynchronizers.clientId()})
         * @param permits how many permits it held, over all its grants
         * @param grants how many acquisitions those permits came from
         * @param leaseRemainingMillis the shortest remaining lease among its grants, in milliseconds, by
         *     the store's clock: when the first of its permits would return to the pool if its client
         *     stopped renewing
         * @throws NullPointerException if {@code clientId} is null
         * @throws IllegalArgumentException if {@code permits} or {@code grants} is not positive
         */
        public PermitHolder {
            Objects.requireNonNull(clientId, "clientId");
            if (permits <= 0 || grants <= 0) {
                throw new IllegalArgumentException("permits and grants must be > 0: " + permits + ", " + grants);
            }
        }
    }
}
