/**
 * Internal: may change without notice. The count-down latch:
 * {@link dev.synchronizers.redis.latch.RedisCountDownLatch} and its key names.
 */
package dev.synchronizers.redis.latch;
