package dev.synchronizers.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.shedlock.SynchronizersLockProvider;
import dev.synchronizers.spring.integration.SynchronizersLockRegistry;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@link SynchronizersAutoConfiguration} in application contexts on real redis-servers: each way of
 * saying where Redis is, each conditional bean, and start-up with Redis down. Sentinel and Cluster
 * properties are in {@link SynchronizersTopologyPropertiesTest}.
 */
@Tag("redis")
class SynchronizersAutoConfigurationTest {

    private static final List<RedisServer> SERVERS = new ArrayList<>();
    private static RedisServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SynchronizersAutoConfiguration.class));

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 3; i++) {
            SERVERS.add(RedisServers.start());
        }
        server = SERVERS.get(0);
    }

    @AfterAll
    static void stopServers() {
        SERVERS.forEach(RedisServer::close);
    }

    /* --------------- synchronizers.uri and the client's settings --------------- */

    /** synchronizers.uri, key-prefix and lease reach the client: its lock's key is under the prefix with that lease. */
    @Test
    void uri_withPrefixAndLease_buildsOneClientThatUsesThem() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.key-prefix=boot-uri",
                "synchronizers.lease=7s", "synchronizers.command-timeout=2s").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class).doesNotHaveBean(Redlock.class);
            assertThat(context.getBean(Synchronizers.class)).isInstanceOf(RedisSynchronizers.class);
            DistributedLock lock = context.getBean(Synchronizers.class).lock("uri-props");
            lock.lock();
            try {
                long pttl = pttl(server, "boot-uri:lock:{uri-props}");
                assertThat(pttl).as("the lock's key is under the prefix, with the 7 s lease").isBetween(1L, 7000L);
            } finally {
                lock.unlock();
            }
        });
    }

    /**
     * "The client id is reachable from the Synchronizers the starter injects": it is the id that
     * owns the client's holds, with fail-fast (a RedisSynchronizers) and without (connected on
     * first use).
     */
    @Test
    void injectedSynchronizers_clientId_isTheIdOfItsHolds() {
        for (String failFast : List.of("true", "false")) {
            runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.fail-fast=" + failFast)
                    .run(context -> {
                        Synchronizers synchronizers = context.getBean(Synchronizers.class);
                        DistributedLock lock = synchronizers.lock("client-id-" + failFast);
                        lock.lock();
                        try {
                            assertThat(lock.snapshot().holders().get(0).clientId())
                                    .as("fail-fast=" + failFast).isEqualTo(synchronizers.clientId());
                        } finally {
                            lock.unlock();
                        }
                    });
        }
    }

    /** Closing the context closes the client: a closed client refuses new synchronizers. */
    @Test
    void close_context_closesTheClient() {
        Synchronizers[] client = new Synchronizers[1];
        runner.withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> client[0] = context.getBean(Synchronizers.class));
        assertThatThrownBy(() -> client[0].lock("after-close")).isInstanceOf(IllegalStateException.class);
    }

    /** Bad settings are the builder's exceptions, naming the setting, at start-up. */
    @Test
    void badLease_failsStartUpNamingIt() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.lease=5ms").run(context ->
                assertThat(context).getFailure().rootCause().isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("lease"));
    }

    /** Two addresses: start-up fails naming both properties. */
    @Test
    void twoAddresses_failStartUpNamingBoth() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.cluster.nodes=127.0.0.1:1")
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("synchronizers.uri").hasMessageContaining("synchronizers.cluster.nodes"));
        runner.withPropertyValues("synchronizers.uri=" + server.uri(),
                "synchronizers.redlock.nodes=" + String.join(",", uris()))
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("synchronizers.uri").hasMessageContaining("synchronizers.redlock.nodes"));
    }

    /* --------------- Redlock --------------- */

    /** synchronizers.redlock.nodes: a Redlock and no Synchronizers; the lock provider and health use it. */
    @Test
    void redlockNodes_buildARedlockThatTheLockProviderAndHealthUse() {
        runner.withPropertyValues("synchronizers.redlock.nodes=" + String.join(",", hostPorts()),
                "synchronizers.key-prefix=boot-redlock").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Redlock.class).doesNotHaveBean(Synchronizers.class);
            Redlock redlock = context.getBean(Redlock.class);
            assertThat(redlock.nodeCount()).isEqualTo(3);
            assertThat(context.getBean(SynchronizersHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
            LockProvider provider = context.getBean(LockProvider.class);
            Optional<SimpleLock> taken = provider.lock(new LockConfiguration(Instant.now(), "redlock-job",
                    Duration.ofSeconds(10), Duration.ZERO));
            assertThat(taken).isPresent();
            try {
                // Held on every node (a quorum at least), under the prefix.
                int holding = 0;
                for (RedisServer node : SERVERS) {
                    holding += pttl(node, "boot-redlock:redlock:{redlock-job}") > 0 ? 1 : 0;
                }
                assertThat(holding).isGreaterThanOrEqualTo(redlock.quorum());
            } finally {
                taken.get().unlock();
            }
        });
    }

    /* --------------- Boot's connection details --------------- */

    /**
     * No address in synchronizers.*: the client connects where spring.data.redis.* points, and Boot's
     * own RedisConnectionFactory stays the only one, Boot's, and works (on the Lettuce this library needs).
     */
    @Test
    void noAddress_usesBootsConnectionDetails_andLeavesBootsConnectionFactoryAlone() {
        RedisServer other = SERVERS.get(1);
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        SynchronizersAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + other.port(),
                        "synchronizers.key-prefix=boot-details")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RedisConnectionFactory.class);
                    assertThat(context.getBean(RedisConnectionFactory.class)).isInstanceOf(LettuceConnectionFactory.class);
                    assertThat(context.getBean(StringRedisTemplate.class).opsForValue().increment("boot-details:plain"))
                            .isEqualTo(1L);
                    DistributedLock lock = context.getBean(Synchronizers.class).lock("details");
                    lock.lock();
                    try {
                        assertThat(pttl(other, "boot-details:lock:{details}")).isPositive();
                        assertThat(pttl(server, "boot-details:lock:{details}")).isNegative();
                    } finally {
                        lock.unlock();
                    }
                });
    }

    /** A DataRedisConnectionDetails bean of the application's (as Testcontainers defines one) is followed too. */
    @Test
    void noAddress_followsAConnectionDetailsBean() {
        RedisServer other = SERVERS.get(2);
        runner.withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
            @Override
            public Standalone getStandalone() {
                return Standalone.of("127.0.0.1", other.port());
            }
        }).withPropertyValues("synchronizers.key-prefix=boot-bean").run(context -> {
            DistributedLock lock = context.getBean(Synchronizers.class).lock("details-bean");
            lock.lock();
            try {
                assertThat(pttl(other, "boot-bean:lock:{details-bean}")).isPositive();
            } finally {
                lock.unlock();
            }
        });
    }

    /** Connection details with an SSL bundle cannot be followed: start-up says so, and what to set instead. */
    @Test
    void connectionDetailsWithSslBundle_failStartUpSayingWhatToSet() {
        runner.withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
            @Override
            public org.springframework.boot.ssl.SslBundle getSslBundle() {
                return org.springframework.boot.ssl.SslBundle.of(null);
            }

            @Override
            public Standalone getStandalone() {
                return Standalone.of("127.0.0.1", server.port());
            }
        }).run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("SSL bundle").hasMessageContaining("synchronizers.uri"));
    }

    /* --------------- ClientResources, metrics --------------- */

    /** Boot's ClientResources bean is shared with the client, and left running when the client closes. */
    @Test
    void clientResourcesBean_isSharedAndNotShutDownByTheClient() {
        AtomicInteger threads = new AtomicInteger();
        ClientResources resources = DefaultClientResources.builder().threadFactoryProvider(pool -> {
            ThreadFactory counting = runnable -> {
                threads.incrementAndGet();
                Thread thread = new Thread(runnable, "boot-" + pool);
                thread.setDaemon(true);
                return thread;
            };
            return counting;
        }).build();
        try {
            runner.withBean(ClientResources.class, () -> resources, definition -> definition.setDestroyMethodName(""))
                    .withPropertyValues("synchronizers.uri=" + server.uri())
                    .run(context -> {
                        DistributedLock lock = context.getBean(Synchronizers.class).lock("resources");
                        assertThat(lock.tryLock()).isTrue();
                        lock.unlock();
                        assertThat(threads.get()).as("threads started by the shared resources").isPositive();
                    });
            assertThat(resources.eventExecutorGroup().isShuttingDown()).isFalse();
        } finally {
            resources.shutdown();
        }
    }

    /** The application's MeterRegistry is given to the client: a lock records meters in it. */
    @Test
    void meterRegistryBean_recordsTheClientsMeters() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> {
                    DistributedLock lock = context.getBean(Synchronizers.class).lock("metered");
                    lock.lock();
                    lock.unlock();
                    assertThat(context.getBean(MeterRegistry.class).getMeters())
                            .anySatisfy(meter -> assertThat(meter.getId().getName()).startsWith("synchronizers."));
                });
    }

    /** Without Micrometer on the class path, the client is built without meters. */
    @Test
    void withoutMicrometer_startsWithoutMeters() {
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class));
    }

    /** Without Spring Boot's health support on the class path: no indicator, and start-up does not fail. */
    @Test
    void withoutHealthSupport_noIndicator() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
                .withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class)
                        .doesNotHaveBean("synchronizersHealthIndicator"));
    }

    /** Without Spring Boot's Redis support on the class path: the properties alone, and no fallback bean. */
    @Test
    void withoutBootRedisSupport_usesTheProperties() {
        runner.withClassLoader(new FilteredClassLoader(DataRedisConnectionDetails.class))
                .withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class)
                        .doesNotHaveBean("synchronizersBootRedisDetails"));
    }

    /* --------------- backing off --------------- */

    /** A Synchronizers of the application's: none of ours; health and the lock provider use the application's. */
    @Test
    void userSynchronizers_backsOff_andTheOtherBeansUseIt() {
        runner.withUserConfiguration(UserClient.class).withPropertyValues("synchronizers.uri=redis://127.0.0.1:1")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Synchronizers.class).doesNotHaveBean(Redlock.class);
                    assertThat(context.getBean(Synchronizers.class)).isSameAs(context.getBean("userClient"));
                    assertThat(context.getBean(SynchronizersHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
                    assertThat(context).hasSingleBean(SynchronizersLockProvider.class);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserClient {
        @Bean
        Synchronizers userClient() {
            return RedisSynchronizers.builder().uri(server.uri()).keyPrefix("user").build();
        }
    }

    /** A LockProvider of the application's: ours backs off. */
    @Test
    void userLockProvider_backsOff() {
        LockProvider own = configuration -> Optional.empty();
        runner.withBean(LockProvider.class, () -> own).withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> assertThat(context).hasSingleBean(LockProvider.class)
                        .doesNotHaveBean(SynchronizersLockProvider.class));
    }

    /** management.health.synchronizers.enabled=false: no indicator. */
    @Test
    void healthDisabled_noIndicator() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri(), "management.health.synchronizers.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(SynchronizersHealthIndicator.class));
    }

    /* --------------- ShedLock present or absent --------------- */

    /** ShedLock and synchronizers-shedlock on the class path: a SynchronizersLockProvider whose locks work. */
    @Test
    void shedlockPresent_definesALockProviderOverTheClient() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.shedlock.mode=keep-alive")
                .run(context -> {
                    LockProvider provider = context.getBean(LockProvider.class);
                    assertThat(provider).isInstanceOf(SynchronizersLockProvider.class);
                    LockConfiguration job = new LockConfiguration(Instant.now(), "boot-job", Duration.ofSeconds(10),
                            Duration.ZERO);
                    Optional<SimpleLock> first = provider.lock(job);
                    assertThat(first).isPresent();
                    assertThat(provider.lock(job)).as("taken once, not twice").isEmpty();
                    first.get().unlock();
                });
    }

    /** ShedLock absent (either jar): no LockProvider, and start-up does not fail. */
    @Test
    void shedlockAbsent_noLockProvider() {
        runner.withClassLoader(new FilteredClassLoader(LockProvider.class))
                .withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("synchronizersLockProvider"));
        runner.withClassLoader(new FilteredClassLoader(SynchronizersLockProvider.class))
                .withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("synchronizersLockProvider"));
    }

    /* --------------- Spring Integration present or absent --------------- */

    /**
     * Spring Integration and synchronizers-spring-integration on the class path: a
     * SynchronizersLockRegistry whose locks exclude another client's.
     */
    @Test
    void springIntegrationPresent_definesALockRegistryOverTheClient() {
        String prefix = "boot-registry-" + java.util.UUID.randomUUID();
        runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.key-prefix=" + prefix)
                .run(context -> {
                    LockRegistry<?> registry = context.getBean(LockRegistry.class);
                    assertThat(registry).isInstanceOf(SynchronizersLockRegistry.class);
                    java.util.concurrent.locks.Lock lock = registry.obtain("boot-registry");
                    assertThat(lock.tryLock()).isTrue();
                    try (RedisSynchronizers other = RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                            .build()) {
                        assertThat(other.lock("boot-registry").isLocked()).as("held in Redis").isTrue();
                    } finally {
                        lock.unlock();
                    }
                });
    }

    /** synchronizers.lock-registry.fair=true: the registry's locks are fair ones. */
    @Test
    void lockRegistryFair_isTheFairRegistry() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri(), "synchronizers.lock-registry.fair=true")
                .run(context -> assertThat(context.getBean(SynchronizersLockRegistry.class).toString())
                        .startsWith("SynchronizersLockRegistry[fair,"));
    }

    /** A LockRegistry of the application's own: ours backs off. */
    @Test
    void userLockRegistry_backsOff() {
        runner.withPropertyValues("synchronizers.uri=" + server.uri())
                .withBean("mine", LockRegistry.class, DefaultLockRegistry::new)
                .run(context -> assertThat(context).hasSingleBean(LockRegistry.class)
                        .doesNotHaveBean("synchronizersLockRegistry"));
    }

    /** Spring Integration absent (either jar): no LockRegistry, and start-up does not fail. */
    @Test
    void springIntegrationAbsent_noLockRegistry() {
        runner.withClassLoader(new FilteredClassLoader(LockRegistry.class))
                .withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("synchronizersLockRegistry"));
        runner.withClassLoader(new FilteredClassLoader(SynchronizersLockRegistry.class))
                .withPropertyValues("synchronizers.uri=" + server.uri())
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("synchronizersLockRegistry"));
    }

    /* --------------- configuration metadata --------------- */

    /** The configuration processor's metadata lists the properties, with descriptions, for IDEs. */
    @Test
    void metadata_listsThePropertiesWithDescriptions() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (String name : List.of("synchronizers.uri", "synchronizers.sentinel.master", "synchronizers.sentinel.nodes",
                    "synchronizers.cluster.nodes", "synchronizers.redlock.nodes", "synchronizers.key-prefix",
                    "synchronizers.lease", "synchronizers.command-timeout", "synchronizers.replica-acks.replicas",
                    "synchronizers.fail-fast", "synchronizers.shedlock.mode")) {
                assertThat(json).contains("\"name\": \"" + name + "\"");
            }
            assertThat(json).contains("Prefix of every key and channel");
        }
    }

    /**
     * "management.health.synchronizers.enabled is in the configuration metadata": the switch of the
     * health indicator is listed, with a description and its default, as Spring Boot's own are.
     */
    @Test
    void metadata_listsTheHealthIndicatorSwitch() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json).contains("\"name\": \"management.health.synchronizers.enabled\"");
            assertThat(json).contains("Whether to enable the synchronizers health check");
        }
    }

    /* --------------- helpers --------------- */

    static List<String> uris() {
        return SERVERS.stream().map(RedisServer::uri).toList();
    }

    static List<String> hostPorts() {
        return SERVERS.stream().map(s -> s.host() + ":" + s.port()).toList();
    }

    /** PTTL of {@code key} on {@code on}, through a plain client of the test's. */
    static long pttl(RedisServer on, String key) {
        RedisClient client = RedisClient.create(on.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return connection.sync().pttl(key);
        } finally {
            client.shutdown();
        }
    }
}
