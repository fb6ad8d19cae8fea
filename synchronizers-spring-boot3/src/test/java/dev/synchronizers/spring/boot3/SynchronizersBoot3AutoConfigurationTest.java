package dev.synchronizers.spring.boot3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.spring.boot.BootRedisDetails;
import dev.synchronizers.spring.boot.SynchronizersAutoConfiguration;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@link SynchronizersBoot3AutoConfiguration} with {@link SynchronizersAutoConfiguration} on Spring
 * Boot 3.5.7 (the versions it manages: Lettuce 6.6.0, Netty 4.1, Spring Framework 6.2), against real
 * redis-servers: the health indicator as a server stops and starts, the fallback to Boot 3's Redis
 * connection details, and a lock and a permit taken through the client the two make.
 */
@Tag("redis")
class SynchronizersBoot3AutoConfigurationTest {

    /** Far beyond any reconnect on a loaded machine; the wait ends as soon as the check is UP. */
    private static final Duration RECONNECT_DEADLINE = Duration.ofSeconds(60);

    private static final List<RedisServer> SERVERS = new ArrayList<>();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SynchronizersAutoConfiguration.class,
                    SynchronizersBoot3AutoConfiguration.class))
            .withPropertyValues("synchronizers.command-timeout=500ms");

    @BeforeAll
    static void startServers() {
        SERVERS.add(RedisServers.startManaged());
        for (int i = 0; i < 3; i++) {
            SERVERS.add(RedisServers.start());
        }
    }

    @AfterAll
    static void stopServers() {
        SERVERS.forEach(RedisServer::close);
    }

    /* --------------- health --------------- */

    /** One indicator, named synchronizers: UP while the server answers, DOWN while it is killed, UP once it is back. */
    @Test
    void health_serverStopsAndStarts_upDownUp() {
        RedisServer managed = SERVERS.get(0);
        runner.withPropertyValues("synchronizers.uri=" + managed.uri()).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(HealthIndicator.class);
            HealthIndicator health = context.getBean("synchronizersHealthIndicator", HealthIndicator.class);
            assertThat(health).isInstanceOf(SynchronizersHealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            managed.kill();
            try {
                Health down = health.health();
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                assertThat(down.getDetails()).containsKey("error");
            } finally {
                managed.restart();
            }
            assertThat(awaitStatus(health, Status.UP)).isEqualTo(Status.UP);
        });
    }

    /** management.health.synchronizers.enabled=false: no indicator, the client still there. */
    @Test
    void health_disabledByProperty_noIndicator() {
        runner.withPropertyValues("synchronizers.uri=" + SERVERS.get(1).uri(),
                        "management.health.synchronizers.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class)
                        .doesNotHaveBean("synchronizersHealthIndicator"));
    }

    /** Without Boot 3's actuator on the class path: no indicator, and start-up does not fail. */
    @Test
    void health_withoutActuator_noIndicator() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
                .withPropertyValues("synchronizers.uri=" + SERVERS.get(1).uri())
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class)
                        .doesNotHaveBean("synchronizersHealthIndicator"));
    }

    /** Over synchronizers.redlock.nodes the indicator checks the Redlock: UP while its servers answer. */
    @Test
    void health_redlock_up() {
        String nodes = SERVERS.get(1).uri() + "," + SERVERS.get(2).uri() + "," + SERVERS.get(3).uri();
        runner.withPropertyValues("synchronizers.redlock.nodes=" + nodes).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Redlock.class).doesNotHaveBean(Synchronizers.class);
            assertThat(context.getBean(SynchronizersHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
        });
    }

    /* --------------- Boot 3's connection details --------------- */

    /**
     * No address in synchronizers.*: the client connects where spring.data.redis.* points (Boot 3's
     * RedisConnectionDetails, made by its RedisAutoConfiguration), takes a lock and a permit there,
     * and Boot's own StringRedisTemplate works beside it.
     */
    @Test
    void noAddress_usesBoot3ConnectionDetails_lockAndPermit() {
        RedisServer other = SERVERS.get(2);
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class,
                        SynchronizersAutoConfiguration.class, SynchronizersBoot3AutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + other.port(),
                        "synchronizers.key-prefix=boot3-details")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(BootRedisDetails.Lookup.class);
                    assertThat(context.getBean(StringRedisTemplate.class).opsForValue().increment("boot3-details:plain"))
                            .isEqualTo(1L);
                    Synchronizers synchronizers = context.getBean(Synchronizers.class);
                    DistributedLock lock = synchronizers.lock("details");
                    lock.lock();
                    try {
                        assertThat(pttl(other, "boot3-details:lock:{details}")).isPositive();
                        assertThat(pttl(SERVERS.get(1), "boot3-details:lock:{details}")).isNegative();
                    } finally {
                        lock.unlock();
                    }
                    DistributedSemaphore permits = synchronizers.semaphore("details-permits");
                    permits.trySetPermits(1);
                    assertThat(permits.tryAcquire(1, TimeUnit.SECONDS)).isTrue();
                    assertThat(permits.tryAcquire()).isFalse();
                    permits.release();
                });
    }

    /** A RedisConnectionDetails bean of the application's (as Testcontainers defines one) is followed too. */
    @Test
    void noAddress_followsAConnectionDetailsBean() {
        RedisServer other = SERVERS.get(3);
        runner.withBean(RedisConnectionDetails.class, () -> new RedisConnectionDetails() {
            @Override
            public Standalone getStandalone() {
                return Standalone.of("127.0.0.1", other.port());
            }
        }).withPropertyValues("synchronizers.key-prefix=boot3-bean").run(context -> {
            DistributedLock lock = context.getBean(Synchronizers.class).lock("details-bean");
            lock.lock();
            try {
                assertThat(pttl(other, "boot3-bean:lock:{details-bean}")).isPositive();
            } finally {
                lock.unlock();
            }
        });
    }

    /** Boot 3's details with an SSL bundle cannot be followed: start-up says so, and what to set instead. */
    @Test
    void connectionDetailsWithSslBundle_failStartUpSayingWhatToSet() {
        runner.withBean(RedisConnectionDetails.class, () -> new RedisConnectionDetails() {
            @Override
            public Standalone getStandalone() {
                return Standalone.of("127.0.0.1", SERVERS.get(1).port(), SslBundle.of(null));
            }
        }).run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("SSL bundle").hasMessageContaining("synchronizers.uri"));
    }

    /** synchronizers.uri wins over Boot's connection details. */
    @Test
    void uri_winsOverBootConnectionDetails() {
        RedisServer named = SERVERS.get(1);
        runner.withBean(RedisConnectionDetails.class, () -> new RedisConnectionDetails() {
            @Override
            public Standalone getStandalone() {
                return Standalone.of("127.0.0.1", SERVERS.get(3).port());
            }
        }).withPropertyValues("synchronizers.uri=" + named.uri(), "synchronizers.key-prefix=boot3-uri").run(context -> {
            DistributedLock lock = context.getBean(Synchronizers.class).lock("uri");
            lock.lock();
            try {
                assertThat(pttl(named, "boot3-uri:lock:{uri}")).isPositive();
                assertThat(pttl(SERVERS.get(3), "boot3-uri:lock:{uri}")).isNegative();
            } finally {
                lock.unlock();
            }
        });
    }

    private static Status awaitStatus(HealthIndicator health, Status wanted) throws InterruptedException {
        long deadline = System.nanoTime() + RECONNECT_DEADLINE.toNanos();
        Status status = health.health().getStatus();
        while (!status.equals(wanted) && System.nanoTime() < deadline) {
            // Each check already waits up to the command timeout; this pause only spaces them out.
            Thread.sleep(50);
            status = health.health().getStatus();
        }
        return status;
    }

    private static long pttl(RedisServer on, String key) {
        RedisClient client = RedisClient.create(on.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return connection.sync().pttl(key);
        } finally {
            client.shutdown();
        }
    }
}
