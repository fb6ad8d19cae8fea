/**
 * The Redis implementation of the synchronizers API, on the Lettuce client.
 *
 * <p>The public types are two entry points, each with its builder:
 * <ul>
 *   <li>{@link dev.synchronizers.redis.RedisSynchronizers} and
 *       {@link dev.synchronizers.redis.RedisSynchronizers.Builder}: a
 *       {@link dev.synchronizers.Synchronizers} (locks, fair locks, read-write locks, semaphores
 *       and count-down latches) on one standalone server, the master a Sentinel set names, or a
 *       Redis Cluster.</li>
 *   <li>{@link dev.synchronizers.redis.Redlock} and {@link dev.synchronizers.redis.Redlock.Builder}:
 *       a quorum lock over independent Redis masters, whose locks are
 *       {@link dev.synchronizers.DistributedLock}s held while a majority of the masters hold
 *       them.</li>
 * </ul>
 *
 * <p>Everything else in this package is package-private, and callers never name it: the
 * synchronizers themselves ({@code RedisLock}, {@code RedisReadWriteLock}, {@code RedisSemaphore},
 * {@code RedisCountDownLatch} and the lock behind {@code Redlock.lock}), reached only through the
 * {@code dev.synchronizers} interfaces the entry points return; the mechanism they share (the wait
 * loop, this JVM's holds, the lost-hold listeners); the settings both builders share; and each
 * synchronizer's key names, built in one place per synchronizer. The sub-packages ({@code script},
 * {@code watchdog}, {@code wakeup}, {@code topology}, {@code quorum}, {@code metrics},
 * {@code support}) are internal and may change without notice.
 */
package dev.synchronizers.redis;

import dev.synchronizers.redis.latch.RedisCountDownLatch;
import dev.synchronizers.redis.lock.RedisLock;
import dev.synchronizers.redis.lock.RedisReadWriteLock;
import dev.synchronizers.redis.semaphore.RedisSemaphore;
