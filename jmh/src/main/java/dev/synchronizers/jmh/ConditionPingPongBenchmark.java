package dev.synchronizers.jmh;

import dev.synchronizers.redis.RedisSynchronizers;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * A ping-pong over one lock and two conditions ({@code ping}, {@code pong}) between two threads:
 * for {@code SYNCHRONIZERS} each in a client of its own (two clients of one server, as two
 * processes as far as ownership goes), for {@code JUC} a {@link ReentrantLock} and its conditions
 * in one JVM, the floor of what the pattern costs without a network. One operation is one round:
 * A (the benchmark thread) takes the lock, passes the turn to B, signals {@code pong} and awaits
 * {@code ping} until the turn is back; B, waiting in {@code pong.await()}, wakes, takes the lock
 * again, passes the turn back and signals {@code ping}, then awaits {@code pong} again. So a round
 * is two hand-offs, each an await's release, a signal, a wake-up and an await's re-take. Reported
 * as average time per round, in µs. The turn is a volatile field, read and written only under the
 * lock.
 *
 * <p>The {@code REDIS-STATS} line counts the round trips Redis served per round.
 *
 * <pre>java -jar jmh/target/benchmarks.jar ConditionPingPongBenchmark -p impl=SYNCHRONIZERS,JUC -rf json</pre>
 */
public class ConditionPingPongBenchmark extends RedisBenchmark {

    /** Which lock and conditions. */
    public enum Impl {
        /** {@code RedisSynchronizers.lock(name)} and its {@code newCondition()}, in two clients. */
        SYNCHRONIZERS,
        /** {@link ReentrantLock} and its conditions, one JVM, no network. */
        JUC
    }

    /** How long B's await sleeps before it looks whether the trial is over. */
    static final long POLL_MILLIS = 200;
    static final long STEP_TIMEOUT_SECONDS = 10;

    @Param({"SYNCHRONIZERS", "JUC"})
    public Impl impl;

    private Lock lockA;
    private Condition pingA;
    private Condition pongA;
    private Lock lockB;
    private Condition pingB;
    private Condition pongB;
    private volatile boolean turnIsB;
    private volatile boolean running;
    private volatile Throwable failure;
    private Thread b;

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() throws InterruptedException {
        startRedis();
        if (impl == Impl.JUC) {
            ReentrantLock lock = new ReentrantLock();
            lockA = lock;
            lockB = lock;
            pingA = lock.newCondition();
            pongA = lock.newCondition();
            pingB = pingA;
            pongB = pongA;
        } else {
            String name = "bench-cond-" + UUID.randomUUID();
            RedisSynchronizers a = closeAtEnd(RedisSynchronizers.builder().uri(target()).lease(Duration.ofSeconds(30))
                    .build());
            RedisSynchronizers other = closeAtEnd(RedisSynchronizers.builder().uri(target())
                    .lease(Duration.ofSeconds(30)).build());
            lockA = a.lock(name);
            pingA = lockA.newCondition();
            pongA = lockA.newCondition();
            lockB = other.lock(name);
            pingB = lockB.newCondition();
            pongB = lockB.newCondition();
        }
        running = true;
        b = new Thread(this::pong, "condition-b");
        b.setDaemon(true);
        b.start();
    }

    @TearDown(Level.Trial)
    public void stop() throws InterruptedException {
        running = false;
        try {
            b.join(TimeUnit.SECONDS.toMillis(STEP_TIMEOUT_SECONDS));
        } finally {
            stopRedis();
        }
    }

    /** B: waits for its turn on {@code pong}, hands the turn back and signals {@code ping}. */
    private void pong() {
        lockB.lock();
        try {
            while (running) {
                if (!turnIsB) {
                    pongB.await(POLL_MILLIS, TimeUnit.MILLISECONDS);
                    continue;
                }
                turnIsB = false;
                pingB.signal();
            }
        } catch (Throwable e) {
            failure = e;
        } finally {
            lockB.unlock();
        }
    }

    /** A: one round, from handing B the turn until the turn is back. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Threads(1)
    public void round() throws InterruptedException {
        lockA.lock();
        try {
            turnIsB = true;
            pongA.signal();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP_TIMEOUT_SECONDS);
            while (turnIsB) {
                if (failure != null) {
                    throw new IllegalStateException("B failed", failure);
                }
                if (pingA.awaitNanos(deadline - System.nanoTime()) <= 0 && turnIsB) {
                    throw new IllegalStateException("B did not hand the turn back within " + STEP_TIMEOUT_SECONDS + " s");
                }
            }
        } finally {
            lockA.unlock();
        }
        operations.incrementAndGet();
    }
}
