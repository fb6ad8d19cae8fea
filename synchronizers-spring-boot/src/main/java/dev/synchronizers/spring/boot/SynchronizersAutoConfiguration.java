package dev.synchronizers.spring.boot;

import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.shedlock.SynchronizersLockProvider;
import dev.synchronizers.spring.integration.SynchronizersLockRegistry;
import dev.synchronizers.test.InMemorySynchronizers;
import io.lettuce.core.resource.ClientResources;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.function.Supplier;
import net.javacrumbs.shedlock.core.LockProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Auto-configuration of the synchronizers: one client for the application, made from the
 * {@code synchronizers.*} properties ({@link SynchronizersProperties}), and the beans that use it.
 *
 * <p>Beans, each only when the application defines none of its type:
 * <ul>
 *   <li>{@link Synchronizers} (a {@link RedisSynchronizers}) on a standalone server, a Sentinel
 *       set or a cluster; or, when {@code synchronizers.redlock.nodes} is set, a {@link Redlock}
 *       instead (Redlock has locks only, so there is then no {@code Synchronizers} bean). An
 *       application that defines either bean itself gets neither. Both are closed when the context
 *       closes. With {@code synchronizers.in-memory=true}, an {@code InMemorySynchronizers}
 *       (module {@code synchronizers-test}) instead, for tests: no connection anywhere, the address
 *       properties ignored; start-up fails, naming the module, if it is not on the class path.
 *   <li>{@code synchronizersHealthIndicator}, the {@code synchronizers} health indicator
 *       ({@link SynchronizersHealthIndicator}), when Spring Boot's health support is on the class
 *       path and {@code management.health.synchronizers.enabled} is not false.
 *   <li>a ShedLock {@code LockProvider} ({@link SynchronizersLockProvider}) when
 *       {@code synchronizers-shedlock} is on the class path; over the Redlock if there is one, else
 *       over the {@code Synchronizers}; its mode from {@code synchronizers.shedlock.mode}.
 *   <li>a Spring Integration {@code LockRegistry} ({@link SynchronizersLockRegistry}) when
 *       {@code synchronizers-spring-integration} is on the class path; over the Redlock if there is
 *       one, else over the {@code Synchronizers}; fair if {@code synchronizers.lock-registry.fair}.
 * </ul>
 *
 * <p>The client shares Spring Boot's Lettuce {@code ClientResources} bean (its event loops) when
 * there is one, but keeps the library's own client options (no command replay after a reconnect,
 * TCP keep-alive, cluster topology refresh) and its own connections: it never defines, replaces or
 * uses Boot's {@code RedisConnectionFactory}. With no address in the properties it connects where
 * Boot's connection details point ({@link BootRedisDetails}: Boot 4's
 * {@code DataRedisConnectionDetails}; on Boot 3.5, {@code synchronizers-spring-boot3} reads Boot 3's
 * {@code RedisConnectionDetails} and adds the health indicator, whose Boot 4 types this class uses). The application's {@code MeterRegistry} is
 * given to the client when there is one. {@link SynchronizersBuilderCustomizer} and
 * {@link RedlockBuilderCustomizer} beans adjust the builders before they connect.
 *
 * <p>Redis down at start-up: start-up fails with the client's
 * {@code SynchronizerUnavailableException} after the command timeout (reported by the starter's
 * {@code FailureAnalyzer}: the server, where its address came from, and what to set), unless
 * {@code synchronizers.fail-fast=false}: then the {@code Synchronizers} bean connects on first use
 * (each call throws {@code SynchronizerUnavailableException} within the command timeout until Redis
 * answers) and the health indicator is DOWN meanwhile.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@EnableConfigurationProperties(SynchronizersProperties.class)
