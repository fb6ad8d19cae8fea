package dev.synchronizers;

import java.util.concurrent.CompletionStage;

/**
 * Permits of a {@link DistributedSemaphore} that belong to this object rather than to the client's
 * common pool: any thread may {@linkplain #release() release} them, so permits can be taken on one
 * thread and returned on another (a {@code CompletableFuture} chain, a task handed between virtual
 * threads, a scheduled job). Obtained from {@link DistributedSemaphore#acquirePermits(int)} and
 * {@link DistributedSemaphore#tryAcquirePermits(int, java.time.Duration)}.
 *
 * <h2>Ownership</h2>
 * A handle's permits are one acquisition, kept apart from every other: {@link #release()} releases
 * exactly this handle's permits, all at once, and nothing else; the semaphore's own
 * {@link DistributedSemaphore#release(int)} never releases them, nor counts them among the permits
 * the client holds, so code that mixes handles with plain {@code acquire()}/{@code release()} cannot
 * return one through the other. Like every permit of the semaphore, they count against its total
 * for every client until released.
 *
 * <h2>Leases</h2>
 * The permits are leased and renewed by the client's watchdog until they are released: the lease
 * belongs to the client, not to the thread that acquired them, so the handle outlives that thread.
 * If the client's process dies, the permits return to the semaphore when their lease runs out.
 * Permits whose lease the store no longer has, or that the watchdog could not renew before it could
 * run out, are <em>lost</em>: the client's lost-hold listener is told (a {@link LostHold} of kind
 * {@code "semaphore"} with thread id {@code -1} and a null {@link LostHold#handle()}, which names
 * only lock handles), {@link #isHeld()} turns false and {@link #release()} throws
 * {@link LostHoldException}. Lost permits are never renewed again by accident: they return to the
 * semaphore, and another acquisition may have them already.
 *
 * <h2>Usage</h2>
 * <pre> {@code
 * try (PermitHandle permits = semaphore.acquirePermits(3)) {
 *     callPartner(request);
 * }}</pre>
 *
 * <p>Thread-safe.
 */
public interface PermitHandle extends AutoCloseable {

    /**
     * Returns the name of the semaphore whose permits this handle holds.
     *
     * @return the semaphore's name
     */
    String name();

    /**
     * Returns how many permits this handle acquired: all of them are released together. Makes no
     * network call, and does not change when the permits are released or lost.
     *
     * @return the number of permits, at least 1
     */
    int permits();

    /**
     * Tells what this client knows of the permits, without a network call: true until they are
     * released or known to be lost, or their client is closed (the watchdog learns of a loss at its next renewal, so the store
     * may have lost them a little earlier). Designed for monitoring, not for synchronization
     * control.
     *
     * @return whether the permits are believed held
     */
    boolean isHeld();

    /**
     * Returns a stage that tells when these permits are lost. It completes with the
     * {@link LostHold} report (kind {@code "semaphore"}, thread id {@code -1}) at the moment the
     * client's lost-hold listeners are told, before the permits can have run out in the store where
     * the watchdog could not renew them ({@link LostHold.Cause#UNRENEWABLE}), and also when the
     * release finds them gone. It completes exceptionally with
     * {@link java.util.concurrent.CancellationException} once the permits are released without
     * having been lost (also when the release could not reach the store). If the client is closed
     * while the permits are held, the close does not release them (they return to the semaphore
     * when their lease runs out) and the stage completes with a {@link LostHold.Cause#ABANDONED}
     * report, which the listeners are not told. So nothing waits on it forever.
     *
     * <p>The stage completes on the client's async executor, never on a network thread; a stage
     * obtained after it completed runs its dependents on the caller's thread, as every completed
     * stage does. Each call returns a new stage, so completing one (through
     * {@code toCompletableFuture()}) changes no other. Makes no network call.
     *
     * @return a stage completed with the report when these permits are lost
     */
    CompletionStage<LostHold> lost();

    /**
     * Releases this handle's permits, from any thread, and serves the semaphore's waiters first in
     * line with them. One round trip.
     *
     * @throws LostHoldException if the permits were lost before (the store no longer had them);
     *     the handle holds nothing afterwards
     * @throws IllegalStateException if they were released before, or the client is closed (then
     *     nothing changes)
     * @throws SynchronizerUnavailableException if the store does not answer; the permits are
     *     dropped here, their release is retried until the store answers, and they return to the
     *     semaphore with their lease at the latest
     */
    void release();

    /**
     * Releases this handle's permits without blocking the caller: as {@link #release()}, run on the
     * client's executor (the builder's {@code asyncExecutor}, or a small pool of the client's own),
     * never on a network thread, with its outcome as the stage's completion: normally, or
     * exceptionally with what {@code release()} would throw. If the executor refuses the task (the
     * client was closed), the stage completes exceptionally at once.
     *
     * @return a stage completed when the release is done
     */
    CompletionStage<Void> releaseAsync();

    /**
     * Releases the permits if they are still held, as {@link #release()}; does nothing if they were
     * released before, so that a try-with-resources block may also release inside.
     *
     * @throws LostHoldException if the permits were lost and not released
     * @throws IllegalStateException if the client is closed and the permits were not released
     * @throws SynchronizerUnavailableException as {@link #release()}
     */
    @Override
    void close();
}
