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
 * per client, as two JVMs would have) lock one name, burn a tiny critical section and unlock, for
 * each {@link LockImpl}. The score is lock+unlock operations per second of all threads together,
 * that is hand-offs per second. Each iteration also prints a {@code REDIS-STATS} line: top-level
 * script calls, all commands (including those inside scripts) and socket reads per operation.
 * The benchmark starts its own {@code redis-server} on loopback.
 *
 * <pre>java -jar jmh/target/benchmarks.jar LockContendedBenchmark -rf json -rff jmh-result.json</pre>
 *
 * <p>One implementation: {@code ... LockContendedBenchmark -p impl=SYNCHRONIZERS_FAIR}.
 */
public class LockContendedBenchmark extends RedisBenchmark {

    static final int THREADS = 16;
    static final int CLIENTS = 2;
    /** About 100 cheap CPU operations: enough to be a section, too little to hide the hand-off. */
    static final long CRITICAL_SECTION_TOKENS = 100;

    @Param({"SYNCHRONIZERS", "SYNCHRONIZERS_FAIR", "REDISSON", "REDISSON_FAIR", "FLOOR"})
    public LockImpl impl;

    private BenchLock[] clients;
    private final AtomicInteger joined = new AtomicInteger();

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        clients = new BenchLock[CLIENTS];
        for (int i = 0; i < CLIENTS; i++) {
            clients[i] = closeAtEnd(impl.open(target(), "bench-contended"));
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One benchmark thread: the n-th thread to join uses client {@code n % 2}. */
    @State(Scope.Thread)
    public static class Client {
        BenchLock lock;

        @Setup(Level.Trial)
        public void join(LockContendedBenchmark benchmark) {
            lock = benchmark.clients[benchmark.joined.getAndIncrement() % CLIENTS];
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
    public void lockUnlockLatency(Client client) {
        lockUnlock(client);
    }
}
