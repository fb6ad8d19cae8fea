package dev.synchronizers.jmh;

/**
 * One client's handle on one named lock, the only thing a lock benchmark calls. Like a {@link
 * java.util.concurrent.locks.Lock}, it is shared by the threads of its client: each thread
 * unlocks what it locked. {@link #close()} closes the client (its connections and threads).
 */
public interface BenchLock extends AutoCloseable {

    /** Blocks until the calling thread holds the lock. */
    void lock();

    /** Releases the lock that the calling thread holds. */
    void unlock();

    /** Closes the client behind this handle; holds still held expire on the server. */
    @Override
    void close();
}
