package dev.synchronizers.spring.boot;

import dev.synchronizers.redis.RedisSynchronizers;

/**
 * Customizes the {@link RedisSynchronizers.Builder} of the auto-configured client after the
 * {@code synchronizers.*} properties, Boot's {@code ClientResources} and the {@code MeterRegistry}
 * were applied, and before it connects: for settings that have no property, such as a lost-hold
 * listener or a meter name tag. Every bean of this type is applied, in {@code @Order}.
 */
@FunctionalInterface
public interface SynchronizersBuilderCustomizer {

    /**
     * Customizes the builder.
     *
     * @param builder the builder, not yet built
     */
    void customize(RedisSynchronizers.Builder builder);
}
