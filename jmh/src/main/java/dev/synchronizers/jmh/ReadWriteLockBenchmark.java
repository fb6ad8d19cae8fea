package dev.synchronizers.jmh;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * A read-mostly read-write lock: 16 threads in two clients (8 threads each, as two JVMs would
 * have; other counts with {@code -p clients=N}) lock one name, 90% of operations with the read lock and 10% with the write lock (chosen
 * per operation by each thread's own seeded {@link SplittableRandom}), burn a tiny critical
 * section and unlock, for each {@link ReadWriteLockImpl}. The score is lock+unlock operations per
 * second of all threads together, reads and writes alike. Each iteration also prints a {@code
 * REDIS-STATS} and a {@code SHARES} line (see {@link LockContendedBenchmark}). The benchmark starts its own {@code
 * redis-server} on loopback.
 *
 * <pre>java -jar jmh/target/benchmarks.jar ReadWriteLockBenchmark -rf json -rff jmh-rwlock.json</pre>
 */
public class ReadWriteLockBenchmark extends RedisBenchmark {

    static final int THREADS = 16;
    /** One operation in ten takes the write lock. */
    static final int WRITE_ONE_IN = 10;

    @Param({"SYNCHRONIZERS", "REDISSON"})
    public ReadWriteLockImpl impl;

    /**
     * Client instances (each its own connections, as separate JVMs would have); benchmark thread
     * {@code n} uses instance {@code n % clients}. By default 2, with the 16 threads of the
     * {@code @Threads} annotation; a fleet runs one thread per instance: {@code -t 64 -p clients=64}.
     */
    @Param({"2"})
    public int clients;

    private BenchReadWriteLock[] instances;
    private final AtomicInteger joined = new AtomicInteger();

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        instances = new BenchReadWriteLock[clients];
        for (int i = 0; i < clients; i++) {
            instances[i] = closeAtEnd(impl.open(server.uri(), "bench-rwlock"));
        }
        countPerClient(clients);
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One benchmark thread: the n-th thread to join uses client instance {@code n % clients} and seed {@code n}. */
    @State(Scope.Thread)
    public static class Client {
        BenchReadWriteLock lock;
        int instance;
        SplittableRandom random;

        @Setup(Level.Trial)
        public void join(ReadWriteLockBenchmark benchmark) {
            int n = benchmark.joined.getAndIncrement();
            instance = n % benchmark.clients;
            lock = benchmark.instances[instance];
            // Seeded, so every implementation sees the same sequence of reads and writes per thread.
            random = new SplittableRandom(n);
        }
    }

    /** Read lock (9 in 10) or write lock (1 in 10), a tiny critical section, unlock. */
    @Benchmark
    @Threads(THREADS)
    public void lockUnlock(Client client) {
        BenchReadWriteLock lock = client.lock;
        if (client.random.nextInt(WRITE_ONE_IN) == 0) {
            lock.writeLock();
            try {
                Blackhole.consumeCPU(LockContendedBenchmark.CRITICAL_SECTION_TOKENS);
            } finally {
                lock.writeUnlock();
            }
        } else {
            lock.readLock();
            try {
                Blackhole.consumeCPU(LockContendedBenchmark.CRITICAL_SECTION_TOKENS);
            } finally {
                lock.readUnlock();
            }
        }
        operation(client.instance);
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
    public void lockUnlockLatency(Client client) {
        lockUnlock(client);
    }
}
