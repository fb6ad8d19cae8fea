package dev.synchronizers.jmh;

import dev.synchronizers.redis.RedisSynchronizers;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Control;

/**
 * One lock name going back and forth between two clients of one server (two {@code
 * RedisSynchronizers} in this JVM, each with its own connections, as two processes would have),
 * with lock caching on or off ({@code -p caching=true,false}): what a hand-over between clients
 * costs, and what asking a cached lock back adds to it.
 *
 * <ul>
 *   <li>{@code alternate} (methods {@code a} and {@code b}, one thread each): strict alternation by
 *       a handshake outside the lock. A thread waits for its turn, locks and unlocks the name once,
 *       then passes the turn to the other (a volatile field and an {@code unpark}). Every operation
 *       is a take of the lock its other client had last, so every operation is a hand-over between
 *       clients, and never a wait inside Redis for a live hold. The score is hand-overs per second
 *       (the group's total); the {@code REDIS-STATS} line is per hand-over. With caching on, this
 *       is the steady state: a client that gave its cache back to an asker does not cache the name
 *       again for a lease (30 s here), so most hand-overs are of plain holds.</li>
 *   <li>{@code askBack}: one hand-over of a fresh name each time, so that with caching on the lock
 *       is always cached by the other client when taken. Before each operation (not timed), client
 *       A locks and unlocks a name never used before (with caching on, A then caches it, idle);
 *       the operation is client B's {@code lock()} + {@code unlock()} of that name: with caching on
 *       B's try finds A's cache, asks it back, and waits until A gives it back; with caching off, A
 *       released it in Redis and B takes it at once. The score is the time of B's lock + unlock;
 *       the {@code REDIS-STATS} line counts A's untimed lock + unlock as well, per operation.</li>
 * </ul>
 *
 * <pre>java -jar jmh/target/benchmarks.jar LockHandOverBenchmark -p caching=false,true</pre>
 */
public class LockHandOverBenchmark extends RedisBenchmark {

    /** How long a thread waiting for its turn sleeps before it looks whether the iteration is over. */
    static final long TURN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Whether both clients cache locks ({@code RedisSynchronizers.Builder.lockCaching}). */
    @Param({"false", "true"})
    public boolean caching;

    private RedisSynchronizers clientA;
    private RedisSynchronizers clientB;
    private Lock lockA;
    private Lock lockB;
    /** Whose turn it is in {@code alternate}: 0 for A, 1 for B. */
    private volatile int turn;
    private final AtomicReferenceArray<Thread> parties = new AtomicReferenceArray<>(2);
    private final AtomicLong freshNames = new AtomicLong();

    @Override
    protected String implName() {
        return caching ? "SYNCHRONIZERS_CACHING" : "SYNCHRONIZERS";
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        clientA = closeAtEnd(client());
        clientB = closeAtEnd(client());
        lockA = clientA.lock("bench-hand-over");
        lockB = clientB.lock("bench-hand-over");
    }

    private RedisSynchronizers client() {
        return LockImpl.target(RedisSynchronizers.builder(), target()).lease(LockImpl.DEFAULT_LEASE)
                .lockCaching(caching).build();
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** Client A's side of {@code alternate}. */
    @Benchmark
    @Group("alternate")
    @GroupThreads(1)
    public void a(Control control) {
        takeTurn(0, lockA, control);
    }

    /** Client B's side of {@code alternate}. */
    @Benchmark
    @Group("alternate")
    @GroupThreads(1)
    public void b(Control control) {
        takeTurn(1, lockB, control);
    }

    /** Waits for turn {@code me}, locks and unlocks once, and passes the turn to the other client. */
    private void takeTurn(int me, Lock lock, Control control) {
        parties.set(me, Thread.currentThread());
        while (turn != me) {
            if (control.stopMeasurement) {
                return;
            }
            LockSupport.parkNanos(TURN_POLL_NANOS);
        }
        lock.lock();
        lock.unlock();
        operations.incrementAndGet();
        turn = 1 - me;
        Thread other = parties.get(1 - me);
        if (other != null) {
            LockSupport.unpark(other);
        }
    }

    /** A name never used before, left by client A (cached, idle, if caching is on) for client B to take. */
    @State(Scope.Thread)
    public static class Fresh {
        Lock lockB;

        @Setup(Level.Invocation)
        public void leftByA(LockHandOverBenchmark benchmark) {
            String name = "bench-ask-back-" + benchmark.freshNames.incrementAndGet();
            Lock lockA = benchmark.clientA.lock(name);
            lockA.lock();
            lockA.unlock();
            lockB = benchmark.clientB.lock(name);
        }
    }

    /** Client B takes and releases the name client A just left. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void askBack(Fresh fresh) {
        fresh.lockB.lock();
        fresh.lockB.unlock();
        operations.incrementAndGet();
    }
}
