package dev.synchronizers;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A countdown latch whose count lives in a shared store: threads of any client wait until the
 * count, counted down by threads of any client, reaches zero.
 *
 * <p>Unlike {@link java.util.concurrent.CountDownLatch}, the count is set after creation with
 * {@link #trySetCount(long)}, and only while the latch is at zero or unset, so a latch can be used
 * for one batch after another. Methods that wait follow {@code CountDownLatch}'s contract for
 * interrupts and timeouts; all throw {@link SynchronizerUnavailableException} if the store cannot
 * be reached.
 *
 * <p>Reaching zero releases every waiter of every client with one message; a waiter that missed
 * it (a reconnect) still returns, because it checks the count after subscribing and after every
 * reconnect. A latch at zero leaves nothing in the store. A latch still counting down has no
 * holder whose lease could end it, so it persists until it reaches zero or is {@link #delete()
 * deleted}.
 */
public interface DistributedCountDownLatch {

    /**
     * Returns the name this latch was created with.
     *
     * @return the latch's name
     */
    String name();

    /**
     * Sets the count if the latch is at zero or has never been set. A count of zero sets nothing:
     * it returns true if the latch is open already.
     *
     * @param count the count; must not be negative
     * @return true if the count was set, false if the latch is still counting down (nothing changes)
     * @throws IllegalArgumentException if {@code count} is negative; nothing changes
     */
    boolean trySetCount(long count);

    /**
     * Decrements the count; at zero, releases every waiter of every client. Does nothing if the
     * count is zero already.
     */
    void countDown();

    /**
     * Deletes a latch that is still counting down: its waiters return as if the count had reached
     * zero, and nothing of it remains in the store.
     *
     * @return true if the latch was counting down, false if it was at zero already
     */
    boolean delete();

    /**
     * Returns the current count, zero if it was never set.
     *
     * @return the count
     */
    long getCount();

    /**
     * Waits until the count reaches zero or the thread is interrupted; returns at once if it is
     * zero.
     *
     * @throws InterruptedException if the current thread is interrupted on entry or while waiting
     */
    void await() throws InterruptedException;

    /**
     * Waits until the count reaches zero, the waiting time elapses or the thread is interrupted.
     *
     * @param timeout the longest time to wait
     * @param unit the unit of {@code timeout}
     * @return true if the count reached zero, false if the waiting time elapsed first
     * @throws InterruptedException if the current thread is interrupted on entry or while waiting
     */
    boolean await(long timeout, TimeUnit unit) throws InterruptedException;

    /**
     * Waits for the count to reach zero without blocking the caller: the returned stage completes
     * when {@link #await()} would return. No thread is parked per pending wait: a client's pending
     * waits on one latch object are waited for by one of its threads. The stage completes on the
     * client's async executor, never on a network thread. Completing it before the count reaches
     * zero, whichever way ({@code cancel}, {@code complete}, {@code completeExceptionally}, {@code
     * orTimeout}, {@code completeOnTimeout}, ...), withdraws the wait; this holds for the returned
     * stage itself, not for stages derived from it. Closing
     * the client fails pending stages with {@link IllegalStateException}; a store that cannot be
     * reached fails them with {@link SynchronizerUnavailableException}.
     *
     * @return a stage completed once the count is zero
     * @throws IllegalStateException if the client is closed
     */
    CompletionStage<Void> awaitAsync();
}
