/**
 * The Redis implementation of the synchronizers API, on the Lettuce client. The only public types
 * are {@link dev.synchronizers.redis.RedisSynchronizers} and its builder; the synchronizers
 * themselves are package-private and reached through the {@link dev.synchronizers.Synchronizers}
 * interface.
 */
package dev.synchronizers.redis;
