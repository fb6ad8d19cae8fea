package dev.synchronizers.redis;

import java.time.Duration;
import java.util.Objects;

/**
 * The checks of the settings both builders share ({@link RedisSynchronizers.Builder} and
 * {@link Redlock.Builder}), so that the same bad value gets the same message from either.
 */
final class Settings {

    /** The shortest lease a client may use: a tick is a third of it. */
    static final long MIN_LEASE_MILLIS = 30;

    private Settings() {
    }

    /**
     * @throws NullPointerException if {@code keyPrefix} is null
     * @throws IllegalArgumentException if it is empty or contains '{' or '}'
     */
    static String keyPrefix(String keyPrefix) {
        Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
        if (keyPrefix.isEmpty() || keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("keyPrefix must be non-empty and free of '{' and '}': \"" + keyPrefix + "\"");
        }
        return keyPrefix;
    }

    /**
     * @throws NullPointerException if {@code lease} is null
     * @throws IllegalArgumentException if it is shorter than {@value #MIN_LEASE_MILLIS} ms
     */
    static Duration lease(Duration lease) {
        Objects.requireNonNull(lease, "lease must not be null");
        if (lease.toMillis() < MIN_LEASE_MILLIS) {
            throw new IllegalArgumentException("lease must be at least " + MIN_LEASE_MILLIS + " ms: " + lease.toMillis() + " ms");
        }
        return lease;
    }

    /**
     * @throws NullPointerException if {@code commandTimeout} is null
     * @throws IllegalArgumentException if it is not positive
     */
    static Duration commandTimeout(Duration commandTimeout) {
        Objects.requireNonNull(commandTimeout, "commandTimeout must not be null");
        if (commandTimeout.isNegative() || commandTimeout.isZero()) {
            throw new IllegalArgumentException("commandTimeout must be > 0: " + commandTimeout);
        }
        return commandTimeout;
    }
}
