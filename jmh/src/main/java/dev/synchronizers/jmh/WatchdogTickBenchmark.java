package dev.synchronizers.jmh;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;
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
 * One watchdog renewal tick with 10,000 held locks, for each {@link LockImpl} that has a
 * watchdog: its time, and its Redis work in the {@code REDIS-STATS} line, where one operation is
 * one tick ({@code scriptCalls/op} is renewal script calls per tick, {@code reads/op} socket reads
 * per tick). A read is a round trip only for small requests: Redis reads a request at most 16 KB
 * at a time, so one of our 500-hold renewal calls (about 45 KB) takes about three reads. The
 * benchmark starts its own {@code redis-server} on loopback.
 *
 * <pre>java -jar jmh/target/benchmarks.jar WatchdogTickBenchmark -rf json -rff jmh-watchdog.json</pre>
 *
 * <p>Set-up, per trial: one client with a 3 s lease, so that both watchdogs tick every second
 * (ours: {@code lease(3 s)}, a tick every lease/3; Redisson: {@code lockWatchdogTimeout} 3000 ms,
 * a tick every third of it, renewing in chunks of its default {@code lockWatchdogBatchSize}, 100).
 * 100 platform threads each lock 100 names of that client and stay alive, parked, until the trial
 * ends: our watchdog stops renewing a hold whose thread has ended. Then the benchmark watches one
 * full tick to learn how many renewal script calls a tick makes (the tick before it may have
 * started while locks were still being taken, so it is skipped).
 *
 * <p>Measurement: {@link Mode#SingleShotTime}, one invocation per iteration, one tick per
 * invocation, because a tick is a rare event of its own schedule, not something the benchmark
 * thread can repeat: throughput or average time over a fixed window would mostly time the wait
 * between ticks, and a window of a few seconds holds a varying number of ticks (both watchdogs
 * schedule the next tick a period after the previous one <em>ended</em>). Instead, a poller sends
 * {@code INFO commandstats} over its own connection about every 0.1 ms. Untimed, before each
 * invocation, it waits until Redis has run the tick's first renewal script; the timed invocation
 * polls until Redis has run the tick's last one (the count learnt at set-up); untimed, after it, it
 * waits until no renewal has come for 200 ms and fails the run if the tick made a different number
 * of calls. The score is thus the tick's length as Redis sees it, from the end of its first renewal
 * call to the end of its last, give or take a poll (about 0.2 ms): for ours the script calls
 * pipelined, for Redisson's its calls one after the other. The per-iteration snapshots of {@link
 * RedisBenchmark} fall in the quiet second between ticks, so each covers exactly one tick, and the
 * poller's own reads and those of the snapshots themselves (measured once at set-up, on the idle
 * server) are not counted in {@code reads/op}.
 *
 * <p>The floor has no watchdog: {@code -p impl=FLOOR} fails at set-up as no renewal ever comes.
 */
public class WatchdogTickBenchmark extends RedisBenchmark {

    static final int HOLDERS = 100;
    static final int LOCKS_PER_HOLDER = 100;
    /** The lease of every hold: a tick every second for both watchdogs. */
    static final Duration LEASE = Duration.ofSeconds(3);
    /** A tick is over once no renewal call has come for this long (its calls are under a ms apart). */
    static final long QUIET_MILLIS = 200;
    /** Pause between two polls while a tick is due or running. */
    static final long POLL_NANOS = 100_000;
    /** Pause between two polls while waiting for quiet. */
    static final long QUIET_POLL_MILLIS = 5;
    /** How long taking the locks, or waiting for a tick, may take before the run fails instead of hanging. */
    static final long TIMEOUT_SECONDS = 60;
    /** Snapshots taken at set-up to measure their own socket reads; the least is used. */
    static final int CALIBRATION_SNAPSHOTS = 3;

    @Param({"SYNCHRONIZERS", "REDISSON"})
    public LockImpl impl;

    private List<BenchLock> locks;
    private final List<Thread> holders = new ArrayList<>();
    private final CountDownLatch held = new CountDownLatch(HOLDERS);
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicReference<RuntimeException> holderFailure = new AtomicReference<>();
    private RedisClient probeClient;
    private StatefulRedisConnection<String, String> probe;
    /** Renewal script calls of one full tick, learnt at set-up. */
    private long callsPerTick;
    /** Socket reads that one pair of {@link RedisBenchmark}'s snapshots adds to the window between them. */
    private long snapshotReads;
    /** Script calls counted when the current tick began. */
    private long tickBase;
    /** Script calls counted when the last tick was over. */
    private long quietCount;

    @Override
    protected String implName() {
        return impl.name();
    }

