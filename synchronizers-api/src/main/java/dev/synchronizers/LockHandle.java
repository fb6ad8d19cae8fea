package dev.synchronizers;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A hold of a {@link DistributedLock} that belongs to this object rather than to a thread: any
 * thread may {@linkplain #verify() verify}, {@linkplain #extend(Duration) extend} or
 * {@linkplain #release() release} it, so a hold can be taken on one thread and released on
 * another (a {@code CompletableFuture} chain, a task handed between virtual threads, a scheduled
 * job). Obtained from {@link DistributedLock#acquire()} and its variants.
 *
 * <h2>Ownership</h2>
 * A handle hold is never reentrant: while a handle holds a name, another
 * {@code tryAcquire(Duration.ZERO)} on it returns empty, from any thread, as does
 * {@link DistributedLock#tryLock()}; and while a thread holds the name by {@code lock()},
 * {@code tryAcquire(Duration.ZERO)} returns empty, also on that thread. Each acquisition is a fresh
 * hold with a {@linkplain #fencingToken() fencing token} greater than every earlier one of the
 * name, whichever kind of hold had it.
 *
 * <h2>Leases</h2>
 * A handle taken without a lease ({@link DistributedLock#acquire()}) is renewed by the client's
 * watchdog, like a thread hold, until it is released; one taken with a lease, or
 * {@linkplain #extend(Duration) extended}, ends with that lease. A handle whose hold ends other
 * than by {@link #release()} is <em>lost</em>: the client's lost-hold listener is told (with a
 * {@link LostHold} that names this handle; not for a fixed lease that ran out), {@link #isHeld()}
 * turns false and {@link #release()} throws {@link LostHoldException}.
 *
 * <h2>Usage</h2>
 * <pre> {@code
 * try (LockHandle handle = lock.acquire()) {
 *     write(order, handle.fencingToken());
 * }}</pre>
 *
 * <p>Thread-safe. A handle keeps its lock object reachable while it holds.
 */
public interface LockHandle extends AutoCloseable {

    /**
     * Returns the name of the lock this handle holds.
     *
     * @return the lock's name
     */
    String name();

    /**
     * Returns this hold's fencing token: greater than every token issued earlier for the name, to
     * thread holds and handle holds alike. Makes no network call.
     *
     * @return the token
     */
    long fencingToken();

    /**
     * Tells what this client knows of the hold, without a network call: true until it is
     * released, {@linkplain #releaseAfter(Duration) let go}, or known to be lost, or the client is
     * closed.
     *
     * @return whether the hold is believed held
     */
    boolean isHeld();

    /**
     * Returns a stage that tells when this hold is lost. It completes with the {@link LostHold}
     * report (whose {@link LostHold#handle()} is this handle) at the moment the client's lost-hold
     * listeners are told, before the hold can have run out in the store where the watchdog could
     * not renew it ({@link LostHold.Cause#UNRENEWABLE}); it also completes so when
     * {@link #verify()}, {@link #extend(Duration)} or the release find the hold gone, and, with
     * {@link LostHold.Cause#LEASE_EXPIRED}, when a fixed lease runs out (which listeners are not
     * told). It completes exceptionally with {@link java.util.concurrent.CancellationException}
     * once the hold is released, or {@linkplain #releaseAfter(Duration) let go}, without having
     * been lost (also when the release could not reach the store). If the client is closed while
     * the hold is held, the close does not release it (it expires with its lease in the store) and
     * the stage completes with a {@link LostHold.Cause#ABANDONED} report, which the listeners are
     * not told. So nothing waits on it forever.
     *
     * <p>The stage completes on the client's async executor, never on a network thread; a stage
     * obtained after it completed runs its dependents on the caller's thread, as every completed
     * stage does. Each call returns a new stage, so completing one (through
     * {@code toCompletableFuture()}) changes no other. Makes no network call.
     *
     * <pre> {@code
     * handle.lost().thenAccept(report -> worker.interrupt());}</pre>
     *
     * <p>{@link DistributedLock#callLocked} builds on it: it stops its work when the hold is lost.
     *
     * @return a stage completed with the report when this hold is lost
     */
    CompletionStage<LostHold> lost();

    /**
     * Asks the store whether it still has this hold: one round trip (one per node, in parallel,
     * for a quorum lock). A hold found gone is known lost from then on: the lost-hold listener is
     * told at once, not at the watchdog's next renewal.
     *
     * @return true if the store has the hold; false if it does not, or the hold was released or
     *     known lost before
     * @throws SynchronizerUnavailableException if the store does not answer within the command
     *     timeout; nothing is known then
     * @throws IllegalStateException if the client is closed
     */
    boolean verify();

    /**
     * Gives the hold a fixed lease of {@code lease} from now, by the store's clock: the watchdog
     * stops renewing it, and it ends when that lease runs out unless released first. One round
     * trip (one per node, in parallel, for a quorum lock). A hold found gone is known lost.
     *
     * @param lease the new lease, at least 1 ms
     * @return true if the store had the hold and now has it for {@code lease}; false if it was
     *     lost (now or before)
     * @throws NullPointerException if {@code lease} is null
     * @throws IllegalArgumentException if {@code lease} is not positive, under 1 ms or over 3650
     *     days (a quorum lock also refuses one its clock-drift allowance eats half of)
     * @throws IllegalStateException if the hold was released, or the client is closed
     * @throws SynchronizerUnavailableException if the store does not answer; the hold is then
     *     unchanged where the call did not arrive, and renewed as before
     */
    boolean extend(Duration lease);

    /**
     * Lets the hold go without freeing the lock: the watchdog stops renewing it, and the store
     * keeps it closed to everyone for {@code keepClosedFor} more by the store's clock (ShedLock's
     * {@code lockAtLeastFor}), after which it ends by itself. Nobody is woken: waiters find the lock
     * free when their wait for the holder's lease runs out. Afterwards the handle is no longer held,
     * and {@link #release()} throws {@link IllegalStateException}. {@code Duration.ZERO} releases at
     * once, like {@link #release()}.
     *
     * @param keepClosedFor how long the lock stays closed from now; zero to release now
     * @throws NullPointerException if {@code keepClosedFor} is null
     * @throws IllegalArgumentException if it is negative or over 3650 days
     * @throws LostHoldException if the hold was lost (the store no longer had it)
     * @throws IllegalStateException if the hold was released already, or the client is closed
     * @throws SynchronizerUnavailableException if the store does not answer; the hold then ends
     *     with its current lease at the latest
     */
    void releaseAfter(Duration keepClosedFor);

    /**
     * Releases the hold, from any thread, and wakes the next waiter. One round trip.
     *
     * @throws LostHoldException if the hold was lost before (the store no longer had it)
     * @throws IllegalStateException if it was released before, or the client is closed
     * @throws SynchronizerUnavailableException if the store does not answer; the hold is dropped
     *     here, its release is retried until the store answers, and it ends with its lease at the
     *     latest
     */
    void release();

    /**
     * Releases the hold without blocking the caller: as {@link #release()}, with its outcome as the
     * stage's completion (normally, or exceptionally with what {@code release()} would throw). The
     * stage completes on the client's executor, never on a network thread.
     *
     * @return a stage completed when the release is done
     */
    CompletionStage<Void> releaseAsync();

    /**
     * Releases the hold if it is still held, as {@link #release()}; does nothing if it was released
     * or {@linkplain #releaseAfter(Duration) let go} before, so that a try-with-resources block may
     * also release inside.
     *
     * @throws LostHoldException if the hold was lost and not released
     * @throws SynchronizerUnavailableException as {@link #release()}
     */
    @Override
    void close();
}
