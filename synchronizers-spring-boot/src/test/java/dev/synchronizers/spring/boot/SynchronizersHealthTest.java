package dev.synchronizers.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The {@code synchronizers} health indicator as a real server stops and starts, and start-up with
 * Redis down: fail-fast (the default) and {@code synchronizers.fail-fast=false}.
 *
 * <p>A check is bounded by the command timeout (500 ms here), so a check made while the server is
 * down is DOWN when it returns. After a restart, the client's connection comes back on its own
 * schedule (Lettuce's reconnect), so the test waits for UP, up to a deadline, as a load balancer
 * would: it does not assume how soon.
 */
@Tag("redis")
class SynchronizersHealthTest {

    /** Far beyond any reconnect on a loaded machine; the wait ends as soon as the check is UP. */
    private static final Duration RECONNECT_DEADLINE = Duration.ofSeconds(60);

    private static RedisServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SynchronizersAutoConfiguration.class))
            .withPropertyValues("synchronizers.command-timeout=500ms");

    @BeforeAll
    static void startServer() {
        server = RedisServers.startManaged();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    /** UP while the server answers, DOWN while it is killed, UP again once it is back. */
    @Test
    void health_serverStopsAndStarts_upDownUp() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri()).run(context -> {
            SynchronizersHealthIndicator health = context.getBean(SynchronizersHealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            server.kill();
            try {
                Health down = health.health();
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                assertThat(down.getDetails()).containsKey("error");
            } finally {
                server.restart();
            }
            assertThat(awaitStatus(health, Status.UP)).isEqualTo(Status.UP);
            DistributedLock lock = context.getBean(Synchronizers.class).lock("after-restart");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        });
    }

    /** Redis down at start-up, fail-fast (the default): start-up fails with the client's exception. */
    @Test
    void failFast_redisDown_startUpFails() {
        server.kill();
        try {
            runner.withPropertyValues("synchronizers.uri=" + server.uri()).run(context ->
                    assertThat(context).getFailure().hasRootCauseInstanceOf(java.net.ConnectException.class)
                            .satisfies(failure -> assertThat(causes(failure))
                                    .anyMatch(SynchronizerUnavailableException.class::isInstance)));
        } finally {
            server.restart();
        }
    }

    /**
     * Redis down at start-up, fail-fast=false: the context starts; calls throw
     * SynchronizerUnavailableException and health is DOWN until Redis answers; then both work.
     */
    @Test
    void lenient_redisDown_startsAndConnectsOnFirstUseOnceRedisAnswers() {
        server.kill();
        boolean restarted = false;
        try {
            runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.fail-fast=false").run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class);
                Synchronizers synchronizers = context.getBean(Synchronizers.class);
                assertThat(synchronizers).isInstanceOf(ConnectOnFirstUse.class);
                assertThatThrownBy(() -> synchronizers.lock("lenient"))
                        .isInstanceOf(SynchronizerUnavailableException.class);
                SynchronizersHealthIndicator health = context.getBean(SynchronizersHealthIndicator.class);
                assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
                server.restart();
                // Nothing is connected yet: the next call connects, now that Redis answers.
                assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                DistributedLock lock = synchronizers.lock("lenient");
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            });
            restarted = true;
        } finally {
            if (!restarted && !server.isRunning()) {
                server.restart();
            }
        }
    }

    /** Redis up at start-up, fail-fast=false: connected at once, as with fail-fast. */
    @Test
    void lenient_redisUp_connectsAtStartUp() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.fail-fast=false").run(context -> {
            ConnectOnFirstUse synchronizers = (ConnectOnFirstUse) context.getBean(Synchronizers.class);
            assertThat(synchronizers.isConnected()).isTrue();
        });
    }

    private static Status awaitStatus(SynchronizersHealthIndicator health, Status wanted) throws InterruptedException {
        long deadline = System.nanoTime() + RECONNECT_DEADLINE.toNanos();
        Status status = health.health().getStatus();
        while (!status.equals(wanted) && System.nanoTime() < deadline) {
            // Each check already waits up to the command timeout; this pause only spaces them out.
            Thread.sleep(50);
            status = health.health().getStatus();
        }
        return status;
    }

    private static java.util.List<Throwable> causes(Throwable failure) {
        java.util.List<Throwable> causes = new java.util.ArrayList<>();
        for (Throwable t = failure; t != null && !causes.contains(t); t = t.getCause()) {
            causes.add(t);
        }
        return causes;
    }
}
