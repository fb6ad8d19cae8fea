package dev.synchronizers.spring.boot3;

import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.spring.boot.BootRedisDetails;
import dev.synchronizers.spring.boot.SynchronizersAutoConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Spring Boot 3.5 parts of the synchronizers' auto-configuration, the ones whose Boot types
 * changed in Boot 4. {@link SynchronizersAutoConfiguration} (of {@code synchronizers-spring-boot},
 * which this artifact brings) makes the client and its other beans on Boot 3.5 as on Boot 4; its
 * health indicator and its fallback to Boot's connection details use Boot 4 types and stay off on
 * Boot 3. This class adds, each only when the application defines none:
 * <ul>
 *   <li>{@code synchronizersHealthIndicator}, the {@code synchronizers} health indicator
 *       ({@link SynchronizersHealthIndicator}), when Spring Boot 3's actuator is on the class path
 *       and {@code management.health.synchronizers.enabled} is not false; over the Redlock if there
 *       is one, else over the {@code Synchronizers};
 *   <li>a {@link BootRedisDetails.Lookup} over Boot 3's {@code RedisConnectionDetails} (from
 *       {@code spring.data.redis.*}, or a bean of Testcontainers' or Docker Compose's), so that with
 *       no address in the {@code synchronizers.*} properties the client connects where Boot's own
 *       Redis support does.
 * </ul>
 *
 * <p>It runs after {@link SynchronizersAutoConfiguration}, and each bean is conditional on Boot 3's
 * classes and on no bean of its name or type being defined already, so nothing is defined twice; on
 * Boot 4 (whose types differ) it defines nothing.
 */
@AutoConfiguration(after = SynchronizersAutoConfiguration.class)
public final class SynchronizersBoot3AutoConfiguration {

    /** Creates the auto-configuration; Spring Boot does, from its imports file. */
    public SynchronizersBoot3AutoConfiguration() {
    }

    /** Boot 3's Redis connection details, the address used when the properties give none. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails")
    static class ConnectionDetailsConfiguration {

        @Bean
        @ConditionalOnMissingBean(BootRedisDetails.Lookup.class)
        BootRedisDetails.Lookup synchronizersBootRedisDetails(ObjectProvider<RedisConnectionDetails> details) {
            return () -> {
                RedisConnectionDetails found = details.getIfUnique();
                return found == null ? null : new RedisConnectionDetailsView(found);
            };
        }
    }

    /**
     * The {@code synchronizers} health indicator, when Spring Boot 3's health support is on the
     * class path. Two levels: the outer class's class condition keeps the inner one, whose
     * {@code @ConditionalOnEnabledHealthIndicator} names a class of that support, from being read
     * at all without it.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.actuate.health.HealthIndicator",
            "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"})
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
}
