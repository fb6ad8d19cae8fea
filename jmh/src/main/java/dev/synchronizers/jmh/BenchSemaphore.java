package dev.synchronizers.jmh;

/**
 * One client's handle on one named counting semaphore, the only thing {@link
 * SemaphoreThroughputBenchmark} calls. Shared by the threads of its client; each thread holds at
 * most one permit at a time and releases the permit it acquired. {@link #close()} closes the
 * client.
 */
public interface BenchSemaphore extends AutoCloseable {

    /**
     * Sets the total number of permits if it has not been set yet.
     *
     * @param permits the total
     * @return true if the total was set
     */
    boolean trySetPermits(int permits);

    /**
     * Blocks until the calling thread has one permit.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    void acquire() throws InterruptedException;

    /** Releases the permit that the calling thread acquired. */
    void release();

    /** Closes the client behind this handle. */
    @Override
    void close();
}
