package dev.synchronizers.jmh;

/**
 * One client's handle on one named read-write lock, the only thing {@link ReadWriteLockBenchmark}
 * calls. Shared by the threads of its client like a {@link java.util.concurrent.locks.ReadWriteLock}:
 * each thread unlocks the half it locked. {@link #close()} closes the client.
 */
public interface BenchReadWriteLock extends AutoCloseable {

    /** Blocks until the calling thread holds the read lock. */
    void readLock();

    /** Releases the read lock that the calling thread holds. */
    void readUnlock();

    /** Blocks until the calling thread holds the write lock. */
    void writeLock();

    /** Releases the write lock that the calling thread holds. */
    void writeUnlock();

    /** Closes the client behind this handle; holds still held expire on the server. */
    @Override
    void close();
}
