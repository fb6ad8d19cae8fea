package dev.synchronizers.jmh;

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
 * Lock hand-offs under contention: 16 threads in two clients (8 threads each, one connection set
 * per client, as two JVMs would have; other counts with {@code -p clients=N}) lock one name, burn a tiny critical section and unlock, for
 * each {@link LockImpl}. The score is lock+unlock operations per second of all threads together,
 * that is hand-offs per second. Each iteration also prints a {@code REDIS-STATS} line: top-level
 * script calls, all commands (including those inside scripts), socket reads and Redis CPU time per
 * operation, and a {@code SHARES} line: how evenly the client instances were served (see {@link
 * RedisBenchmark#shares}). The benchmark starts its own {@code redis-server} on loopback.
 *
 * <pre>java -jar jmh/target/benchmarks.jar LockContendedBenchmark -rf json -rff jmh-result.json</pre>
 *
 * <p>One implementation: {@code ... LockContendedBenchmark -p impl=SYNCHRONIZERS_FAIR}. A fleet of
 * 32 client instances, one thread each: {@code ... LockContendedBenchmark.lockUnlock$ -t 32 -p
 * clients=32} (or {@code jmh/bench.sh fleet}).
 */
public class LockContendedBenchmark extends RedisBenchmark {

    static final int THREADS = 16;
    /** About 100 cheap CPU operations: enough to be a section, too little to hide the hand-off. */
    static final long CRITICAL_SECTION_TOKENS = 100;

    @Param({"SYNCHRONIZERS", "SYNCHRONIZERS_FAIR", "REDISSON", "REDISSON_FAIR", "FLOOR"})
    public LockImpl impl;

    /**
     * Client instances (each its own connections, as separate JVMs would have); benchmark thread
     * {@code n} uses instance {@code n % clients}. By default 2, with the 16 threads of the
     * {@code @Threads} annotation; a fleet runs one thread per instance: {@code -t 64 -p clients=64}.
     */
    @Param({"2"})
    public int clients;

    private BenchLock[] instances;
    private final AtomicInteger joined = new AtomicInteger();

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        instances = new BenchLock[clients];
        for (int i = 0; i < clients; i++) {
            instances[i] = closeAtEnd(impl.open(target(), "bench-contended"));
        }
        countPerClient(clients);
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One benchmark thread: the n-th thread to join uses client instance {@code n % clients}. */
    @State(Scope.Thread)
    public static class Client {
        BenchLock lock;
        int instance;

        @Setup(Level.Trial)
        public void join(LockContendedBenchmark benchmark) {
            instance = benchmark.joined.getAndIncrement() % benchmark.clients;
            lock = benchmark.instances[instance];
        }
    }

    /** Lock, a tiny critical section, unlock. */
    @Benchmark
    @Threads(THREADS)
    public void lockUnlock(Client client) {
        BenchLock lock = client.lock;
        lock.lock();
        try {
            Blackhole.consumeCPU(CRITICAL_SECTION_TOKENS);
        } finally {
            lock.unlock();
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
