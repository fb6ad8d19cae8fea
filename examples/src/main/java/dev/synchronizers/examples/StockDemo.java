package dev.synchronizers.examples;

import dev.synchronizers.examples.StockWorker.LockKind;
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
import java.util.stream.Collectors;

/**
 * The demo: buyers in four JVMs race to sell a stock of 200 units kept in Redis, first under a
 * textbook Redis lock ({@link NaiveLock}), then under {@link dev.synchronizers.DistributedLock},
 * with the same workload, and the damage is counted.
 *
 * <p>Run it from the repository root:
 * <pre>./mvnw -q -pl examples -am -Pdemo -Dmaven.test.skip=true package</pre>
 * It uses the Redis server named by {@code REDIS_URL} if set, and otherwise starts a throwaway
 * one and stops it at the end. It exits with status 0 only if the {@code DistributedLock} run sold
 * exactly the stock with no lost update, so it doubles as a smoke test.
 */
public final class StockDemo {

    private static final int STOCK = 200;
    private static final int WORKER_JVMS = 4;
    private static final int BUYERS_PER_JVM = 4;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(20);

    private StockDemo() {
    }

    /**
     * Runs both rounds and prints a table for each.
     *
     * @param args ignored
     * @throws InterruptedException if interrupted while waiting for the workers
     */
    public static void main(String[] args) throws InterruptedException {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Outcome outcome;
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
        }
        boolean correct = outcome.sold() == STOCK && outcome.lostUpdates() == 0 && outcome.stockLeft() == 0;
        System.out.println(correct
                ? "\nDistributedLock sold every unit exactly once."
                : "\nFAILED: DistributedLock oversold or lost updates.");
        System.exit(correct ? 0 : 1);
    }

    /** Resets the stock, lets the workers sell it under {@code kind}, and prints what happened. */
    private static Outcome run(int number, LockKind kind, String uri, RedisCommands<String, String> redis)
            throws InterruptedException {
        redis.del(StockWorker.STOCK_KEY, StockWorker.SOLD_KEY, StockWorker.START_KEY, StockWorker.NAIVE_LOCK_KEY);
        redis.set(StockWorker.STOCK_KEY, Integer.toString(STOCK));
        List<ChildJvm> workers = new ArrayList<>();
        try {
            for (int i = 0; i < WORKER_JVMS; i++) {
                workers.add(ChildJvm.start(StockWorker.class.getName(), Map.of(),
                        List.of(uri, kind.name(), Integer.toString(BUYERS_PER_JVM))));
            }
            for (ChildJvm worker : workers) {
                worker.awaitLine("READY", START_TIMEOUT);
            }
            long startedAt = System.nanoTime();
            long deadline = startedAt + RUN_TIMEOUT.toNanos();
            redis.rpush(StockWorker.START_KEY, Collections.nCopies(WORKER_JVMS, "go").toArray(new String[0]));
            List<Integer> salesPerWorker = new ArrayList<>();
            List<Long> waitsMicros = new ArrayList<>();
            int lostUpdates = 0;
            for (ChildJvm worker : workers) {
                Map<String, String> result = parse(worker.awaitLine("RESULT ",
                        Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))));
                salesPerWorker.add(Integer.parseInt(result.get("sales")));
                lostUpdates += Integer.parseInt(result.get("lost"));
                Arrays.stream(result.get("waits").split(",")).map(Long::valueOf).forEach(waitsMicros::add);
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - startedAt);
            Outcome outcome = new Outcome(Integer.parseInt(redis.get(StockWorker.SOLD_KEY)),
                    Integer.parseInt(redis.get(StockWorker.STOCK_KEY)), lostUpdates);
            Collections.sort(waitsMicros);
            System.out.printf("%nRun %d, %s%n", number, kind.description);
            System.out.printf("  sold           %5d  (per worker JVM: %s)%n", outcome.sold(),
                    salesPerWorker.stream().map(String::valueOf).collect(Collectors.joining(", ")));
            System.out.printf("  oversold       %5d  units beyond the %d in stock%n",
                    Math.max(0, outcome.sold() - STOCK), STOCK);
            System.out.printf("  lost updates   %5d  sales erased by a buyer writing back a stale stock count%n",
                    outcome.lostUpdates());
            System.out.printf("  stock left     %5d%n", outcome.stockLeft());
            System.out.printf("  lock wait      p50 %.1f ms, p99 %.1f ms (%d acquisitions)%n",
                    percentile(waitsMicros, 50), percentile(waitsMicros, 99), waitsMicros.size());
            System.out.printf("  total time     %.2f s%n", elapsed.toMillis() / 1000.0);
            return outcome;
        } finally {
            workers.forEach(ChildJvm::close);
        }
    }

    /** Parses {@code "RESULT k1=v1 k2=v2"} into a map. */
    private static Map<String, String> parse(String line) {
        return Arrays.stream(line.substring("RESULT ".length()).split(" "))
                .map(pair -> pair.split("=", 2))
                .collect(Collectors.toMap(pair -> pair[0], pair -> pair[1]));
    }

    /** The nearest-rank percentile of sorted microseconds, in milliseconds. */
    private static double percentile(List<Long> sortedMicros, int percent) {
        int rank = (int) Math.ceil(percent / 100.0 * sortedMicros.size());
        return sortedMicros.get(Math.max(0, rank - 1)) / 1000.0;
    }

    /** What one run left behind in Redis, and what its buyers reported. */
    private record Outcome(int sold, int stockLeft, int lostUpdates) {
    }
}
