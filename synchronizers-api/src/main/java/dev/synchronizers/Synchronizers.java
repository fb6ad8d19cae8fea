package dev.synchronizers;

/**
 * A client of the store in which synchronizers keep their state, and the factory for them.
 *
 * <p>One instance is one client: it has one random client id, one connection for commands and one
 * for wake-up messages, and one watchdog thread that renews the leases of everything its threads
 * hold. Create one per JVM and share it between threads; each instance owns the holds its threads
 * take, so two instances in one JVM behave like two processes.
 *
 * <p>The factory methods are cheap and make no network call: they return an object that names the
 * synchronizer. Objects for the same name and kind returned by one instance share their state, so
 * {@code s.lock("orders").lock()} may be matched by a later {@code s.lock("orders").unlock()}.
 * Names are case-sensitive, must be non-empty, and are shared by every client that uses the same
 * store and key prefix: that is what makes them coordinate.
 *
 * <p>{@link #close()} releases nothing on the store's side by itself: holds still held when the
 * client closes are no longer renewed and expire with their lease.
 */
public interface Synchronizers extends AutoCloseable {

    /**
     * Returns the reentrant, non-fair mutual exclusion lock called {@code name}.
     *
     * @param name the lock's name, shared by every client
     * @return the lock; no network call is made
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty
     * @throws IllegalStateException if this client is closed
     */
    DistributedLock lock(String name);

    /**
     * Returns the reentrant lock called {@code name} that grants waiters in the order they arrived
     * at the store, across all threads of all clients, as {@code new ReentrantLock(true)} does in
     * one JVM. A waiter that stops waiting (timeout, interrupt) leaves the queue at once; one whose
     * process dies leaves it when its place's lease runs out (one client lease after its last
     * renewal), so a dead waiter never holds up the others for longer. The untimed
     * {@link DistributedLock#tryLock()} barges; {@code tryLock(0, unit)} honours the queue.
     *
     * <p>The fair lock called {@code name} is a different lock from {@link #lock(String)} of the
     * same name: they do not exclude each other.
     *
     * @param name the lock's name, shared by every client
     * @return the lock; no network call is made
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty
     * @throws IllegalStateException if this client is closed
     */
    DistributedLock fairLock(String name);

    /**
     * Returns the read-write lock called {@code name}: shared reads, exclusive writes, writers not
     * starved, downgrade allowed, upgrade refused (see {@link DistributedReadWriteLock}). It is a
     * lock of its own, apart from {@link #lock(String)} of the same name.
     *
     * @param name the lock's name, shared by every client
     * @return the read-write lock; no network call is made
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty
     * @throws IllegalStateException if this client is closed
     */
    DistributedReadWriteLock readWriteLock(String name);

    /**
     * Returns the counting semaphore called {@code name}, whose permits are owned by this client
     * and leased, so that a client that dies returns them.
     *
     * @param name the semaphore's name, shared by every client
     * @return the semaphore; no network call is made
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty
     * @throws IllegalStateException if this client is closed
     */
    DistributedSemaphore semaphore(String name);

    /**
     * Returns the countdown latch called {@code name}.
     *
     * @param name the latch's name, shared by every client
     * @return the latch; no network call is made
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty
     * @throws IllegalStateException if this client is closed
     */
    DistributedCountDownLatch countDownLatch(String name);

    /**
     * Returns the id that owns this client's holds in the store: the {@code clientId} that
     * {@link LockSnapshot.Holder} and {@link SemaphoreSnapshot.PermitHolder} show for them, and the
     * one the client names when it logs its start-up. For logs and snapshots; it does not change
     * while the client lives. Makes no network call on a client that is connected.
     *
     * @return this client's id
     * @throws SynchronizerUnavailableException if the client connects on first use and the store
     *     cannot be reached yet (the id is made when it connects)
     */
    String clientId();

    /**
     * Stops the watchdog and closes the connections. Holds still held are not released; they are
     * no longer renewed and expire with their lease, after which other clients may take them.
     * Threads still waiting in this client are woken and fail with an
     * {@link IllegalStateException}: those asleep and those whose command to Redis is in flight
     * alike (whatever that command did in Redis expires with its lease). Idempotent.
     */
    @Override
    void close();
}
