/**
 * {@code java.util.concurrent}-style synchronizers whose state lives outside the JVM, so that
 * threads in many processes on many machines coordinate as if they shared one lock, semaphore or
 * latch.
 *
 * <p>The entry point is {@link dev.synchronizers.Synchronizers}; an implementation (for example
 * {@code dev.synchronizers.redis.RedisSynchronizers}) creates it. This package holds interfaces,
 * exceptions and listener types only, and has no dependencies.
 *
 * <h2>Exceptions</h2>
 * <ul>
 *   <li>{@link dev.synchronizers.SynchronizerUnavailableException}: the store could not be reached
 *       or did not answer within the configured timeout. Unchecked.</li>
 *   <li>{@link dev.synchronizers.SynchronizerException}: any other failure of the store, for example
 *       a key that holds a value of another type.</li>
 *   <li>{@link dev.synchronizers.LostHoldException}: an {@link java.lang.IllegalMonitorStateException}
 *       thrown by {@code unlock()} when the caller's hold was lost (its lease ran out, or it was
 *       forced) before it released it.</li>
 * </ul>
 */
package dev.synchronizers;
