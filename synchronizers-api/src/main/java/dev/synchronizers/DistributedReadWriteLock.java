package dev.synchronizers;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A pair of locks, one for readers and one for the writer, whose state lives in a shared store:
 * any number of threads of any clients may hold the read lock together while no one holds the
 * write lock, and the write lock excludes everyone else.
 *
 * <p>Both halves are {@link DistributedLock}s with the same ownership, lease and lost-hold rules.
 * The writer may downgrade (take the read lock while holding the write lock, then release the
 * write lock); upgrading (asking for the write lock while holding only the read lock) is refused
 * rather than left to deadlock. The exact waiting order of readers and writers is documented by
 * the implementation.
 */
public interface DistributedReadWriteLock extends ReadWriteLock {

    /**
     * Returns the name this lock was created with.
     *
     * @return the lock's name
     */
    String name();

    /**
     * Returns the lock used for reading, shared by any number of holders.
     *
     * @return the read lock
     */
    @Override
    DistributedLock readLock();

    /**
     * Returns the lock used for writing, held by at most one owner and only while no one reads.
     *
     * @return the write lock
     */
    @Override
    DistributedLock writeLock();

    /**
     * Takes a picture of this lock: the writer, the readers, with their client, thread, fencing
     * token and remaining lease, the waiting writers and whether readers wait. One read-only call
     * to the store; it changes nothing. Out of date as soon as it is returned: for monitoring, not
     * control.
     *
     * @return the snapshot
     * @throws SynchronizerUnavailableException if the store cannot be reached
     */
    ReadWriteLockSnapshot snapshot();
}
