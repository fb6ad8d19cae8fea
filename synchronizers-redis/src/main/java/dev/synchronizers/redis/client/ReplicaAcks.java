package dev.synchronizers.redis.client;

import java.time.Duration;
import java.util.Objects;

/**
 * The replica acknowledgement a client asks of every hold it gets
 * ({@code RedisSynchronizers.Builder.replicaAcks}): {@code WAIT replicas timeout} sent on a side
 * connection right after a renewal of the new hold, so that both go in one round trip and no
 * {@code WAIT} holds up the shared connection (see {@link Machinery#replicated}).
 *
 * @param replicas how many replicas must have the write
 * @param timeout how long {@code WAIT} may block
 */
public record ReplicaAcks(int replicas, Duration timeout) {

    /**
     * The replica acknowledgement {@code RedisSynchronizers.Builder.replicaAcks} asks for, its
     * arguments checked in the order that method documents.
     *
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code replicas} is below 1 or {@code timeout} is not positive
     */
    public static ReplicaAcks checked(int replicas, Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas must be >= 1: " + replicas);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be > 0: " + timeout);
        }
        return new ReplicaAcks(replicas, timeout);
    }

    /** Whether a {@code WAIT} reply (replicas that acknowledged) meets the requirement. */
    public boolean met(long acknowledged) {
        return acknowledged >= replicas;
    }
}
