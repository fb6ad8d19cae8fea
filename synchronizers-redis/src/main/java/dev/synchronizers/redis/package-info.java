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
 * <p>Nothing else here is public API. The code behind the entry points lives in sub-packages by
 * subject, all internal (a module descriptor exports this package only, and each sub-package says
 * "Internal: may change without notice"): {@code lock} (the lock, fair lock and read-write lock with
 * their backends, cache, conditions and handles), {@code semaphore}, {@code latch}, {@code quorum}
 * (the Redlock's lock backend and vote counting), {@code client} (what every synchronizer of one
 * client shares: the context, the wait loop, owners, options), and the machinery below them:
 * {@code topology}, {@code watchdog}, {@code wakeup}, {@code metrics}, {@code script}, {@code support}.
 */
package dev.synchronizers.redis;
