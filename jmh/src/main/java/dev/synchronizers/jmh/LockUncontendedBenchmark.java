package dev.synchronizers.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Uncontended {@code lock()} + {@code unlock()} of one name by one thread of one client, for each
 * {@link LockImpl}: for ours, two script calls and two round trips to a local {@code
 * redis-server} that the benchmark starts itself. Each iteration also prints a {@code
 * REDIS-STATS} line (see {@link LockContendedBenchmark}). {@code SYNCHRONIZERS_METERED} beside
 * {@code SYNCHRONIZERS} is the cost of metrics per operation; {@code SYNCHRONIZERS_CACHING} takes
 * the lock from the client's cache after the first operation (no round trip), and {@code JUC} (a
 * {@code ReentrantLock}, no Redis) is the local-memory limit.
 *
 * <pre>java -jar jmh/target/benchmarks.jar LockUncontendedBenchmark -rf json -rff jmh-result.json</pre>
 */
public class LockUncontendedBenchmark extends RedisBenchmark {

    @Param({"SYNCHRONIZERS", "SYNCHRONIZERS_CACHING", "SYNCHRONIZERS_METERED", "SYNCHRONIZERS_FAIR", "REDISSON",
            "REDISSON_FAIR", "FLOOR", "JUC"})
    public LockImpl impl;

    private BenchLock lock;

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        lock = closeAtEnd(impl.open(target(), "bench-uncontended"));
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One lock and one unlock. */
    @Benchmark
    public void lockUnlock() {
        lock.lock();
        lock.unlock();
        operations.incrementAndGet();
    }

    /**
     * The same operation, each one timed, for the distribution (p50, p99): under contention
     * mostly the time a thread waits. Its {@code REDIS-STATS} lines count as the throughput
     * method's do.
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void lockUnlockLatency() {
        lockUnlock();
    }
}
