/**
 * Internal: may change without notice. The semaphore: {@link dev.synchronizers.redis.semaphore.RedisSemaphore},
 * the facade, with the parts it shares ({@code SemaphoreParts}); how permits are acquired and waited
 * for in the line ({@code Acquisitions}); how grants end ({@code GrantEnds}); a handle's permits
 * ({@code RedisPermitHandle}); its owned permits in this JVM ({@link dev.synchronizers.redis.semaphore.Grants})
 * and its key names.
 */
package dev.synchronizers.redis.semaphore;
