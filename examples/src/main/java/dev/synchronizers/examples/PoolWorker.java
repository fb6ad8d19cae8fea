package dev.synchronizers.examples;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.redis.RedisSynchronizers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
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
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One worker JVM of the pool part of {@link StockDemo}: its caller threads call a slow downstream
 * service that must never see more than a fleet-wide number of concurrent calls, each call under a
 * permit.
 *
 * <p>The downstream service is simulated in Redis: a call counts itself in, raises the peak if it
 * is a new high, takes {@value #CALL_MILLIS} ms and counts itself out.
 *
 * <p>Arguments: {@code <redis-uri> <caller-threads> <calls-per-thread> <limit> <LOCAL|DISTRIBUTED>...}:
 * one round per limit kind, in order, in this one JVM. The worker prints {@code READY} once
 * connected; then, per round, it waits for the demo's start signal, makes its calls, and prints
 * one line {@code RESULT calls=<n> wait_count=<n> wait_p50=<ms> wait_p99=<ms> lost_holds=<n>}: its
 * calls, how long they waited for a permit and how many permits it lost, read back from its {@link
 * WorkerMetrics} registry.
 */
public final class PoolWorker {

    static final String IN_FLIGHT_KEY = "pool-demo:in-flight";
    static final String PEAK_KEY = "pool-demo:peak";
    static final String CALLS_KEY = "pool-demo:calls";
    static final String START_KEY = "pool-demo:start";
    static final String SEMAPHORE_NAME = "pool-demo";

    static final long CALL_MILLIS = 2;

    /** Counts a call in (KEYS[1]) and in total (KEYS[3]), and raises the peak (KEYS[2]) if it is a new high. */
    private static final String ENTER = """
            local now = redis.call('INCR', KEYS[1])
            redis.call('INCR', KEYS[3])
            if now > tonumber(redis.call('GET', KEYS[2]) or '0') then
                redis.call('SET', KEYS[2], now)
            end
            return now
            """;

    /** The limits under test; {@code description} takes the limit N as its one {@code %d}. */
    enum LimitKind {
        LOCAL("java.util.concurrent.Semaphore(%d) in each JVM: the per-instance pool sized to the fleet's limit"),
        DISTRIBUTED("DistributedSemaphore(%d) shared by the fleet: acquire() / release()");

        final String description;

        LimitKind(String description) {
            this.description = description;
        }
    }

    private final RedisCommands<String, String> redis;
    private final AtomicInteger calls = new AtomicInteger();   // of the current round
    /** Where waits are timed: by the library for its semaphore, by the caller for the per-JVM one. */
    private final WorkerMetrics metrics = new WorkerMetrics();

    private PoolWorker(RedisCommands<String, String> redis) {
        this.redis = redis;
    }

    /**
     * Runs one worker; see the class comment for the arguments and the output.
     *
     * @param args the Redis URI, the number of caller threads, the calls each makes, the limit N,
     *     and the limit kind of each round
     * @throws Exception if Redis fails, the start signal does not come, or a caller fails
     */
    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        String uri = args[0];
        int callers = Integer.parseInt(args[1]);
        int callsPerCaller = Integer.parseInt(args[2]);
        int limit = Integer.parseInt(args[3]);

        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            PoolWorker worker = new PoolWorker(connection.sync());
            worker.run(uri, callers, callsPerCaller, limit, args);
        } finally {
            client.shutdown();
        }
    }

    /** Connects with its meter registry, sets the total if nobody has, says it is ready, and runs each round. */
    private void run(String uri, int callers, int callsPerCaller, int limit, String[] args) throws Exception {
        try (RedisSynchronizers synchronizers = RedisSynchronizers.builder().uri(uri)
                .meterRegistry(metrics.registry).build()) {
            DistributedSemaphore shared = synchronizers.semaphore(SEMAPHORE_NAME);
            shared.trySetPermits(limit);   // the first worker sets the total; the others find it set
            System.out.println("READY");
            for (int i = 4; i < args.length; i++) {
                boolean local = LimitKind.valueOf(args[i]) == LimitKind.LOCAL;
                Timer waits = local ? metrics.baselineWait() : metrics.acquiredWaits("semaphore");
                Permits permits = local ? Permits.of(new Semaphore(limit), waits) : Permits.of(shared);
                runRound(permits, callers, callsPerCaller, waits);
            }
        }
    }

    /** Waits for the start signal, makes the calls from {@code callers} threads, and prints the result. */
    private void runRound(Permits permits, int callers, int callsPerCaller, Timer waits) throws Exception {
        calls.set(0);
        if (redis.blpop(30, START_KEY) == null) {
            throw new IllegalStateException("no start signal within 30 s");
        }
        List<Callable<Void>> callerTasks = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            callerTasks.add(() -> call(permits, callsPerCaller));
        }
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            for (Future<Void> caller : pool.invokeAll(callerTasks)) {
                caller.get();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("a caller failed", e.getCause());
        } finally {
            pool.shutdown();
        }
        System.out.println("RESULT calls=" + calls + " " + WorkerMetrics.waits(waits)
                + " lost_holds=" + metrics.lostHolds());
    }

    /** One caller: {@code count} calls to the downstream service, each under a permit. */
    private Void call(Permits permits, int count) throws InterruptedException {
        for (int i = 0; i < count; i++) {
            permits.acquire();
            calls.incrementAndGet();
            try {
                callDownstream();
            } finally {
                permits.release();
            }
        }
        return null;
    }

    /** The slow downstream service, simulated: count the call in, take a while, count it out. */
    private void callDownstream() {
        redis.eval(ENTER, ScriptOutputType.INTEGER, IN_FLIGHT_KEY, PEAK_KEY, CALLS_KEY);
        try {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(CALL_MILLIS));
        } finally {
            redis.decr(IN_FLIGHT_KEY);
        }
    }

    /** What a caller needs of either semaphore: both have these methods, but no common type. */
    private interface Permits {

        void acquire() throws InterruptedException;

        void release();

        /** A per-JVM semaphore, whose waits are timed in {@code waits}: it has no meters of its own. */
        static Permits of(Semaphore local, Timer waits) {
            return new Permits() {
                @Override
                public void acquire() throws InterruptedException {
                    long askedAt = System.nanoTime();
                    local.acquire();
                    waits.record(System.nanoTime() - askedAt, TimeUnit.NANOSECONDS);
                }

                @Override
                public void release() {
                    local.release();
                }
            };
        }

        static Permits of(DistributedSemaphore shared) {
            return new Permits() {
                @Override
                public void acquire() throws InterruptedException {
                    shared.acquire();
                }

                @Override
                public void release() {
                    shared.release();
                }
            };
        }
    }
}
