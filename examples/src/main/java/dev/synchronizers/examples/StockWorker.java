package dev.synchronizers.examples;

import dev.synchronizers.redis.RedisSynchronizers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

/**
 * One worker JVM of {@link StockDemo}: its buyer threads sell the stock kept in Redis, one unit per
 * sale and each sale under a lock, until none is left.
 *
 * <p>Arguments: {@code <redis-uri> <NAIVE|DISTRIBUTED> <buyer-threads>}. The worker prints {@code
 * READY} once connected, waits for the demo's start signal, sells, and prints one line {@code
 * RESULT sales=<n> lost=<n> wait_count=<n> wait_p50=<ms> wait_p99=<ms> lost_holds=<n>}: its sales,
 * the sales it erased by writing a stale stock count, how long its {@code lock()} calls waited and
 * how many holds it lost, read back from its {@link WorkerMetrics} registry.
 */
public final class StockWorker {

    static final String STOCK_KEY = "stock-demo:stock";
    static final String SOLD_KEY = "stock-demo:sold";
    static final String START_KEY = "stock-demo:start";
    static final String NAIVE_LOCK_KEY = "stock-demo:naive-lock";
    static final String LOCK_NAME = "stock-demo";

    static final long NAIVE_LEASE_MILLIS = 10;
    static final long WORK_MICROS = 300;
    static final long STALL_MILLIS = 20;
    static final int STALL_ONE_IN = 20;

    /** The locks under test: both are a {@link Lock} to the buyer. */
    enum LockKind {
        NAIVE("naive lock: SET NX, then PEXPIRE " + NAIVE_LEASE_MILLIS + " ms; unlock: GET, compare, DEL"),
        DISTRIBUTED("DistributedLock: lock() / unlock(), lease renewed by the watchdog");

        final String description;

        LockKind(String description) {
            this.description = description;
        }
    }

    private final RedisCommands<String, String> redis;
    private final AtomicInteger sales = new AtomicInteger();
    private final AtomicInteger lostUpdates = new AtomicInteger();
    /** Where this worker's waits are timed: by the library for its lock, by the buyer for the naive one. */
    private final WorkerMetrics metrics = new WorkerMetrics();

    private StockWorker(RedisCommands<String, String> redis) {
        this.redis = redis;
    }

    /**
     * Runs one worker; see the class comment for the arguments and the output.
     *
     * @param args the Redis URI, the lock kind and the number of buyer threads
     * @throws Exception if Redis fails, the start signal does not come, or a buyer fails
     */
    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        String uri = args[0];
        LockKind kind = LockKind.valueOf(args[1]);
        int buyers = Integer.parseInt(args[2]);

        RedisClient client = RedisClient.create(uri);
        StockWorker worker;
        Timer waits;
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            worker = new StockWorker(connection.sync());
            try (RedisSynchronizers synchronizers = RedisSynchronizers.builder().uri(uri)
                    .meterRegistry(worker.metrics.registry).build()) {
                Lock sharedLock = synchronizers.lock(LOCK_NAME);
                waits = kind == LockKind.NAIVE ? worker.metrics.baselineWait() : worker.metrics.acquiredWaits("lock");
                worker.sell(kind, sharedLock, buyers);
            }
        } finally {
            client.shutdown();
        }
        System.out.println("RESULT sales=" + worker.sales + " lost=" + worker.lostUpdates + " "
                + WorkerMetrics.waits(waits) + " lost_holds=" + worker.metrics.lostHolds());
    }

    /** Says it is ready, waits for the start signal, then sells from {@code buyers} threads until the stock is gone. */
    private void sell(LockKind kind, Lock sharedLock, int buyers) throws Exception {
        System.out.println("READY");
        if (redis.blpop(30, START_KEY) == null) {
            throw new IllegalStateException("no start signal within 30 s");
        }
        List<Callable<Void>> buyerTasks = new ArrayList<>();
        for (int i = 0; i < buyers; i++) {
            Lock lock = kind == LockKind.NAIVE
                    ? new NaiveLock(redis, NAIVE_LOCK_KEY, NAIVE_LEASE_MILLIS)
                    : sharedLock;
            buyerTasks.add(() -> sellUntilSoldOut(lock));
        }
        ExecutorService pool = Executors.newFixedThreadPool(buyers);
        try {
            for (Future<Void> buyer : pool.invokeAll(buyerTasks)) {
                buyer.get();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("a buyer failed", e.getCause());
        } finally {
            pool.shutdown();
        }
    }

    /** One buyer: read the stock, and if some is left, work a little and write it back one less. */
    private Void sellUntilSoldOut(Lock lock) {
        while (true) {
            long askedAt = System.nanoTime();
            lock.lock();
            if (lock instanceof NaiveLock) {
                // DistributedLock times its own waits (synchronizers.wait); the naive lock has no meters.
                metrics.baselineWait().record(System.nanoTime() - askedAt, TimeUnit.NANOSECONDS);
            }
            try {
                int stock = Integer.parseInt(redis.get(STOCK_KEY));
                if (stock <= 0) {
                    return null;
                }
                work();
                String before = redis.setGet(STOCK_KEY, Integer.toString(stock - 1));
                if (!Integer.toString(stock).equals(before)) {
                    lostUpdates.incrementAndGet();   // someone sold since our GET; our SET erased that sale
                }
                redis.incr(SOLD_KEY);
                sales.incrementAndGet();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Stands for the real work of a sale; now and then the JVM stalls, as in a GC pause. */
    private static void work() {
        boolean stall = ThreadLocalRandom.current().nextInt(STALL_ONE_IN) == 0;
        LockSupport.parkNanos(stall
                ? TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS)
                : TimeUnit.MICROSECONDS.toNanos(WORK_MICROS));
    }
}
