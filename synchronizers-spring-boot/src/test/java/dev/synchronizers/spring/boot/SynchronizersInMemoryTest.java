package dev.synchronizers.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.test.InMemorySynchronizers;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code synchronizers.in-memory=true}: the application context gets an
 * {@link InMemorySynchronizers} (module {@code synchronizers-test}) instead of a Redis client, and
 * never connects anywhere. The address properties point at a loopback port nothing listens on, so a
 * connection attempt would fail the context. A lock, a semaphore, a lost hold and a {@code callLocked}
 * body interrupted on loss work through the injected bean; health, metrics and the ShedLock provider
 * still start and work.
 */
class SynchronizersInMemoryTest {

    private int closedPort;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SynchronizersAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new);

    @BeforeEach
    void findAClosedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
    }

    @Test
    void inMemory_noRedis_lockAndSemaphoreWorkThroughTheInjectedBean() {
        runner.withPropertyValues("synchronizers.in-memory=true", "synchronizers.uri=redis://127.0.0.1:" + closedPort)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class);
                    Synchronizers synchronizers = context.getBean(Synchronizers.class);
                    assertThat(synchronizers).isInstanceOf(InMemorySynchronizers.class)
                            .isSameAs(context.getBean(InMemorySynchronizers.class));

                    DistributedLock lock = synchronizers.lock("job");
                    assertThat(lock.tryLock()).isTrue();
                    assertThat(lock.isHeldByCurrentThread()).isTrue();
                    lock.unlock();
                    assertThat(lock.isLocked()).isFalse();

                    DistributedSemaphore exports = synchronizers.semaphore("exports");
                    assertThat(exports.trySetPermits(2)).isTrue();
                    PermitHandle both = exports.tryAcquirePermits(2, Duration.ZERO).orElseThrow();
                    assertThat(exports.tryAcquirePermits(1, Duration.ZERO)).isEmpty();
                    both.release();
                    assertThat(exports.availablePermits()).isEqualTo(2);
                });
    }

    @Test
    void inMemory_loseHold_releaseThrowsLostHold_andACallLockedBodyIsInterrupted() {
        runner.withPropertyValues("synchronizers.in-memory=true", "synchronizers.uri=redis://127.0.0.1:" + closedPort)
                .run(context -> {
                    InMemorySynchronizers synchronizers = context.getBean(InMemorySynchronizers.class);

                    LockHandle hold = synchronizers.lock("export").tryAcquire(Duration.ZERO).orElseThrow();
                    synchronizers.loseHold("export");
                    LostHold lost = hold.lost().toCompletableFuture().get(30, TimeUnit.SECONDS);
                    assertThat(lost.cause()).isEqualTo(LostHold.Cause.GONE);
                    assertThatThrownBy(hold::release).isInstanceOf(LostHoldException.class);

                    CountDownLatch running = new CountDownLatch(1);
                    Future<String> call = CompletableFuture.supplyAsync(() -> {
                        try {
                            return synchronizers.lock("report").callLocked(Duration.ZERO, held -> {
                                running.countDown();
                                Thread.sleep(TimeUnit.MINUTES.toMillis(10));   // until interrupted by the loss
                                return "finished";
                            });
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
                    synchronizers.loseHold("report");
                    assertThatThrownBy(() -> call.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                            .cause().cause().isInstanceOf(LostHoldException.class);
                });
    }

    @Test
    void inMemory_healthUp_metricsUnbroken_andTheLockProviderUsesIt() {
        runner.withPropertyValues("synchronizers.in-memory=true", "synchronizers.uri=redis://127.0.0.1:" + closedPort)
                .run(context -> {
                    assertThat(context.getBean(SynchronizersHealthIndicator.class).health().getStatus())
                            .isEqualTo(Status.UP);
                    LockProvider provider = context.getBean(LockProvider.class);
                    LockConfiguration configuration = new LockConfiguration(java.time.Instant.now(), "nightly",
                            Duration.ofMinutes(1), Duration.ZERO);
                    Optional<SimpleLock> taken = provider.lock(configuration);
                    assertThat(taken).isPresent();
                    assertThat(context.getBean(Synchronizers.class).lock("nightly").isLocked()).isTrue();
                    taken.get().unlock();
                    assertThat(context.getBean(MeterRegistry.class)).isNotNull();
                });
    }

    /** Redlock nodes given too: in-memory wins, and there is no Redlock bean to connect. */
    @Test
    void inMemory_withRedlockNodes_isStillInMemory() {
        runner.withPropertyValues("synchronizers.in-memory=true", "synchronizers.redlock.nodes=127.0.0.1:" + closedPort
                        + ",127.0.0.1:" + closedPort + ",127.0.0.1:" + closedPort)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(InMemorySynchronizers.class)
                        .doesNotHaveBean(dev.synchronizers.redis.Redlock.class));
    }

    /** in-memory=true without synchronizers-test: start-up fails saying which artifact to add. */
    @Test
    void inMemory_withoutTheTestModule_failsStartUpNamingIt() {
        runner.withClassLoader(new FilteredClassLoader(InMemorySynchronizers.class))
                .withPropertyValues("synchronizers.in-memory=true")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("dev.synchronizers:synchronizers-test"));
    }

    /** The metadata documents the switch. */
    @Test
    void metadata_listsInMemory() throws Exception {
        try (var in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(json).contains("\"name\": \"synchronizers.in-memory\"");
        }
    }
}
