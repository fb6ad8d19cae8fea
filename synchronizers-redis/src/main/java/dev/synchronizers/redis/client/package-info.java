/**
 * Internal: may change without notice. What every synchronizer of one client shares:
 * {@link dev.synchronizers.redis.client.ClientContext} (and, for a server client,
 * {@link dev.synchronizers.redis.client.Machinery}: scripts, watchdog, wake-ups, follow-ups), the
 * wait loop ({@link dev.synchronizers.redis.client.Acquirer} with this JVM's
 * {@link dev.synchronizers.redis.client.LocalLine} and a waiter's
 * {@link dev.synchronizers.redis.client.QueuePlace} in Redis), the async line, owner strings, the
 * lost-hold listeners and signals, and the options both builders share. For a server client,
 * also how it connects and is wired: its target ({@link dev.synchronizers.redis.client.ServerTarget})
 * and the client it makes ({@link dev.synchronizers.redis.client.ServerClient}).
 */
package dev.synchronizers.redis.client;
