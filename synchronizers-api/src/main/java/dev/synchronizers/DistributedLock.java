package dev.synchronizers;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A reentrant mutual exclusion {@link Lock} whose state lives in a shared store, so that it
 * excludes threads of every client, in any process, that use the same name.
 *
 * <h2>Ownership</h2>
 * A hold belongs to one thread of one client: the owner is the pair (client id, thread id), where
 * the client id is random per {@link Synchronizers} instance. As with
 * {@link java.util.concurrent.locks.ReentrantLock}, the owning thread may acquire the lock again
 * ({@link #getHoldCount()} counts how often), and only the owning thread may release it: an
 * {@link #unlock()} by any other thread, even one of the same client, throws
 * {@link IllegalMonitorStateException} and changes nothing.
 *
 * <h2>Fairness</h2>
 * A lock from {@code Synchronizers.lock(name)} is non-fair: a thread that asks while the lock is
 * free takes it, even if others wait. Within one client, waiters for one name queue locally and
 * only the first of them talks to the store. A release of a contended lock hands it to the waiting
 * client that has waited longest and wakes that client alone, so every waiting client gets its turn
 * and a hand-over costs the store the same with 2 waiting clients or 64. A lock from {@code Synchronizers.fairLock(name)}
 * grants waiters in the order they arrived at the store, across all clients, and a release wakes
 * only the next waiter; its untimed {@link #tryLock()} barges, and {@code tryLock(0, unit)} honours
 * the queue. A fair waiter that dies keeps its place for at most one lease of its client.
 *
 * <h2>Leases</h2>
 * Every hold has a lease in the store. Taken without a lease time, the hold is renewed by the
 * client's watchdog (every third of the client's default lease) until it is released, so it never
 * expires while the owner's process runs and reaches the store; if the process dies, the lock
 * frees itself when the lease runs out. Taken with a lease time ({@link #lock(long, TimeUnit)},
 * {@link #tryLock(long, long, TimeUnit)}), the hold is not renewed and ends when the lease runs out,
 * whether or not the owner released it.
 *
 * <p>A hold that ends without {@code unlock()} is <em>lost</em>: a lease that the watchdog found
 * gone or could not renew for a whole lease, a fixed lease that ran out, or {@link #forceUnlock()}
 * by anyone. A lock is never lost silently: the client's lost-hold listener is told (except for a
 * fixed lease, which the caller chose), {@link #isHeldByCurrentThread()} turns false, and the
 * owner's next {@code unlock()} throws {@link LostHoldException}.
 *
 * <h2>Usage</h2>
 * <pre> {@code
 * DistributedLock lock = synchronizers.lock("order-" + orderId);
 * lock.lock();
 * try {
 *     charge(order, lock.fencingToken());
 * } finally {
 *     lock.unlock();
 * }}</pre>
 *
 * <h2>Limits</h2>
 * {@link #newCondition()} gives a {@link Condition} that works across clients, except on a read
 * lock and a Redlock lock, which throw {@link UnsupportedOperationException}. The hold count is at
 * most {@link Integer#MAX_VALUE}.
 *
 * <h2>Distributed considerations</h2>
 * <ul>
 *   <li><b>Pauses.</b> A lease cannot be renewed while the owner's process is paused (a long GC, a
 *       frozen VM, a network partition). If the pause outlasts the lease, another client takes the
 *       lock while the paused owner still runs its critical section. The owner learns of it at its
 *       next renewal or {@code unlock()}, which is too late to undo what it did meanwhile. Only a
 *       downstream store that checks {@link #fencingToken()} refuses the stale writer.</li>
 *   <li><b>Fencing tokens.</b> Every fresh acquisition (hold count 0 to 1) gets a token strictly
 *       greater than every token issued before for this name. A token identifies a hold; it does
 *       not make the hold safe by itself: the protected resource has to remember the highest token
 *       it saw and refuse lower ones.</li>
 *   <li><b>Failover and restarts.</b> The store's state is what the lock is. A store that restarts
 *       without persistence, or a failover to a replica that had not yet received the latest
 *       acquisition, can forget a hold: two owners may then overlap until the first one's watchdog
 *       finds its hold gone and reports it lost.</li>
 *   <li><b>Clocks.</b> Leases are durations measured by the store's clock, never compared between
 *       client clocks. Fencing tokens are derived from the store's clock: see the project's
 *       semantics document for what keeps them increasing.</li>
 *   <li><b>Reentrancy is local.</b> Re-entering a held lock is a local count, no network call; the
 *       store sees only the first acquisition and the last release. The count is lost with the
 *       process, which is what the lease is for.</li>
 * </ul>
 */
public interface DistributedLock extends Lock {

    /**
     * Returns the name this lock was created with.
     *
     * @return the lock's name
     */
    String name();

    /**
     * Acquires the lock, waiting uninterruptibly, and holds it for at most {@code leaseTime}: the
     * hold is not renewed and ends when the lease runs out unless released earlier. Re-entering a
     * held lock increments the hold count and leaves the lease as it is.
     *
     * <p>If the thread is interrupted while waiting, it keeps waiting and its interrupt status is
     * set when this method returns.
     *
     * @param leaseTime how long the hold lasts at most; must be positive
     * @param unit the unit of {@code leaseTime}
     * @throws IllegalArgumentException if {@code leaseTime} is not positive
     * @throws NullPointerException if {@code unit} is null
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    void lock(long leaseTime, TimeUnit unit);

    /**
     * Acquires the lock if it becomes free within {@code waitTime}, and holds it for at most
     * {@code leaseTime}: the hold is not renewed and ends when the lease runs out unless released
     * earlier. A non-positive {@code waitTime} makes a single attempt. Re-entering a held lock
     * succeeds at once, increments the hold count and leaves the lease as it is.
     *
     * @param waitTime the longest time to wait for the lock
     * @param leaseTime how long the hold lasts at most; must be positive
     * @param unit the unit of both times
     * @return true if the lock was acquired, false if the waiting time elapsed first
     * @throws InterruptedException if the thread is interrupted on entry or while waiting; its
     *     interrupt status is cleared and the lock is not held
     * @throws IllegalArgumentException if {@code leaseTime} is not positive
     * @throws NullPointerException if {@code unit} is null
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException;

    /**
     * Acquires the lock, waiting uninterruptibly. The hold is renewed by the watchdog until it is
     * released. If the current thread holds the lock already, the hold count is incremented and
     * the method returns at once, without a network call.
     *
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    @Override
    void lock();

    /**
     * Acquires the lock unless the current thread is interrupted. If the interrupt status is set
     * on entry, or the thread is interrupted while waiting, {@link InterruptedException} is thrown,
     * the interrupt status is cleared, and the lock is not held: an acquisition that was in flight
     * when the interrupt arrived is either returned to the caller (the interrupt status then stays
     * set) or undone.
     *
     * @throws InterruptedException if the current thread is interrupted
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    @Override
    void lockInterruptibly() throws InterruptedException;

    /**
     * Acquires the lock only if it is free at the time of invocation, with one round trip to the
     * store and no waiting. Succeeds at once if the current thread holds it already. On a fair
     * lock this barges ahead of waiting threads, as {@code ReentrantLock.tryLock()} does; use
     * {@code tryLock(0, unit)} to respect the queue.
     *
     * @return true if the lock was acquired
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    @Override
    boolean tryLock();

    /**
     * Acquires the lock if it becomes free within the waiting time and the thread is not
     * interrupted. A non-positive time makes a single attempt. The hold is renewed by the
     * watchdog until it is released.
     *
     * @param time the longest time to wait
     * @param unit the unit of {@code time}
     * @return true if the lock was acquired, false if the waiting time elapsed first
     * @throws InterruptedException if the current thread is interrupted on entry or while waiting;
     *     its interrupt status is cleared and the lock is not held
     * @throws NullPointerException if {@code unit} is null
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    @Override
    boolean tryLock(long time, TimeUnit unit) throws InterruptedException;

    /**
     * Releases one hold of the current thread. When the hold count reaches zero the lock is
     * released in the store and a waiter, if any, is woken.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold this lock; nothing
     *     changes
     * @throws LostHoldException if the current thread's hold was lost (see the class
     *     documentation); the hold is gone afterwards
     * @throws SynchronizerUnavailableException if the store cannot be reached to release the last
     *     hold; the hold is then dropped locally and no longer renewed, and the release is retried
     *     in the background until the store answers or the lease has run out
     */
    @Override
    void unlock();

    /**
     * Returns a new {@link Condition} of this lock, shared with every client that makes the same
     * condition of the same lock: a thread of one client may await it and a thread of another
     * signal it. The contract is {@link Condition}'s, across clients:
     * <ul>
     *   <li>The {@code await} methods and {@code signal}/{@code signalAll} throw
     *       {@link IllegalMonitorStateException} if the current thread does not hold this lock
     *       ({@link LostHoldException} if its hold was lost), and change nothing then.</li>
     *   <li>An {@code await} registers the thread as a waiter in the store, then releases its hold
     *       completely (all reentrant levels, waking this lock's waiters as the last
     *       {@code unlock()} would), waits, leaves, and takes the lock again with the same hold
     *       count before it returns or throws, uninterruptibly, as {@code ReentrantLock}'s
     *       conditions do (a fair lock's re-take queues at the back).</li>
     *   <li>The wait ends when the thread is signalled, its time is up, it is interrupted (not for
     *       {@code awaitUninterruptibly}, which keeps the interrupt status set), or spuriously:
     *       only when the waiter's place or signal in the store ran out (its client cut off from
     *       the store, or paused, for a lease), the store lost it (a failover), or it is the oldest
     *       waiter when a signal that another waiter did not take up passes on, which may be sent
     *       before it began to wait. An interrupt that comes after the
     *       signal was taken up does not make it throw: it returns normally with the interrupt
     *       status set, as {@code ReentrantLock}'s conditions do.</li>
     *   <li>{@code signal()} wakes the longest-waiting live waiter of any client, which keeps the
     *       signal (renewed with its place) until it has taken the lock again, however long that
     *       takes; {@code signalAll()} every waiter registered before it. A signal nobody waits for is not
     *       remembered. A waiter that returns by timeout or interrupt passes on a signal that
     *       reached it meanwhile, so none is lost to it.</li>
     *   <li>A hold lost before the await (known lost, or found gone in the store by the
     *       registration) is reported as every lost hold is; the await then takes the lock again,
     *       with the same hold count, and throws {@link LostHoldException}, so that the caller's
     *       {@code finally { unlock(); }} still finds a hold. While the thread awaits it holds
     *       nothing, so no hold can be lost then. A hold with a lease time is taken again with the
     *       same lease time, counted from the re-take.</li>
     *   <li>A waiter's place is leased like a queue place, renewed while it waits: a waiter whose
     *       process dies leaves within a lease, and a signal that chose it passes on to a live
     *       waiter within a lease and a renewal period (a third of the lease) of its last renewal.</li>
     * </ul>
     *
     * <p><b>Identity.</b> A condition is named by this lock and its index: the {@code n}-th
     * condition made through this lock object is condition {@code n}, counted from 0. Clients that
     * make their conditions of a lock in the same order share them, as {@code BoundedBuffer}'s
     * {@code notFull} and {@code notEmpty} fields are made once, in order, in every process. Make
     * conditions once and keep them (and the lock) in fields: a lock object that was dropped and
     * obtained again counts from 0 again. Where that does not fit, name the condition:
     * {@link #newCondition(String)}.
     *
     * <p><b>Cost.</b> {@code signal()} and {@code signalAll()}: one round trip. An {@code await}:
     * one to register, the release, one to leave, and the re-take (one when uncontended); one more
     * only after a wake-up that is not a signal (a reconnection).
     *
     * <p><b>Store unreachable.</b> A registration that gets no answer throws
     * {@link SynchronizerUnavailableException} with the lock still held, the registration
     * withdrawn in the background. A signal that gets no answer is sent again with the same id for
     * up to the command timeout and then throws {@link SynchronizerUnavailableException}: the store
     * runs it at most once. An await whose re-take cannot reach the store throws that exception
     * without the lock.
     *
     * @return a new condition of this lock
     * @throws UnsupportedOperationException on a read lock (as {@code ReentrantReadWriteLock.ReadLock})
     *     and on a Redlock lock (its servers cannot keep one queue of waiters with the guarantees a
     *     single server's scripts give)
     */
    @Override
    Condition newCondition();

    /**
     * Returns the condition of this lock called {@code name}, shared with every client that asks
     * this lock for the same name: as {@link #newCondition()} in every respect but its identity,
     * which is the lock and the name rather than the order of creation. Conditions of one lock made
     * by name and by {@link #newCondition()} are distinct; two calls with one name return
     * conditions that are the same condition in the store. Use it where conditions are not made
     * once, in one order, in every process.
     *
     * <p>The default implementation throws {@link UnsupportedOperationException}, for locks of
     * other implementations.
     *
     * @param name the condition's name within this lock; not empty
     * @return the condition called {@code name}
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty
     * @throws UnsupportedOperationException if this lock has no conditions (see
     *     {@link #newCondition()})
     */
    default Condition newCondition(String name) {
        throw new UnsupportedOperationException("conditions are not supported by " + getClass().getName());
    }

    /**
     * Queries whether any owner of any client holds this lock, with one round trip to the store.
     * The answer may be out of date as soon as it is returned; use it for monitoring, not for
     * control. An implementation that lets a client cache a lock between its holds (such as
     * {@code RedisSynchronizers.Builder#lockCaching}) may answer for a lock its own client caches
     * without a round trip, and counts a lock another client caches as held.
     *
     * @return true if the lock is held by anyone
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    boolean isLocked();

    /**
     * Queries whether the current thread holds this lock. Answered locally, with no network call:
     * false once the watchdog has found the hold lost or a fixed lease has run out.
     *
     * @return true if the current thread holds this lock and the hold is not known to be lost
     */
    boolean isHeldByCurrentThread();

    /**
     * Returns the number of holds of the current thread on this lock, or zero. Answered locally.
     *
     * @return the current thread's hold count, zero if it does not hold the lock
     */
    int getHoldCount();

    /**
     * Returns the fencing token of the current thread's hold: a number strictly greater than that
     * of every earlier hold of this lock by anyone. Re-entering does not change it. Answered
     * locally.
     *
     * @return the token of the current hold
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     */
    long fencingToken();

    /**
     * Returns an estimate of the number of threads, of every client, waiting to acquire this lock,
     * with one round trip to the store. As with {@link
     * java.util.concurrent.locks.ReentrantLock#getQueueLength()}, the value is an estimate: it may
     * change while it is counted, and it is meant for monitoring, not for synchronization control.
     *
     * <p>What the store knows differs by kind. A fair lock and a write lock count their queue in the
     * store, one place per waiting thread whose lease is live. A non-fair lock's waiters queue in
     * their own client, and only the first of them talks to the store; each client records there
     * how many of its threads wait when its first waiter tries and fails, and when it takes the
     * lock or passes it from one of its threads to the next. The estimate is the sum of the other
     * clients' records and the calling client's own line as it is now. So another client's count
     * may lag behind its line: threads that joined or left it since its last record are not seen,
     * and threads that wait behind a hold of their own client are seen only once the client passes
     * the lock on. A record made by a failed try counts only until that waiter's next try is due
     * (the holder's remaining lease plus the command timeout), so waiters that gave up or whose
     * process died stop counting even while the lock stays held. A read-write lock's halves count
     * the waiting writers, plus one if readers wait (the store marks that readers wait, not how
     * many).
     *
     * <p>A lock whose store is a quorum of independent servers (a Redlock) is non-fair, and each of
     * its servers keeps records of its own: there is no one record per client to sum. The estimate
     * takes, of the servers that answered, the one whose records count the most waiting threads of
     * other clients, and adds the calling client's own line. It may therefore count fewer than the
     * sum above when clients' tries reached different servers (a server that did not answer a try
     * has no record of it).
     *
     * @return the estimated number of waiting threads
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    int getQueueLength();

    /**
     * Queries whether any thread of any client waits to acquire this lock: {@code getQueueLength() > 0},
     * with one round trip to the store, and the same caveats.
     *
     * @return true if there may be other threads waiting
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    boolean hasQueuedThreads();

    /**
     * Takes a picture of this lock: its holders, with their client, thread, fencing token and
     * remaining lease, and the estimated queue length. One read-only call to the store; it changes
     * nothing. The picture is out of date as soon as it is returned: for monitoring, not control.
     * For a read-write lock's read half the holders are the readers, for its write half the writer.
     *
     * <p>For a lock whose store is a quorum of independent servers (a Redlock), the call goes to
     * every server at once, and the picture is made from those that replied once a quorum did. A
     * holder is an acquisition that a quorum of the servers record: its token is the largest any of
     * them records, its remaining lease the one a quorum of them still have. A grant on fewer servers
     * (an acquisition under way, or one being given back) is not a holder. The queue length is as
     * {@link #getQueueLength()} says for a quorum.
     *
     * @return the snapshot
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    LockSnapshot snapshot();

    /**
     * Releases the lock in the store whoever holds it. Administrative: the owner, if any, loses its
     * hold and learns of it through the lost-hold listener (at its client's next renewal) and the
     * {@link LostHoldException} from its next {@code unlock()}. Waiters are woken.
     *
     * @return true if the lock was held and is now released, false if it was not held
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    boolean forceUnlock();

    /* --------------- handles: holds that belong to an object, not a thread --------------- */

    /**
     * Acquires the lock as a new {@link LockHandle}, waiting as {@link #lockInterruptibly()} does
     * (the same queue, the same fairness, the same wake-ups): a hold that belongs to the returned
     * handle rather than to this thread, renewed by the watchdog until the handle is released. Not
     * reentrant: it waits while anyone holds the lock, this thread and this client's other handles
     * included.
     *
     * @return the handle that holds the lock
     * @throws InterruptedException if interrupted while waiting; nothing is held then
     * @throws IllegalMonitorStateException if the current thread holds this lock by {@code lock()}
     *     (it would wait for itself), or holds only the read lock and asks for the write lock
     * @throws SynchronizerUnavailableException if the store cannot be reached
     * @throws IllegalStateException if the client is closed
     */
    LockHandle acquire() throws InterruptedException;

    /**
     * Acquires the lock as a new {@link LockHandle} with a fixed lease, waiting as {@link #acquire()}
     * does: the hold is not renewed and ends when {@code lease} runs out, unless released first.
     *
     * @param lease the hold's lease, at least 1 ms
     * @return the handle that holds the lock
     * @throws NullPointerException if {@code lease} is null
     * @throws IllegalArgumentException if {@code lease} is not positive, under 1 ms or over 3650
     *     days (a quorum lock also refuses one its clock-drift allowance eats half of)
     * @throws InterruptedException if interrupted while waiting; nothing is held then
     * @throws IllegalMonitorStateException as {@link #acquire()}
     * @throws SynchronizerUnavailableException if the store cannot be reached
     * @throws IllegalStateException if the client is closed
     */
    LockHandle acquire(Duration lease) throws InterruptedException;

    /**
     * Acquires the lock as a new {@link LockHandle} if it becomes free within {@code wait}, as
     * {@link #tryLock(long, TimeUnit)} waits; {@code Duration.ZERO} (or less) tries once and honours
     * a fair lock's queue. The hold is renewed by the watchdog until the handle is released. Not
     * reentrant: while anyone holds the lock, this thread included, it waits, and returns empty if
     * the lock is still held when the wait ends.
     *
     * @param wait how long to wait at most
     * @return the handle, or empty if the lock was not free within the wait
     * @throws NullPointerException if {@code wait} is null
     * @throws InterruptedException if interrupted while waiting; nothing is held then
     * @throws SynchronizerUnavailableException if the store cannot be reached
     * @throws IllegalStateException if the client is closed
     */
    Optional<LockHandle> tryAcquire(Duration wait) throws InterruptedException;

    /**
     * Acquires the lock as a new {@link LockHandle} with a fixed lease if it becomes free within
     * {@code wait}; see {@link #tryAcquire(Duration)} and {@link #acquire(Duration)}.
     *
     * @param wait how long to wait at most
     * @param lease the hold's lease, at least 1 ms
     * @return the handle, or empty if the lock was not free within the wait
     * @throws NullPointerException if {@code wait} or {@code lease} is null
     * @throws IllegalArgumentException if {@code lease} is out of range, as for {@link #acquire(Duration)}
     * @throws InterruptedException if interrupted while waiting; nothing is held then
     * @throws SynchronizerUnavailableException if the store cannot be reached
     * @throws IllegalStateException if the client is closed
     */
    Optional<LockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException;

    /**
     * Acquires the lock as a new {@link LockHandle} without blocking the caller: the returned stage
     * completes with the handle once the lock is this client's, as {@link #acquire()} would return
     * it. The acquisition waits in the lock's queue as {@code acquire()} would (the same local line,
     * the same fairness, the same wake-ups); no thread is parked per pending acquisition. The stage
     * completes on the client's async executor, never on a network thread.
     *
     * <p>Completing the stage before the lock is granted withdraws the acquisition (it leaves the
     * queue), whichever way the caller completes it: {@code cancel}, {@code complete}, {@code
     * completeExceptionally}, {@code orTimeout}, {@code completeOnTimeout}, {@code completeAsync},
     * or {@code obtrudeValue} or {@code obtrudeException} on a stage not yet complete. A grant that
     * raced the caller's completion is given back, and the caller's outcome stands. This holds for
     * the returned stage itself (also as {@code toCompletableFuture()}), not for stages derived from
     * it ({@code thenApply} and the like). An {@code obtrude} method on a stage already completed
     * with the handle replaces the outcome but does not release the handle. Closing the client fails
     * pending stages with {@link IllegalStateException}; a store that cannot be reached fails the
     * stage with {@link SynchronizerUnavailableException}.
     *
     * @return a stage completed with the handle
     * @throws IllegalStateException if the client is closed
     */
    CompletionStage<LockHandle> acquireAsync();

    /**
     * Acquires the lock as a new {@link LockHandle} if it becomes free within {@code wait}, without
     * blocking the caller: as {@link #acquireAsync()}, completing with an empty optional once the
     * wait is over without the lock (also while older async acquisitions of this client are still
     * waited for); once its own wait has begun, the stage completes when that wait is over, so an
     * empty optional means that nothing is held. The caller completing the stage withdraws the
     * acquisition as for {@code acquireAsync()}. {@code Duration.ZERO} tries once.
     *
     * @param wait how long to wait at most, from now
     * @return a stage completed with the handle, or empty if the lock was not free within the wait
     * @throws NullPointerException if {@code wait} is null
     * @throws IllegalStateException if the client is closed
     */
    CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait);

    /**
     * Runs {@code body} on the calling thread while this lock is held, and returns its value: the
     * recommended way to run work under a lock, since the work stops when the hold is lost.
     * Acquires a {@link LockHandle} as {@link #tryAcquire(Duration)} does, waiting at most
     * {@code wait} ({@code Duration.ZERO} tries once), renewed by the watchdog; runs
     * {@code body.call(hold)}, which may use the hold's {@linkplain LockHandle#fencingToken()
     * fencing token}, {@link LockHandle#verify()} and {@link LockHandle#lost()}; then releases the
     * hold, whether the body returned or threw.
     *
     * <p><b>Loss.</b> If the hold is lost while the body runs, the calling thread is interrupted at
     * once, when the lost-hold listeners are told: where the watchdog cannot renew the hold, before
     * the store can let it go. Once the body returns or throws, what is left of the hold is released
     * and {@link LostHoldException} is thrown: the body's value is discarded, an exception it threw
     * is added to it as suppressed, and the interrupt this method set is cleared (an interrupt that
     * was pending before the loss stays set). A body that ignores interrupts runs to its end all the
     * same, possibly overlapping with the next holder: check the fencing token downstream.
     *
     * <p><b>Cost.</b> Those of {@code tryAcquire(wait)} and {@code release()}; nothing while the
     * body runs but the watchdog's renewals.
     *
     * <p>The default implementation does this through {@link #tryAcquire(Duration)} and the
     * handle's {@link LockHandle#lost()} and {@link LockHandle#close()}.
     *
     * @param <T> the type of the body's value
     * @param wait how long to wait for the lock at most
     * @param body the work to run under the lock, on this thread
     * @return the body's value
     * @throws NullPointerException if {@code wait} or {@code body} is null
     * @throws TimeoutException if the lock was not acquired within {@code wait}; the body did not run
     * @throws InterruptedException if the thread is interrupted on entry or while waiting for the
     *     lock, as {@link #lockInterruptibly()}; its interrupt status is cleared and the body did not
     *     run
     * @throws ExecutionException if the body threw (its exception is the cause), and the hold was
     *     not lost; thrown after the release (an {@link Error} the body throws is rethrown as it
     *     is, after the release)
     * @throws LostHoldException if the hold was lost before the body ended, or the release found
     *     it gone
     * @throws SynchronizerUnavailableException if the store cannot be reached to acquire, or to
     *     release (the hold then ends with its lease at the latest; an exception of the body is
     *     added to it as suppressed)
     * @throws IllegalStateException if the client is closed
     */
    default <T> T callLocked(Duration wait, LockedCallable<T> body)
            throws InterruptedException, TimeoutException, ExecutionException {
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(body, "body");
        LockHandle hold = tryAcquire(wait).orElse(null);
        if (hold == null) {
            throw new TimeoutException("lock '" + name() + "' not acquired within " + wait);
        }
        LockedCall call = new LockedCall(Thread.currentThread());
        hold.lost().thenAccept(call::lost);
        T value = null;
        Throwable failure = null;
        try {
            value = body.call(hold);
        } catch (Throwable t) {
            failure = t;
        }
        LostHold lostWhileRunning = call.end();
        LostHoldException lostHold = null;
        try {
            hold.close();
        } catch (LostHoldException e) {
            lostHold = e;
        } catch (RuntimeException | Error e) {
            if (failure != null) {
                e.addSuppressed(failure);
            }
            throw e;
        }
        if (lostHold == null && lostWhileRunning != null) {
            lostHold = new LostHoldException(name(), lostWhileRunning.cause(), lostWhileRunning.kind() + " '"
                    + name() + "': the hold was lost while callLocked() ran its body: " + lostWhileRunning.cause());
        }
        if (lostHold != null) {
            if (failure != null) {
                lostHold.addSuppressed(failure);
            }
            throw lostHold;
        }
        if (failure instanceof Error error) {
            throw error;
        }
        if (failure != null) {
            throw new ExecutionException(failure);
        }
        return value;
    }

    /**
     * Asks the store whether it still has the current thread's hold of this lock: one round trip
     * (one per node, in parallel, for a quorum lock), where {@link #isHeldByCurrentThread()} makes
     * none. A hold found gone is known lost from then on: the lost-hold listener is told at once,
     * {@code isHeldByCurrentThread()} turns false and {@code unlock()} throws
     * {@link LostHoldException}.
     *
     * @return true if the current thread holds the lock and the store has the hold; false if it
     *     does not hold it, or the hold is gone
     * @throws SynchronizerUnavailableException if the store does not answer within the command
     *     timeout; nothing is known then
     * @throws IllegalStateException if the client is closed
     */
    boolean verifyHeld();
}
