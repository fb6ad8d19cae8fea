package dev.synchronizers.redis.client;

import java.time.Duration;

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

    /** Whether a {@code WAIT} reply (replicas that acknowledged) meets the requirement. */
    public boolean met(long acknowledged) {
        return acknowledged >= replicas;
    }
}
