package dev.synchronizers.jmh;

import java.util.UUID;
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

/**
 * Permit hand-offs of a 4-permit semaphore: 16 threads in two clients (8 threads each, as two
 * JVMs would have; other counts with {@code -p clients=N}) {@code acquire()} one permit and {@code release()} it at once, for each {@link
 * SemaphoreImpl}; at any moment 12 of them wait. The score is acquire+release operations per
 * second of all threads together. The total is set once per trial, with {@code
 * trySetPermits(4)}, on a fresh name. Each iteration also prints a {@code REDIS-STATS} and a {@code
 * SHARES} line (see {@link LockContendedBenchmark}). The benchmark starts its own {@code redis-server} on loopback.
 *
 * <pre>java -jar jmh/target/benchmarks.jar SemaphoreThroughputBenchmark -rf json -rff jmh-semaphore.json</pre>
 */
public class SemaphoreThroughputBenchmark extends RedisBenchmark {

    static final int THREADS = 16;
    static final int PERMITS = 4;

    @Param({"SYNCHRONIZERS", "REDISSON", "REDISSON_EXPIRABLE"})
    public SemaphoreImpl impl;

    /**
     * Client instances (each its own connections, as separate JVMs would have); benchmark thread
     * {@code n} uses instance {@code n % clients}. By default 2, with the 16 threads of the
     * {@code @Threads} annotation; a fleet runs one thread per instance: {@code -t 64 -p clients=64}.
     */
    @Param({"2"})
    public int clients;

    private BenchSemaphore[] instances;
    private final AtomicInteger joined = new AtomicInteger();

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        String name = "bench-semaphore-" + UUID.randomUUID();
        instances = new BenchSemaphore[clients];
        for (int i = 0; i < clients; i++) {
            instances[i] = closeAtEnd(impl.open(server.uri(), name));
        }
        countPerClient(clients);
        if (!instances[0].trySetPermits(PERMITS)) {
            throw new IllegalStateException("semaphore " + name + " already had a total");
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One benchmark thread: the n-th thread to join uses client instance {@code n % clients}. */
    @State(Scope.Thread)
    public static class Client {
        BenchSemaphore semaphore;
        int instance;

        @Setup(Level.Trial)
        public void join(SemaphoreThroughputBenchmark benchmark) {
            instance = benchmark.joined.getAndIncrement() % benchmark.clients;
            semaphore = benchmark.instances[instance];
        }
    }

    /** Acquire one permit, release it. */
    @Benchmark
    @Threads(THREADS)
    public void acquireRelease(Client client) throws InterruptedException {
        BenchSemaphore semaphore = client.semaphore;
        semaphore.acquire();
        semaphore.release();
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
    public void acquireReleaseLatency(Client client) throws InterruptedException {
        acquireRelease(client);
    }
}
