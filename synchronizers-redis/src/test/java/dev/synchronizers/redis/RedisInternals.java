package dev.synchronizers.redis;

import dev.synchronizers.Synchronizers;

/** Test bridge to the package-private diagnostics of {@link RedisSynchronizers}. */
public final class RedisInternals {

    private RedisInternals() {
    }

    /** Holds the client's watchdog tracks. */
    public static int watchdogEntries(Synchronizers synchronizers) {
        return ((RedisSynchronizers) synchronizers).watchdogEntries();
    }

    /** Channels the client's wake-up dispatcher is subscribed to. */
    public static int subscribedChannels(Synchronizers synchronizers) {
        return ((RedisSynchronizers) synchronizers).subscribedChannels();
    }

    /** Releases the client's watchdog still retries because Redis could not be reached. */
    public static int pendingRetries(Synchronizers synchronizers) {
        return ((RedisSynchronizers) synchronizers).pendingRetries();
    }

    /** Runs one watchdog tick of the client now. */
    public static void renewNow(Synchronizers synchronizers) {
        ((RedisSynchronizers) synchronizers).renewNow();
    }
}
