package dev.synchronizers.jmh;

/**
 * One client's handle on one named countdown latch, the only thing {@link LatchRoundTripBenchmark}
 * calls. {@link #close()} closes the client.
 */
public interface BenchLatch extends AutoCloseable {

    /**
     * Sets the count if the latch is at zero or unset.
     *
     * @param count the count
     * @return true if the count was set, false if the latch is still counting down
     */
    boolean trySetCount(long count);

    /** Decrements the count; at zero, releases every waiter of every client. */
    void countDown();

    /**
     * Blocks until the count is zero.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    void await() throws InterruptedException;

    /** Closes the client behind this handle. */
    @Override
    void close();
}
