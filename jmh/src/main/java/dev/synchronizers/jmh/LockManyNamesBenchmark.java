package dev.synchronizers.jmh;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Client multiplexing without contention: 16 threads of ONE client (one {@code
 * RedisSynchronizers}, one {@code RedissonClient}, one floor connection) each lock and unlock a
 * name of their own ({@code bench-many-names-<thread index>}), for each {@link LockImpl} in the
 * parameter list. No thread ever waits for another's hold, only for its turn on the client's
 * connections and threads, so the score shows how well one client carries many independent locks:
 * lock+unlock operations per second of all threads together. Each iteration also prints a {@code
 * REDIS-STATS} line (see {@link LockContendedBenchmark}). The benchmark starts its own {@code
 * redis-server} on loopback. With {@code SYNCHRONIZERS_CACHING} each name stays cached by the client
 * after its first operation, so its thread re-takes it locally; {@code JUC} (a {@code
 * ReentrantLock} per name, no Redis) is the local-memory limit.
 *
 * <pre>java -jar jmh/target/benchmarks.jar LockManyNamesBenchmark -rf json -rff jmh-many-names.json</pre>
 *
 * <p>With {@code -t N} instead of 16, each of the N threads still gets a name of its own.
 */
public class LockManyNamesBenchmark extends RedisBenchmark {

    static final int THREADS = 16;

    @Param({"SYNCHRONIZERS", "SYNCHRONIZERS_CACHING", "REDISSON", "FLOOR", "JUC"})
    public LockImpl impl;

    private List<BenchLock> locks;
    private final AtomicInteger joined = new AtomicInteger();

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start(BenchmarkParams params) {
        startRedis();
        List<String> names = IntStream.range(0, params.getThreads()).mapToObj(i -> "bench-many-names-" + i).toList();
        locks = impl.open(target(), names, LockImpl.DEFAULT_LEASE);
        // All handles share one client: closing one closes it.
        closeAtEnd(locks.get(0));
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One benchmark thread: the n-th thread to join locks the n-th name. */
    @State(Scope.Thread)
    public static class Worker {
        BenchLock lock;

        @Setup(Level.Trial)
        public void join(LockManyNamesBenchmark benchmark) {
            lock = benchmark.locks.get(benchmark.joined.getAndIncrement());
        }
    }

    /** One lock and one unlock of this thread's own name. */
    @Benchmark
    @Threads(THREADS)
    public void lockUnlock(Worker worker) {
        BenchLock lock = worker.lock;
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
    @Threads(THREADS)
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void lockUnlockLatency(Worker worker) {
        lockUnlock(worker);
    }
}
