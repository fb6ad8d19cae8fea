/**
 * A <a href="https://github.com/lukas-krecan/ShedLock">ShedLock</a> {@code LockProvider} over the
 * synchronizers' locks: {@link dev.synchronizers.shedlock.SynchronizersLockProvider}, and
 * {@link dev.synchronizers.shedlock.FencedLock}, the lock it returns, which carries the hold's
 * fencing token.
 *
 * <pre> {@code
 * @Bean
 * LockProvider lockProvider(Synchronizers synchronizers) {
 *     return new SynchronizersLockProvider(synchronizers);
 * }}</pre>
 */
package dev.synchronizers.shedlock;