    @Setup(Level.Trial)
    public void start() throws InterruptedException {
        startRedis();
        List<String> names = IntStream.range(0, HOLDERS * LOCKS_PER_HOLDER)
                .mapToObj(i -> "bench-watchdog-" + i)
                .toList();
        locks = impl.open(server.uri(), names, LEASE);
        probeClient = RedisClient.create(server.uri());
        probe = probeClient.connect();
        for (int h = 0; h < HOLDERS; h++) {
            List<BenchLock> mine = locks.subList(h * LOCKS_PER_HOLDER, (h + 1) * LOCKS_PER_HOLDER);
            Thread holder = new Thread(() -> hold(mine), "watchdog-holder-" + h);
            // A daemon, so that a hung lock() cannot keep the fork alive.
            holder.setDaemon(true);
            holders.add(holder);
            holder.start();
        }
        if (!held.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the holders did not take their locks within " + TIMEOUT_SECONDS + " s");
        }
        RuntimeException failure = holderFailure.get();
        if (failure != null) {
            throw new IllegalStateException("a holder could not take its locks", failure);
        }
        long skipped = scriptCalls();
        awaitTickStart(skipped);
        long before = awaitQuiet();
        awaitTickStart(before);
        quietCount = awaitQuiet();
        callsPerTick = quietCount - before;
        snapshotReads = Long.MAX_VALUE;
        RedisStats previous = RedisStats.of(server);
        for (int i = 0; i < CALIBRATION_SNAPSHOTS; i++) {
            RedisStats next = RedisStats.of(server);
            snapshotReads = Math.min(snapshotReads, next.reads() - previous.reads());
            previous = next;
        }
        if (scriptCalls() != quietCount) {
            throw new IllegalStateException("a renewal came while the snapshots were being measured; "
                    + "the tick period is shorter than expected");
        }
    }

    @TearDown(Level.Trial)
    public void stop() throws InterruptedException {
        try {
            release.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            for (Thread holder : holders) {
                holder.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            }
            if (probe != null) {
                probe.close();
                probeClient.shutdown();
            }
            if (locks != null) {
                // All handles share one client: closing one closes it.
                locks.get(0).close();
            }
        } finally {
            stopRedis();
        }
        RuntimeException failure = holderFailure.get();
        if (failure != null) {
            throw new IllegalStateException("a holder failed", failure);
        }
    }

    /** A holder thread: takes its locks, stays alive until the trial ends, then releases them. */
    private void hold(List<BenchLock> mine) {
        List<BenchLock> taken = new ArrayList<>();
        try {
            for (BenchLock lock : mine) {
                lock.lock();
                taken.add(lock);
            }
        } catch (RuntimeException e) {
            holderFailure.compareAndSet(null, e);
        } finally {
            held.countDown();
        }
        try {
            release.await();
            for (BenchLock lock : taken) {
                lock.unlock();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            holderFailure.compareAndSet(null, e);
        }
    }

    /** Waits, untimed, until Redis has run the first renewal call of the next tick. */
    @Setup(Level.Invocation)
    public void awaitTick() {
        if (operations.get() == 0) {
            // The first tick of the iteration: its window holds one pair of snapshots.
            probes.addAndGet(snapshotReads);
        }
        long now = scriptCalls();
        if (now != quietCount) {
            throw new IllegalStateException("a renewal came between two ticks (" + (now - quietCount)
                    + " calls): this iteration's window would not cover exactly one tick");
        }
        tickBase = awaitTickStart(now);
    }

    /** The rest of the tick: returns once Redis has run its last renewal call. */
    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Threads(1)
    public void renewalTick() {
        long last = tickBase + callsPerTick;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (scriptCalls() < last) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("a tick did not make its " + callsPerTick + " renewal calls within "
                        + TIMEOUT_SECONDS + " s");
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
        operations.incrementAndGet();
    }

    /** Waits, untimed, until the tick is over, and checks that it made no more calls than learnt. */
    @TearDown(Level.Invocation)
    public void awaitTickEnd() {
        quietCount = awaitQuiet();
        if (quietCount - tickBase != callsPerTick) {
            throw new IllegalStateException("a tick made " + (quietCount - tickBase)
                    + " renewal calls, the tick seen at set-up " + callsPerTick);
        }
    }

    /** Polls until the script calls differ from {@code from}; returns {@code from}. */
    private long awaitTickStart(long from) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (scriptCalls() == from) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no watchdog renewal within " + TIMEOUT_SECONDS + " s: "
                        + impl + " renews nothing");
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
        return from;
    }

    /** Polls until the script calls have not changed for {@link #QUIET_MILLIS}; returns their count. */
    private long awaitQuiet() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        long count = scriptCalls();
        long since = System.nanoTime();
        while (System.nanoTime() - since < TimeUnit.MILLISECONDS.toNanos(QUIET_MILLIS)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the renewals did not pause for " + QUIET_MILLIS + " ms within "
                        + TIMEOUT_SECONDS + " s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(QUIET_POLL_MILLIS));
            long now = scriptCalls();
            if (now != count) {
                count = now;
                since = System.nanoTime();
            }
        }
        return count;
    }

    /** Top-level script calls so far, over the poller's connection: one socket read, counted as a probe. */
    private long scriptCalls() {
        probes.incrementAndGet();
        return RedisStats.parse(probe.sync().info("commandstats"), "", "").scriptCalls();
    }
}
