package dev.synchronizers.spring.boot3;

import dev.synchronizers.DistributedLock;
import java.util.Objects;
import java.util.function.Function;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code synchronizers} health indicator on Spring Boot 3: UP when Redis answers the client's
 * query of one lock, DOWN with the exception when it does not. The bean is named
 * {@code synchronizersHealthIndicator}, so Spring Boot lists it as {@code synchronizers}. It checks
 * exactly what Boot 4's {@code dev.synchronizers.spring.boot.SynchronizersHealthIndicator} checks.
 *
 * <p>Each check is one read-only round trip ({@code isLocked()} of the lock {@value #PROBE}: an
 * {@code EXISTS} on a standalone server, Sentinel master or cluster node, and on every node of a
 * Redlock, which is UP while a quorum answers). It writes nothing. It takes at most the client's
 * command timeout: a server that is down, unreachable or stalled turns the indicator DOWN within
 * that time, never hangs the health endpoint. When the client connects on first use
 * ({@code synchronizers.fail-fast=false}), a check is also what connects it once Redis answers.
 *
 * <p>It belongs in readiness, not in liveness: Redis being away says nothing about whether
 * restarting this process would help. Spring Boot's liveness group holds only the liveness state
 * unless configured otherwise, and this indicator does not add itself there; do not add it.
 */
public final class SynchronizersHealthIndicator extends AbstractHealthIndicator {

    /** The lock name whose state each check reads; no key of it is ever written. */
    public static final String PROBE = "synchronizers-health";

    private final Function<String, ? extends DistributedLock> locks;
    private final String client;

    /**
     * Creates an indicator that checks {@code locks.apply(PROBE).isLocked()}.
     *
     * @param locks the lock of a name, e.g. {@code synchronizers::lock} or {@code redlock::lock}
     * @param client what to show as the {@code client} detail, e.g. the client's {@code toString()}
     * @throws NullPointerException if either is null
     */
    public SynchronizersHealthIndicator(Function<String, ? extends DistributedLock> locks, String client) {
        super("synchronizers health check failed");
        this.locks = Objects.requireNonNull(locks, "locks must not be null");
        this.client = Objects.requireNonNull(client, "client must not be null");
    }

    /**
     * Reads the probe lock's state; an exception (Redis unavailable within the command timeout)
     * turns the result DOWN.
     */
    @Override
    protected void doHealthCheck(Health.Builder builder) {
        locks.apply(PROBE).isLocked();
        builder.up().withDetail("client", client);
    }
}
