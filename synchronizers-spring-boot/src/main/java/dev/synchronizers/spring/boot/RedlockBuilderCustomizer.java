package dev.synchronizers.spring.boot;

import dev.synchronizers.redis.Redlock;

/**
 * Customizes the {@link Redlock.Builder} of the auto-configured Redlock (when
 * {@code synchronizers.redlock.nodes} is set) after the properties, Boot's {@code ClientResources}
 * and the {@code MeterRegistry} were applied, and before it connects. Every bean of this type is
 * applied, in {@code @Order}.
 */
@FunctionalInterface
public interface RedlockBuilderCustomizer {

    /**
     * Customizes the builder.
     *
     * @param builder the builder, not yet built
     */
    void customize(Redlock.Builder builder);
}
