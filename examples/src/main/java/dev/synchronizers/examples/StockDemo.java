package dev.synchronizers.examples;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.SemaphoreSnapshot;
import dev.synchronizers.examples.PoolWorker.LimitKind;
import dev.synchronizers.examples.StockWorker.LockKind;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * The demo: buyers in four JVMs race to sell a stock of 200 units kept in Redis, first under a
 * textbook Redis lock ({@link NaiveLock}), then under {@link dev.synchronizers.DistributedLock},
 * with the same workload, and the damage is counted. Then the same JVMs' threads call a slow
 * downstream service that must never see more than {@value #POOL_LIMIT} concurrent calls, first
 * limited per JVM by a {@link java.util.concurrent.Semaphore}, then fleet-wide by {@link
 * dev.synchronizers.DistributedSemaphore}, and the peak concurrency the service saw is printed.
 *
 * <p>Run it from the repository root:
 * <pre>./mvnw -q -pl examples -am -Pdemo -Dmaven.test.skip=true package</pre>
 * It uses the Redis server named by {@code REDIS_URL} if set, and otherwise starts a throwaway
 * one and stops it at the end. It exits with status 0 only if the {@code DistributedLock} run sold
 * exactly the stock with no lost update and the {@code DistributedSemaphore} run's peak stayed
 * within the limit, so it doubles as a smoke test.
 */
public final class StockDemo {

    private static final int STOCK = 200;
    private static final int WORKER_JVMS = 4;
    private static final int BUYERS_PER_JVM = 4;
    private static final int POOL_LIMIT = 4;
    private static final int CALLS_PER_THREAD = 25;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(20);

    private StockDemo() {
    }

    /**
     * Runs both rounds of each part and prints a table for each round.
     *
     * @param args ignored
     * @throws InterruptedException if interrupted while waiting for the workers
     */
    public static void main(String[] args) throws InterruptedException {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Outcome outcome;
        int localPeak;
        int sharedPeak;
        try (RedisServer server = RedisServers.start();
                RedisClient client = RedisClient.create(server.uri());
                StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisCommands<String, String> redis = connection.sync();
            System.out.printf("Redis %s (source: %s) on %s:%d%n",
                    server.version(), server.source(), server.host(), server.port());
            System.out.printf("%d units in stock; %d worker JVMs x %d buyer threads. A sale works under the lock"
                    + " ~%d µs;%n1 sale in %d stalls for %d ms, as in a GC pause.%n",
                    STOCK, WORKER_JVMS, BUYERS_PER_JVM, StockWorker.WORK_MICROS,
                    StockWorker.STALL_ONE_IN, StockWorker.STALL_MILLIS);
            run(1, LockKind.NAIVE, server.uri(), redis);
            outcome = run(2, LockKind.DISTRIBUTED, server.uri(), redis);
            redis.del(StockWorker.STOCK_KEY, StockWorker.SOLD_KEY, StockWorker.START_KEY, StockWorker.NAIVE_LOCK_KEY);
            System.out.printf("%nA slow downstream service (%d ms a call) must never see more than %d concurrent calls"
                    + " from the fleet;%n%d worker JVMs x %d caller threads make %d calls each.%n",
                    PoolWorker.CALL_MILLIS, POOL_LIMIT, WORKER_JVMS, BUYERS_PER_JVM, CALLS_PER_THREAD);
            List<ChildJvm> poolWorkers = startWorkers(PoolWorker.class, List.of(server.uri(),
                    Integer.toString(BUYERS_PER_JVM), Integer.toString(CALLS_PER_THREAD), Integer.toString(POOL_LIMIT),
                    LimitKind.LOCAL.name(), LimitKind.DISTRIBUTED.name()));
            try {
                localPeak = runPool(3, LimitKind.LOCAL, poolWorkers, redis, server.uri());
                sharedPeak = runPool(4, LimitKind.DISTRIBUTED, poolWorkers, redis, server.uri());
            } finally {
                poolWorkers.forEach(ChildJvm::close);
            }
            redis.del(PoolWorker.IN_FLIGHT_KEY, PoolWorker.PEAK_KEY, PoolWorker.CALLS_KEY, PoolWorker.START_KEY);
        }
        boolean sold = outcome.sold() == STOCK && outcome.lostUpdates() == 0 && outcome.stockLeft() == 0;
        boolean limited = sharedPeak <= POOL_LIMIT;
        System.out.println(sold && limited
                ? String.format("%nDistributedLock sold every unit exactly once; DistributedSemaphore never let more"
                        + " than %d calls in at once (peak %d; %d with per-JVM limits).",
                        POOL_LIMIT, sharedPeak, localPeak)
                : "\nFAILED:" + (sold ? "" : " DistributedLock oversold or lost updates.")
                        + (limited ? "" : " DistributedSemaphore let more than " + POOL_LIMIT + " calls in at once."));
        System.exit(sold && limited ? 0 : 1);
    }

    /** Resets the stock, lets the workers sell it under {@code kind}, and prints what happened. */
    private static Outcome run(int number, LockKind kind, String uri, RedisCommands<String, String> redis)
            throws InterruptedException {
        redis.del(StockWorker.STOCK_KEY, StockWorker.SOLD_KEY, StockWorker.START_KEY, StockWorker.NAIVE_LOCK_KEY);
        redis.set(StockWorker.STOCK_KEY, Integer.toString(STOCK));
        List<ChildJvm> workers = startWorkers(StockWorker.class,
                List.of(uri, kind.name(), Integer.toString(BUYERS_PER_JVM)));
        Results results;
        try {
            results = runRound(workers, StockWorker.START_KEY, redis, () -> { });
        } finally {
            workers.forEach(ChildJvm::close);
        }
        List<Integer> salesPerWorker = new ArrayList<>();
        int lostUpdates = 0;
        for (Map<String, String> result : results.perWorker()) {
            salesPerWorker.add(Integer.parseInt(result.get("sales")));
            lostUpdates += Integer.parseInt(result.get("lost"));
        }
        Outcome outcome = new Outcome(Integer.parseInt(redis.get(StockWorker.SOLD_KEY)),
                Integer.parseInt(redis.get(StockWorker.STOCK_KEY)), lostUpdates);
        System.out.printf("%nRun %d, %s%n", number, kind.description);
        System.out.printf("  sold           %5d  (per worker JVM: %s)%n", outcome.sold(),
                salesPerWorker.stream().map(String::valueOf).collect(Collectors.joining(", ")));
        System.out.printf("  oversold       %5d  units beyond the %d in stock%n",
                Math.max(0, outcome.sold() - STOCK), STOCK);
        System.out.printf("  lost updates   %5d  sales erased by a buyer writing back a stale stock count%n",
                outcome.lostUpdates());
        System.out.printf("  stock left     %5d%n", outcome.stockLeft());
        printWaits("lock wait", results);
        printLostHolds(results, kind == LockKind.NAIVE ? "the naive lock cannot tell when its lease runs out" : null);
        System.out.printf("  total time     %.2f s%n", results.elapsed().toMillis() / 1000.0);
        return outcome;
    }

    /**
     * Lets the pool workers, whose next round is {@code kind}, call the downstream service; prints
     * what it saw and returns the peak.
     */
    private static int runPool(int number, LimitKind kind, List<ChildJvm> workers, RedisCommands<String, String> redis,
            String uri) throws InterruptedException {
        redis.del(PoolWorker.IN_FLIGHT_KEY, PoolWorker.PEAK_KEY, PoolWorker.CALLS_KEY, PoolWorker.START_KEY);
        SemaphoreSnapshot[] midRun = new SemaphoreSnapshot[1];
        Results results;
        try (RedisSynchronizers observer = RedisSynchronizers.create(uri)) {
            results = runRound(workers, PoolWorker.START_KEY, redis, kind == LimitKind.DISTRIBUTED
                    ? () -> midRun[0] = busySnapshot(observer.semaphore(PoolWorker.SEMAPHORE_NAME))
                    : () -> { });
        }
        int peak = Integer.parseInt(redis.get(PoolWorker.PEAK_KEY));
        System.out.printf("%nRun %d, %s%n", number, kind.description.formatted(POOL_LIMIT));
        System.out.printf("  calls          %5s  (per worker JVM: %s)%n", redis.get(PoolWorker.CALLS_KEY),
                results.perWorker().stream().map(result -> result.get("calls")).collect(Collectors.joining(", ")));
        System.out.printf("  peak at once   %5d  concurrent calls seen by the downstream service; the limit is %d%n",
                peak, POOL_LIMIT);
        printWaits("permit wait", results);
        printLostHolds(results, kind == LimitKind.LOCAL ? "a per-JVM semaphore has no leases" : null);
        if (midRun[0] != null) {
            printSnapshot(midRun[0]);
        }
        System.out.printf("  total time     %.2f s%n", results.elapsed().toMillis() / 1000.0);
        return peak;
    }

    /** Starts the worker JVMs with {@code args} and waits until all are ready. */
    private static List<ChildJvm> startWorkers(Class<?> mainClass, List<String> args) throws InterruptedException {
        List<ChildJvm> workers = new ArrayList<>();
        try {
            for (int i = 0; i < WORKER_JVMS; i++) {
                workers.add(ChildJvm.start(mainClass.getName(), Map.of(), args));
            }
            for (ChildJvm worker : workers) {
                worker.awaitLine("READY", START_TIMEOUT);
            }
            return workers;
        } catch (RuntimeException | InterruptedException e) {
            workers.forEach(ChildJvm::close);
            throw e;
        }
    }

    /**
     * Starts the workers' next round at once through {@code startKey}, runs {@code duringRound}
     * while they work, and collects their {@code RESULT} lines.
     */
    private static Results runRound(List<ChildJvm> workers, String startKey, RedisCommands<String, String> redis,
            Runnable duringRound) throws InterruptedException {
        long startedAt = System.nanoTime();
        long deadline = startedAt + RUN_TIMEOUT.toNanos();
        redis.rpush(startKey, Collections.nCopies(workers.size(), "go").toArray(new String[0]));
        duringRound.run();
        List<Map<String, String>> perWorker = new ArrayList<>();
        for (ChildJvm worker : workers) {
            perWorker.add(parse(worker.awaitLine("RESULT ",
                    Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))));
        }
        return new Results(perWorker, Duration.ofNanos(System.nanoTime() - startedAt));
    }

    /** Parses {@code "RESULT k1=v1 k2=v2"} into a map. */
    private static Map<String, String> parse(String line) {
        return Arrays.stream(line.substring("RESULT ".length()).split(" "))
                .map(pair -> pair.split("=", 2))
                .collect(Collectors.toMap(pair -> pair[0], pair -> pair[1]));
    }

    /**
     * Prints each worker JVM's median and 99th percentile wait, as its meter registry computed them
     * ({@code synchronizers.wait} for our synchronizers): percentiles of different JVMs cannot be
     * merged into one, so each is shown.
     */
    private static void printWaits(String label, Results results) {
        System.out.printf("  %-14s p50 %s ms, p99 %s ms per worker JVM (%d acquisitions)%n", label,
                results.column("wait_p50"), results.column("wait_p99"),
                results.perWorker().stream().mapToLong(result -> Long.parseLong(result.get("wait_count"))).sum());
    }

    /** Prints the holds the workers' watchdogs reported lost ({@code synchronizers.hold.lost}), or why none can be. */
    private static void printLostHolds(Results results, String notCounted) {
        if (notCounted != null) {
            System.out.printf("  lost holds         -  %s%n", notCounted);
            return;
        }
        System.out.printf("  lost holds     %5d  reported by the watchdogs (synchronizers.hold.lost, all JVMs)%n",
                results.perWorker().stream().mapToLong(result -> Long.parseLong(result.get("lost_holds"))).sum());
    }

    /**
     * Takes snapshots of the semaphore until one shows it busy (every permit held and callers
     * waiting), or for at most two seconds, and returns the last: what an operator would see.
     */
    private static SemaphoreSnapshot busySnapshot(DistributedSemaphore semaphore) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        SemaphoreSnapshot snapshot = semaphore.snapshot();
        while ((snapshot.availablePermits() > 0 || snapshot.queueLength() == 0) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            snapshot = semaphore.snapshot();
        }
        return snapshot;
    }

    /** Prints a semaphore snapshot: the permits, and who holds them for how long. */
    private static void printSnapshot(SemaphoreSnapshot snapshot) {
        System.out.printf("  mid-run snapshot of '%s' (DistributedSemaphore.snapshot()): %d of %d permits free,"
                + " %d callers queued%n", snapshot.name(), snapshot.availablePermits(), snapshot.totalPermits(),
                snapshot.queueLength());
        for (SemaphoreSnapshot.PermitHolder holder : snapshot.holders()) {
            System.out.printf("      client %s... holds %d permit%s (%d grant%s), lease ends in %d ms%n",
                    holder.clientId().substring(0, 8), holder.permits(), holder.permits() == 1 ? "" : "s",
                    holder.grants(), holder.grants() == 1 ? "" : "s", holder.leaseRemainingMillis());
        }
    }

    /** The parsed {@code RESULT} line of each worker JVM, and how long they took from the start signal. */
    private record Results(List<Map<String, String>> perWorker, Duration elapsed) {

        /** One field of every worker's line, joined with " / ". */
        String column(String field) {
            return perWorker.stream().map(result -> result.get(field)).collect(Collectors.joining(" / "));
        }
    }

    /** What one run left behind in Redis, and what its buyers reported. */
    private record Outcome(int sold, int stockLeft, int lostUpdates) {
    }
}
