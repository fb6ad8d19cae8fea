package dev.synchronizers.jmh;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.RedisSynchronizers;
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
 * A handle hold beside a thread hold, uncontended: one thread of one client takes and gives back
 * one name, by {@code acquire()} + {@code LockHandle.release()} ({@code api=HANDLE}) or by {@code
 * lock()} + {@code unlock()} ({@code api=THREAD}), on our lock and our fair lock; ours only, since
 * the question is what a handle costs over a thread hold. Each iteration prints a {@code
 * REDIS-STATS} line (see {@link RedisBenchmark}) whose implementation is {@code <impl>/<api>}, e.g.
 * {@code SYNCHRONIZERS/HANDLE}: the two APIs should cost the same script calls and round trips.
 *
 * <pre>java -jar jmh/target/benchmarks.jar LockHandleBenchmark -p api=THREAD,HANDLE</pre>
 */
public class LockHandleBenchmark extends RedisBenchmark {

    /** How the hold is taken and given back. */
    public enum Api {
        /** {@code lock()} + {@code unlock()}: a hold of the calling thread. */
        THREAD,
        /** {@code acquire()} + {@code release()}: a hold of the returned handle. */
        HANDLE
    }

    /** {@code SYNCHRONIZERS} ({@code lock(name)}) or {@code SYNCHRONIZERS_FAIR} ({@code fairLock(name)}). */
    @Param({"SYNCHRONIZERS", "SYNCHRONIZERS_FAIR"})
    public String impl;

    @Param({"THREAD", "HANDLE"})
    public Api api;

    private DistributedLock lock;

    @Override
    protected String implName() {
        return impl + "/" + api;
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        RedisSynchronizers client = closeAtEnd(
                LockImpl.target(RedisSynchronizers.builder(), target()).lease(LockImpl.DEFAULT_LEASE).build());
        lock = switch (impl) {
            case "SYNCHRONIZERS" -> client.lock("bench-handle");
            case "SYNCHRONIZERS_FAIR" -> client.fairLock("bench-handle");
            default -> throw new IllegalArgumentException("impl must be SYNCHRONIZERS or SYNCHRONIZERS_FAIR: " + impl);
        };
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One acquisition and its release, by the chosen API. */
    @Benchmark
    public void acquireRelease() throws InterruptedException {
        if (api == Api.HANDLE) {
            lock.acquire().release();
        } else {
            lock.lock();
            lock.unlock();
        }
        operations.incrementAndGet();
    }

    /** The same operation, each one timed, for the distribution (p50, p99). */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void acquireReleaseLatency() throws InterruptedException {
        acquireRelease();
    }
}
