package dev.synchronizers.redis;

import java.time.Duration;

/**
 * The replica acknowledgement a client asks of every call that creates a hold
 * ({@code RedisSynchronizers.Builder.replicaAcks}): {@code WAIT replicas timeout} sent right after
 * the call on the same connection, so that both go in one round trip.
 *
 * @param replicas how many replicas must have the write
 * @param timeout how long {@code WAIT} may block
 */
record ReplicaAcks(int replicas, Duration timeout) {

    /** Whether a {@code WAIT} reply (replicas that acknowledged) meets the requirement. */
    boolean met(long acknowledged) {
        return acknowledged >= replicas;
    }
}
