package dev.synchronizers;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A counting semaphore whose permits live in a shared store, so that it bounds a resource across
 * every client that uses the same name.
 *
 * <p>Permits are owned: they belong to the client that acquired them, any thread of that client
 * may release them, and a client cannot release more than it holds. Held permits are leased and
 * renewed by the watchdog, so a client that dies returns its permits when its lease runs out. The
 * total is set once with {@link #trySetPermits(int)} and changed with {@link #addPermits(int)}.
 *
 * <p><b>The one deliberate difference from {@link java.util.concurrent.Semaphore}.</b> There,
 * {@code release()} by a thread that never acquired simply adds a permit. Here, releasing permits
 * this client does not hold throws {@link IllegalStateException} and changes nothing: owned
 * permits are what let a crashed client's permits come back, and let no client give away
 * another's. To hand out new permits, raise the total instead:
 * <pre>{@code
 * Semaphore local = new Semaphore(0);       DistributedSemaphore shared = synchronizers.semaphore("jobs");
 * ...                                        shared.trySetPermits(0);
 * local.release(3);   // 3 new permits       shared.addPermits(3);   // 3 new permits, for every client
 * }</pre>
 * Everything else follows {@code Semaphore}: a negative total is accepted
 * ({@link #trySetPermits(int)}); {@link #tryAcquire(int)} with more permits than the total returns
 * false; {@link #acquire(int)} and {@link #tryAcquire(int, long, TimeUnit)} with more permits than
 * the total wait, for the total to grow by {@link #addPermits(int)} and the permits to be free,
 * honouring interrupts and timeouts; a total never set is 0, so every acquisition waits (as on
 * {@code new Semaphore(0)}); the handle methods ({@link #acquirePermits(int)},
 * {@link #tryAcquirePermits(int, Duration)}, {@link #acquirePermitsAsync(int)}) wait in the same
 * way; and negative requests throw {@link IllegalArgumentException}.
 *
 * <p>Waiters are served in the order they arrived at the store, across all clients, as on a fair
 * {@code java.util.concurrent.Semaphore}: a waiter asking for more permits than are free blocks the
 * waiters behind it, so a large request is never starved by a stream of small ones. The untimed
 * {@link #tryAcquire()} and {@link #tryAcquire(int)} barge, and {@link #drainPermits()} takes what
 * is free now. A release hands its permits to the waiters first in line, who then hold them
 * without asking the store again; nobody else is woken. A waiter asking for more permits than
 * the current total waits out of line (it blocks nobody) and is woken when the total grows.
 *
 * <p>Permits that one thread takes and another returns, or that must not mix with the client's
 * other permits, are taken as a {@link PermitHandle} ({@link #acquirePermits(int)},
 * {@link #tryAcquirePermits(int, Duration)}): the handle's permits are its own, released by
 * {@link PermitHandle#release()} and never by {@link #release(int)}.
 *
 * <p>The total is configuration and persists in the store; the permits held are leased state that
 * ends with its holder. Methods that wait follow {@link java.util.concurrent.Semaphore}'s contract
 * for interrupts and timeouts; all throw {@link SynchronizerUnavailableException} if the store
 * cannot be reached.
 */
public interface DistributedSemaphore {

    /**
     * Returns the name this semaphore was created with.
     *
     * @return the semaphore's name
     */
    String name();

    /**
     * Sets the total number of permits if it has not been set yet. A negative total is accepted,
     * as {@link java.util.concurrent.Semaphore#Semaphore(int)} accepts it: nobody acquires until
     * {@link #addPermits(int)} raises it above what is held.
     *
     * @param permits the total; may be negative
     * @return true if the total was set, false if it had been set already (nothing changes)
     */
    boolean trySetPermits(int permits);

    /**
     * Changes the total number of permits by {@code delta}; a negative delta shrinks it. Permits
     * held beyond a shrunk total stay held until released. This is how new permits are handed out
     * (where {@link java.util.concurrent.Semaphore#release(int)} would be called without an
     * acquire): the new permits go to the waiters first in line, and wake those waiting for the
     * total to grow. Growth is always taken, also of a negative total.
     *
     * @param delta the change to the total
     * @throws IllegalArgumentException if {@code delta} is negative and the total would become
     *     negative; nothing changes
     */
    void addPermits(int delta);

    /**
     * Acquires one permit, waiting until one is available or the thread is interrupted.
     *
     * @throws InterruptedException if the current thread is interrupted on entry or while waiting;
     *     the interrupt status is cleared, nothing is taken and the waiter leaves the queue
     */
    void acquire() throws InterruptedException;

    /**
     * Acquires {@code permits} permits, waiting until they are all available or the thread is
     * interrupted. Zero permits succeed at once. More permits than the total wait, as on {@link
     * java.util.concurrent.Semaphore}, until {@link #addPermits(int)} raises the total far enough
     * and they are free.
     *
     * @param permits the number of permits
     * @throws InterruptedException if the current thread is interrupted on entry or while waiting
     * @throws IllegalArgumentException if {@code permits} is negative
     */
    void acquire(int permits) throws InterruptedException;

    /**
     * Acquires one permit if one is available now.
     *
     * @return true if a permit was acquired
     */
    boolean tryAcquire();

    /**
     * Acquires {@code permits} permits if they are all available now.
     *
     * @param permits the number of permits
     * @return true if the permits were acquired; false if fewer are free, also when {@code permits}
     *     exceeds the total
     * @throws IllegalArgumentException if {@code permits} is negative
     */
    boolean tryAcquire(int permits);

    /**
     * Acquires one permit if one becomes available within the waiting time.
     *
     * @param timeout the longest time to wait
     * @param unit the unit of {@code timeout}
     * @return true if a permit was acquired, false if the waiting time elapsed first
     * @throws InterruptedException if the current thread is interrupted on entry or while waiting
     */
    boolean tryAcquire(long timeout, TimeUnit unit) throws InterruptedException;

    /**
     * Acquires {@code permits} permits if they all become available within the waiting time.
     * More permits than the total wait, for the total to grow, as {@link #acquire(int)} does.
     *
     * @param permits the number of permits
     * @param timeout the longest time to wait
     * @param unit the unit of {@code timeout}
     * @return true if the permits were acquired, false if the waiting time elapsed first
     * @throws InterruptedException if the current thread is interrupted on entry or while waiting
     * @throws IllegalArgumentException if {@code permits} is negative
     */
    boolean tryAcquire(int permits, long timeout, TimeUnit unit) throws InterruptedException;

    /**
     * Releases one permit held by this client, not counting the permits of its
     * {@linkplain PermitHandle handles}. Unlike {@link java.util.concurrent.Semaphore#release()}, it
     * never creates a permit: use {@link #addPermits(int)} for that.
     *
     * @throws IllegalStateException if this client holds no permit outside handles; nothing changes
     */
    void release();

    /**
     * Releases {@code permits} permits held by this client. Permits held by a {@link PermitHandle}
     * are not this method's: they are neither released nor counted, and only the handle releases
     * them.
     *
     * @param permits the number of permits
     * @throws IllegalArgumentException if {@code permits} is negative
     * @throws IllegalStateException if this client holds fewer permits outside handles; nothing
     *     changes
     */
    void release(int permits);

    /**
     * Returns the number of permits available now: the total minus what live holders hold.
     *
     * @return the available permits
     */
    int availablePermits();

    /**
     * Acquires all permits available now, as permits of this client.
     *
     * @return the number of permits acquired
     */
    int drainPermits();

    /**
     * Takes a picture of this semaphore: the total, the permits free, the permits each client holds
     * with the shortest remaining lease among its grants, and how many acquisitions wait. One
     * read-only call to the store; it changes nothing (a grant whose lease ran out counts as free,
     * as the next call would make it). Out of date as soon as it is returned: for monitoring, not
     * control.
     *
     * @return the snapshot
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    SemaphoreSnapshot snapshot();

    /* --------------- handles: permits that belong to an object --------------- */

    /**
     * Acquires {@code permits} permits as a new {@link PermitHandle}, waiting as
     * {@link #acquire(int)} does (the same line, in the same order, with the same wake-ups): the
     * permits belong to the returned handle, which any thread may release, and are renewed by the
     * watchdog until it does. The wait ends when
     * <ul>
     *   <li>the permits are granted: the handle holds them;
     *   <li>the current thread is interrupted: {@link InterruptedException}, with the interrupt
     *       status cleared; nothing is held and the waiter has left the line;
     *   <li>the store cannot be reached: {@link SynchronizerUnavailableException} within the
     *       client's command timeout; whatever the store may have granted meanwhile is given back.
     * </ul>
     * One round trip when the permits are free and nobody waits before it; a waiter served from the
     * line wakes holding its permits, with no round trip of its own. More permits than the total
     * (also a total never set, which is 0) wait, as {@link #acquire(int)} does, until
     * {@link #addPermits(int)} raises the total far enough and they are free.
     *
     * @param permits the number of permits, at least 1
     * @return the handle that holds the permits
     * @throws IllegalArgumentException if {@code permits} is below 1
     * @throws InterruptedException if interrupted on entry or while waiting; nothing is held then
     * @throws SynchronizerUnavailableException if the store cannot be reached
     * @throws IllegalStateException if the client is closed
     */
    PermitHandle acquirePermits(int permits) throws InterruptedException;

    /**
     * Acquires {@code permits} permits as a new {@link PermitHandle} if they become available
     * within {@code wait}, waiting as {@link #tryAcquire(int, long, TimeUnit)} does;
     * {@code Duration.ZERO} (or less) tries once and, like {@code tryAcquire(permits, 0, unit)},
     * honours the line: it does not barge ahead of waiters. More permits than the total (also a total
     * never set) wait for the total to grow, as {@link #tryAcquire(int, long, TimeUnit)} does. The permits are renewed by the watchdog
     * until the handle releases them. The wait ends as for {@link #acquirePermits(int)}, or when
     * the waiting time elapses: the result is then empty, nothing is held and the waiter has left
     * the line.
     *
     * @param permits the number of permits, at least 1
     * @param wait how long to wait at most
     * @return the handle, or empty if the permits were not available within the wait
     * @throws NullPointerException if {@code wait} is null
     * @throws IllegalArgumentException if {@code permits} is below 1
     * @throws InterruptedException if interrupted on entry or while waiting; nothing is held then
     * @throws SynchronizerUnavailableException if the store cannot be reached
     * @throws IllegalStateException if the client is closed
     */
    Optional<PermitHandle> tryAcquirePermits(int permits, Duration wait) throws InterruptedException;

    /**
     * Acquires {@code permits} permits as a new {@link PermitHandle} without blocking the caller:
     * the returned stage completes with the handle once the permits are this client's, as
     * {@link #acquirePermits(int)} would return it. The acquisition waits in the semaphore's queue
     * as {@code acquirePermits} would; no thread is parked per pending acquisition. The stage
     * completes on the client's async executor, never on a network thread.
     *
     * <p>Completing the stage before the permits are granted withdraws the acquisition (it leaves
     * the queue), whichever way the caller completes it: {@code cancel}, {@code complete}, {@code
     * completeExceptionally}, {@code orTimeout}, {@code completeOnTimeout}, {@code completeAsync},
     * or {@code obtrudeValue} or {@code obtrudeException} on a stage not yet complete; permits
     * granted anyway are given back, and the caller's outcome stands. This holds for the returned
     * stage itself (also as {@code toCompletableFuture()}), not for stages derived from it. An
     * {@code obtrude} method on a stage already completed with the handle replaces the outcome but
     * does not release the handle. Closing the client fails pending stages with
     * {@link IllegalStateException}; a store that cannot be reached fails the stage with
     * {@link SynchronizerUnavailableException}; more permits than the semaphore's total wait, as in
     * {@code acquirePermits}, for the total to grow.
     *
     * @param permits how many permits, at least 1
     * @return a stage completed with the handle
     * @throws IllegalArgumentException if {@code permits} is less than 1
     * @throws IllegalStateException if the client is closed
     */
    CompletionStage<PermitHandle> acquirePermitsAsync(int permits);
}
