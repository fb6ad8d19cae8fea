/**
 * Internal: may change without notice. The semaphore: {@link dev.synchronizers.redis.semaphore.RedisSemaphore},
 * its owned permits in this JVM ({@link dev.synchronizers.redis.semaphore.Grants}) and its key names.
 */
package dev.synchronizers.redis.semaphore;
