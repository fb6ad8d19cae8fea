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
 * JVMs would have) {@code acquire()} one permit and {@code release()} it at once, for each {@link
 * SemaphoreImpl}; at any moment 12 of them wait. The score is acquire+release operations per
 * second of all threads together. The total is set once per trial, with {@code
 * trySetPermits(4)}, on a fresh name. Each iteration also prints a {@code REDIS-STATS} line (see
 * {@link LockContendedBenchmark}). The benchmark starts its own {@code redis-server} on loopback.
 *
 * <pre>java -jar jmh/target/benchmarks.jar SemaphoreThroughputBenchmark -rf json -rff jmh-semaphore.json</pre>
 */
public class SemaphoreThroughputBenchmark extends RedisBenchmark {

    static final int THREADS = 16;
    static final int CLIENTS = 2;
    static final int PERMITS = 4;

    @Param({"SYNCHRONIZERS", "REDISSON", "REDISSON_EXPIRABLE"})
    public SemaphoreImpl impl;

    private BenchSemaphore[] clients;
    private final AtomicInteger joined = new AtomicInteger();

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        String name = "bench-semaphore-" + UUID.randomUUID();
        clients = new BenchSemaphore[CLIENTS];
        for (int i = 0; i < CLIENTS; i++) {
            clients[i] = closeAtEnd(impl.open(server.uri(), name));
        }
        if (!clients[0].trySetPermits(PERMITS)) {
            throw new IllegalStateException("semaphore " + name + " already had a total");
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One benchmark thread: the n-th thread to join uses client {@code n % 2}. */
    @State(Scope.Thread)
    public static class Client {
        BenchSemaphore semaphore;

        @Setup(Level.Trial)
        public void join(SemaphoreThroughputBenchmark benchmark) {
            semaphore = benchmark.clients[benchmark.joined.getAndIncrement() % CLIENTS];
        }
    }

    /** Acquire one permit, release it. */
    @Benchmark
    @Threads(THREADS)
    public void acquireRelease(Client client) throws InterruptedException {
        BenchSemaphore semaphore = client.semaphore;
        semaphore.acquire();
        semaphore.release();
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
    public void acquireReleaseLatency(Client client) throws InterruptedException {
        acquireRelease(client);
    }
}
