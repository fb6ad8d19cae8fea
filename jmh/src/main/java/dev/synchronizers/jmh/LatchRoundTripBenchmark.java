package dev.synchronizers.jmh;

import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
 * Release latency of a countdown latch across two clients, for each {@link LatchImpl}: client A
 * waits in {@code await()} on a latch at count 1, client B calls {@code countDown()}, and the
 * sample is the time from the start of B's {@code countDown()} call until B learns that A's
 * {@code await()} has returned. Reported in sample-time mode (p50, p99, ... in µs).
 *
 * <p>Roles: the benchmark thread is B; a helper thread started per trial is A. Each operation is
 * armed first, outside the timed region, in a {@code @Setup(Level.Invocation)}: {@code
 * trySetCount(1)} through B, tell A to call {@code await()}, and wait until A's thread sleeps
 * inside {@code await()} (read from its stack, without asking Redis). A is then past its subscribe
 * and its check of the count, so B's
 * count-down reaches it either way. The timed region is exactly: B's {@code countDown()} (its
 * round trip, and the publish it triggers), A's client receiving the release and waking A's
 * thread, whatever A's {@code await()} does before it returns (for both implementations, reading
 * the count once more), A releasing a {@link Semaphore} and the benchmark thread waking on it.
 * The last step is a thread hand-off inside one JVM, some microseconds on an idle machine; the
 * two clients are in one JVM, as in the other benchmarks, but share no connection.
 *
 * <p>The {@code REDIS-STATS} line counts per operation everything the implementations send,
 * arming included: A's subscribe, reads of the count and unsubscribe (where the implementation
 * does not keep the subscription), B's set and count-down.
 *
 * <pre>java -jar jmh/target/benchmarks.jar LatchRoundTripBenchmark -rf json -rff jmh-latch.json</pre>
 */
public class LatchRoundTripBenchmark extends RedisBenchmark {

    /** How long any step waits for the other side before the benchmark fails instead of hanging. */
    static final long STEP_TIMEOUT_SECONDS = 10;
    /** Pause between two looks at the awaiter's stack while arming. */
    static final long PROBE_PAUSE_NANOS = 20_000;

    @Param({"SYNCHRONIZERS", "REDISSON"})
    public LatchImpl impl;

    private String name;
    private BenchLatch awaiting;
    private BenchLatch counting;
    private Thread awaiter;
    private final Semaphore go = new Semaphore(0);
    private final Semaphore returned = new Semaphore(0);
    private volatile boolean running;
    private volatile RuntimeException awaiterFailure;

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        name = "bench-latch-" + UUID.randomUUID();
        awaiting = closeAtEnd(impl.open(server.uri(), name));
        counting = closeAtEnd(impl.open(server.uri(), name));
        running = true;
        awaiter = new Thread(this::awaitLoop, "latch-awaiter");
        // A daemon, so that a hung await() cannot keep the fork alive.
        awaiter.setDaemon(true);
        awaiter.start();
    }

    @TearDown(Level.Trial)
    public void stop() throws InterruptedException {
        running = false;
        try {
            if (awaiter != null) {
                awaiter.interrupt();
                awaiter.join(TimeUnit.SECONDS.toMillis(STEP_TIMEOUT_SECONDS));
            }
        } finally {
            // Whatever failed above, the server this trial started must not outlive it.
            stopRedis();
        }
    }

    /** Client A's thread: one {@code await()} per {@code go}, one {@code returned} per return. */
    private void awaitLoop() {
        try {
            while (running) {
                if (go.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    awaiting.await();
                    returned.release();
                }
            }
        } catch (InterruptedException e) {
            // The trial is over.
        } catch (RuntimeException e) {
            awaiterFailure = e;
            returned.release();
        }
    }

    /** Sets the count to 1 and waits until A is asleep in its {@code await()}; not timed. */
    @Setup(Level.Invocation)
    public void arm() {
        if (!counting.trySetCount(1)) {
            throw new IllegalStateException("latch " + name + " was still counting down");
        }
        go.release();
        waitUntilAwaiterSleeps();
    }

    /** B counts down; returns when A's {@code await()} has returned. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Threads(1)
    public void countDownToAwaitReturn() throws InterruptedException {
        counting.countDown();
        if (!returned.tryAcquire(STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("await() did not return within " + STEP_TIMEOUT_SECONDS
                    + " s of countDown() on latch " + name);
        }
        RuntimeException failure = awaiterFailure;
        if (failure != null) {
            throw new IllegalStateException("await() failed on latch " + name, failure);
        }
        operations.incrementAndGet();
    }

    /**
     * Waits until A's thread sleeps inside {@code await()}, past its subscription and its check
     * of the count: in ours, in the wake-up dispatcher's sleep; in Redisson's, on the semaphore of
     * its subscription entry or (Redisson 4) on the latch of its subscription. (A subscription can outlive an await, ours lingers for a watchdog
     * tick, so the server's list of channels cannot tell a new waiter from the last one.)
     */
    private void waitUntilAwaiterSleeps() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP_TIMEOUT_SECONDS);
        while (!asleepInAwait(awaiter.getStackTrace())) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the awaiter of latch " + name + " did not start waiting within "
                        + STEP_TIMEOUT_SECONDS + " s; it is at " + java.util.Arrays.toString(awaiter.getStackTrace()));
            }
            LockSupport.parkNanos(PROBE_PAUSE_NANOS);
        }
    }

    private static boolean asleepInAwait(StackTraceElement[] stack) {
        boolean inAwait = false;
        boolean asleep = false;
        for (StackTraceElement frame : stack) {
            inAwait |= frame.getMethodName().equals("await") && frame.getClassName().contains("CountDownLatch");
            asleep |= frame.getClassName().endsWith("WakeupDispatcher$Subscription") && frame.getMethodName().equals("await")
                    || frame.getClassName().equals("java.util.concurrent.Semaphore") && frame.getMethodName().startsWith("acquire")
                    || frame.getClassName().equals("org.redisson.misc.ReclosableLatch") && frame.getMethodName().equals("await");
        }
        return inAwait && asleep;
    }

}