public final class SynchronizersAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(SynchronizersAutoConfiguration.class);

    /** Creates the auto-configuration; Spring Boot does, from its imports file. */
    public SynchronizersAutoConfiguration() {
    }

    /* --------------- the client --------------- */

    /** One {@link RedisSynchronizers}, unless Redlock nodes are given or the application has its own client. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "synchronizers", name = "in-memory", havingValue = "false", matchIfMissing = true)
    @Conditional(NoRedlockNodes.class)
    @ConditionalOnMissingBean({Synchronizers.class, Redlock.class})
    static class ClientConfiguration {

        @Bean
        Synchronizers synchronizers(SynchronizersProperties properties, ObjectProvider<BootRedisDetails.Lookup> boot,
                ObjectProvider<ClientResources> clientResources,
                ObjectProvider<SynchronizersBuilderCustomizer> customizers) {
            RedisTarget target = RedisTarget.fromProperties(properties);
            if (target == null) {
                BootRedisDetails.Lookup lookup = boot.getIfUnique();
                BootRedisDetails details = lookup == null ? null : lookup.find();
                target = details == null ? null : BootConnectionDetails.target(details);
            }
            if (target == null) {
                target = RedisTarget.LOCALHOST;
            }
            RedisSynchronizers.Builder builder = RedisSynchronizers.builder()
                    .keyPrefix(properties.getKeyPrefix())
                    .lease(properties.getLease())
                    .commandTimeout(properties.getCommandTimeout());
            target.applyTo(builder);
            SynchronizersProperties.ReplicaAcks acks = properties.getReplicaAcks();
            if (acks.getReplicas() != 0) {
                builder.replicaAcks(acks.getReplicas(), acks.getTimeout());
            }
            ClientResources resources = clientResources.getIfUnique();
            if (resources != null) {
                builder.clientResources(resources);
            }
            customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
            Supplier<RedisSynchronizers> connect = builder::build;
            log.debug("synchronizers: connecting to Redis from {}", target.source());
            return properties.isFailFast()
                    ? connect.get()
                    : new ConnectOnFirstUse(connect, properties.getCommandTimeout(), target.source());
        }
    }

    /** A {@link Redlock} over {@code synchronizers.redlock.nodes}, unless the application has its own client. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "synchronizers", name = "in-memory", havingValue = "false", matchIfMissing = true)
    @Conditional(RedlockNodes.class)
    @ConditionalOnMissingBean({Synchronizers.class, Redlock.class})
    static class RedlockConfiguration {

        @Bean
        Redlock redlock(SynchronizersProperties properties, ObjectProvider<ClientResources> clientResources,
                ObjectProvider<RedlockBuilderCustomizer> customizers) {
            List<String> given = RedisTarget.given(properties);
            if (given.size() > 1) {
                throw new IllegalStateException("synchronizers: set only one of " + String.join(", ", given)
                        + " (each says where Redis is)");
            }
            if (properties.getReplicaAcks().getReplicas() != 0) {
                throw new IllegalStateException("synchronizers.replica-acks.replicas is not supported with"
                        + " synchronizers.redlock.nodes: Redlock's nodes are independent servers");
            }
            if (!properties.isFailFast()) {
                log.warn("synchronizers.fail-fast=false does not apply to Redlock: start-up needs a quorum of"
                        + " synchronizers.redlock.nodes; the nodes beyond it may be down and are connected later");
            }
            List<String> nodes = RedisTarget.nodeUris(properties.getRedlock().getNodes(), properties.getUsername(),
                    properties.getPassword());
            Redlock.Builder builder = Redlock.builder()
                    .nodes(nodes.toArray(String[]::new))
                    .keyPrefix(properties.getKeyPrefix())
                    .lease(properties.getLease())
                    .commandTimeout(properties.getCommandTimeout());
            Double drift = properties.getRedlock().getClockDriftFactor();
            if (drift != null) {
                builder.clockDriftFactor(drift);
            }
            ClientResources resources = clientResources.getIfUnique();
            if (resources != null) {
                builder.clientResources(resources);
            }
            customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
            return builder.build();
        }
    }

    /**
     * {@code synchronizers.in-memory=true}: an {@link InMemorySynchronizers}, one client of a store
     * of its own whose holds have {@code synchronizers.lease}, unless the application has its own
     * client. Injectable as {@code Synchronizers} and as {@code InMemorySynchronizers} (for its
     * {@code loseHold} and {@code setUnavailable} hooks).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "synchronizers", name = "in-memory", havingValue = "true")
    @ConditionalOnClass(name = "dev.synchronizers.test.InMemorySynchronizers")
    @ConditionalOnMissingBean({Synchronizers.class, Redlock.class})
    static class InMemoryConfiguration {

        @Bean
        InMemorySynchronizers synchronizers(SynchronizersProperties properties) {
            log.info("synchronizers: in memory (synchronizers.in-memory=true), no Redis");
            return InMemorySynchronizers.newStore(properties.getLease()).client();
        }
    }

    /** {@code synchronizers.in-memory=true} without {@code synchronizers-test}: start-up fails, naming it. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "synchronizers", name = "in-memory", havingValue = "true")
    @ConditionalOnMissingClass("dev.synchronizers.test.InMemorySynchronizers")
    @ConditionalOnMissingBean({Synchronizers.class, Redlock.class})
    static class InMemoryMissingConfiguration {

        @Bean
        Synchronizers synchronizers() {
            throw new IllegalStateException("synchronizers.in-memory=true needs dev.synchronizers.test."
                    + "InMemorySynchronizers on the class path: add the dependency"
                    + " dev.synchronizers:synchronizers-test (test scope)");
        }
    }

    /** Spring Boot's Redis connection details, the address used when the properties give none. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails")
    static class BootConnectionDetailsConfiguration {

        @Bean
        BootRedisDetails.Lookup synchronizersBootRedisDetails(ObjectProvider<DataRedisConnectionDetails> details) {
            return () -> {
                DataRedisConnectionDetails found = details.getIfUnique();
                return found == null ? null : DataRedisDetails.of(found);
            };
        }
    }

    /* --------------- metrics --------------- */

    /** The application's {@code MeterRegistry}, given to the client's builder when there is one. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class MetricsConfiguration {

        @Bean
        @Order(0)
        SynchronizersBuilderCustomizer synchronizersMeterRegistry(ObjectProvider<MeterRegistry> registry) {
            return builder -> {
                MeterRegistry found = registry.getIfUnique();
                if (found != null) {
                    builder.meterRegistry(found);
                }
            };
        }

        @Bean
        @Order(0)
        RedlockBuilderCustomizer redlockMeterRegistry(ObjectProvider<MeterRegistry> registry) {
            return builder -> {
                MeterRegistry found = registry.getIfUnique();
                if (found != null) {
                    builder.meterRegistry(found);
                }
            };
        }
    }

    /* --------------- health --------------- */

    /**
     * The {@code synchronizers} health indicator, when Spring Boot's health support is on the class
     * path. Two levels: the outer class's class condition keeps the inner one, whose
     * {@code @ConditionalOnEnabledHealthIndicator} names a class of that support, from being read
     * at all without it.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class HealthConfiguration {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnEnabledHealthIndicator("synchronizers")
        static class EnabledHealthConfiguration {

            @Bean
            @ConditionalOnMissingBean(name = "synchronizersHealthIndicator")
            SynchronizersHealthIndicator synchronizersHealthIndicator(ObjectProvider<Redlock> redlock,
                    ObjectProvider<Synchronizers> synchronizers) {
                Redlock quorum = redlock.getIfUnique();
                if (quorum != null) {
                    return new SynchronizersHealthIndicator(quorum::lock, quorum.toString());
                }
                Synchronizers client = synchronizers.getObject();
                return new SynchronizersHealthIndicator(client::lock, client.toString());
            }
        }
    }

    /* --------------- adapters --------------- */

    /**
     * A ShedLock {@code LockProvider}, when {@code synchronizers-shedlock} is on the class path and
     * the application defines no {@code LockProvider}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({LockProvider.class, SynchronizersLockProvider.class})
    static class ShedLockConfiguration {

        @Bean
        @ConditionalOnMissingBean(LockProvider.class)
        SynchronizersLockProvider synchronizersLockProvider(SynchronizersProperties properties,
                ObjectProvider<Redlock> redlock, ObjectProvider<Synchronizers> synchronizers) {
            Redlock quorum = redlock.getIfUnique();
            SynchronizersLockProvider provider = quorum != null
                    ? new SynchronizersLockProvider(quorum::lock)
                    : new SynchronizersLockProvider(synchronizers.getObject());
            return switch (properties.getShedlock().getMode()) {
                case LEASE -> provider;
                case KEEP_ALIVE -> provider.withKeepAlive();
                case KEEP_ALIVE_UP_TO_LOCK_AT_MOST_FOR -> provider.withKeepAliveUpTo();
            };
        }
    }

    /**
     * A Spring Integration {@code LockRegistry}, when {@code synchronizers-spring-integration} is on
     * the class path and the application defines no {@code LockRegistry}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({LockRegistry.class, SynchronizersLockRegistry.class})
    static class LockRegistryConfiguration {

        @Bean
        @ConditionalOnMissingBean(LockRegistry.class)
        SynchronizersLockRegistry synchronizersLockRegistry(SynchronizersProperties properties,
                ObjectProvider<Redlock> redlock, ObjectProvider<Synchronizers> synchronizers) {
            Redlock quorum = redlock.getIfUnique();
            boolean fair = properties.getLockRegistry().isFair();
            if (quorum != null) {
                if (fair) {
                    throw new IllegalStateException("synchronizers.lock-registry.fair=true is not available with"
                            + " synchronizers.redlock.nodes: a Redlock has no fair lock");
                }
                return new SynchronizersLockRegistry(quorum::lock);
            }
            return fair ? SynchronizersLockRegistry.fair(synchronizers.getObject())
                    : new SynchronizersLockRegistry(synchronizers.getObject());
        }
    }

    /* --------------- conditions --------------- */

    /** Whether {@code synchronizers.redlock.nodes} names any node. */
    static boolean hasRedlockNodes(ConditionContext context) {
        return Binder.get(context.getEnvironment())
                .bind("synchronizers.redlock.nodes", Bindable.listOf(String.class))
                .map(nodes -> !nodes.isEmpty())
                .orElse(false);
    }

    /** Matches when {@code synchronizers.redlock.nodes} is set. */
    static final class RedlockNodes extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return hasRedlockNodes(context)
                    ? ConditionOutcome.match("synchronizers.redlock.nodes is set")
                    : ConditionOutcome.noMatch("synchronizers.redlock.nodes is not set");
        }
    }

    /** Matches when {@code synchronizers.redlock.nodes} is not set. */
    static final class NoRedlockNodes extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return hasRedlockNodes(context)
                    ? ConditionOutcome.noMatch("synchronizers.redlock.nodes is set")
                    : ConditionOutcome.match("synchronizers.redlock.nodes is not set");
        }
    }
}
