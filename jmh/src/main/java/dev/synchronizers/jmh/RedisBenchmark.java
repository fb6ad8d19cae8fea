package dev.synchronizers.jmh;

import dev.synchronizers.testkit.RedisCluster;
import dev.synchronizers.testkit.RedisSentinels;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;

/**
 * The shared state of the benchmarks that run against a Redis server of their own: starts and
 * stops it, and prints, after every iteration, the Redis work per benchmark operation as one
 * {@code REDIS-STATS} line and its split by command as one {@code REDIS-COMMANDS} line (see
 * {@link RedisStats}). A subclass counts each operation with
 * {@link #operations}{@code .incrementAndGet()}, starts the server in its own
 * {@code @Setup(Level.Trial)} with {@link #startRedis()}, passes each client it opens through
 * {@link #closeAtEnd}, and calls {@link #stopRedis()} in its {@code @TearDown(Level.Trial)}: that
 * closes the clients, newest first, and then the server, whatever closing a client throws.
 *
 * <p>The lock benchmarks also run on a Redis Cluster of 3 masters ({@code -p topology=CLUSTER}):
 * they connect to {@link #target()}, and the {@code REDIS-STATS} lines are printed per master
 * ({@code node=<port>}), the work each master did per operation.
 *
 * <p>A benchmark of several client instances on one name (a fleet) calls {@link
 * #countPerClient(int)} in its trial set-up and counts each operation with {@link
 * #operation(int)}, naming the instance; then every iteration also prints a {@code SHARES} line:
 * how evenly the operations were spread over the instances (see {@link #shares}).
 */
@State(Scope.Benchmark)
public abstract class RedisBenchmark extends BenchmarkDefaults {

    /** Benchmark operations (e.g. lock+unlock pairs) done since the iteration began, by all threads. */
    protected final AtomicLong operations = new AtomicLong();
    /**
     * Commands that the benchmark itself sends during the iteration to probe the server (one
     * socket read each, subtracted from {@code reads/op}); zero for most benchmarks.
     */
    protected final AtomicLong probes = new AtomicLong();
    /**
     * {@code STANDALONE} (one server), {@code CLUSTER} (3 masters, no replicas), {@code SENTINEL}
     * (a master, 2 replicas, 3 sentinels; ours only), or {@code REDLOCK3} / {@code REDLOCK5} (3 or
     * 5 independent servers: the Redlock implementations use them all, the single-server ones the
     * first); all but the first for the lock benchmarks only.
     */
    @Param({"STANDALONE"})
    public String topology;

    /** The independent servers of {@code REDLOCK3} or {@code REDLOCK5}; null on other topologies. */
    private List<RedisServer> redlockNodes;

    /** The standalone server, or the cluster's first master. */
    protected RedisServer server;
    private RedisCluster cluster;
    private RedisSentinels sentinels;
    private final List<AutoCloseable> clients = new ArrayList<>();
    private List<RedisStats> before;
    private int iteration;
    /** Operations per client instance since the iteration began; null unless {@link #countPerClient} was called. */
    private AtomicLongArray clientOperations;

    /** The implementation under test, for the {@code REDIS-STATS} line. */
    protected abstract String implName();

    /** Starts a throwaway {@code redis-server} on loopback (see {@link RedisServers#start()}). */
    protected void startRedis() {
        if ("CLUSTER".equals(topology)) {
            cluster = RedisCluster.start(RedisCluster.Options.defaults().replicasPerMaster(0));
            server = cluster.masters().get(0);
        } else if ("SENTINEL".equals(topology)) {
            sentinels = RedisSentinels.start();
            server = sentinels.master();
        } else if (topology.startsWith("REDLOCK")) {
            int count = Integer.parseInt(topology.substring("REDLOCK".length()));
            redlockNodes = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                redlockNodes.add(RedisServers.start());
            }
            server = redlockNodes.get(0);
        } else {
            server = RedisServers.start();
        }
    }

    /**
     * What a client connects to: the server's URI, or {@code "cluster:"} followed by the masters'
     * URIs joined by commas (see {@link LockImpl}).
     */
    protected String target() {
        if (sentinels != null) {
            return sentinels.sentinelUri();
        }
        if (redlockNodes != null) {
            return "redlock:" + String.join(",", redlockNodes.stream().map(RedisServer::uri).toList());
        }
        return cluster == null
                ? server.uri()
                : "cluster:" + String.join(",", cluster.seedUris());
    }

    /** The servers whose work is counted: the one server, or every master. */
    private List<RedisServer> nodes() {
        if (redlockNodes != null) {
            return redlockNodes;
        }
        return cluster == null ? List.of(server) : cluster.masters();
    }

    /**
     * Makes this trial count operations per client instance, {@code clients} of them, numbered
     * from 0; call it from the trial set-up, before the benchmark threads run.
     */
    protected void countPerClient(int clients) {
        if (clients < 1) {
            throw new IllegalArgumentException("clients must be at least 1: " + clients);
        }
        clientOperations = new AtomicLongArray(clients);
    }

    /** Counts one benchmark operation, done through client instance {@code client} (see {@link #countPerClient}). */
    protected void operation(int client) {
        operations.incrementAndGet();
        clientOperations.incrementAndGet(client);
    }

    /** Registers a client of this trial, for {@link #stopRedis()} to close before the server. */
    protected <C extends AutoCloseable> C closeAtEnd(C client) {
        clients.add(client);
        return client;
    }

    /** Closes the registered clients, newest first, then the server, even if a client fails to close. */
    protected void stopRedis() {
        Exception failure = null;
        for (int i = clients.size() - 1; i >= 0; i--) {
            try {
                clients.get(i).close();
            } catch (Exception e) {
                failure = failure == null ? e : failure;
            }
        }
        clients.clear();
        if (cluster != null) {
            cluster.close();
        } else if (sentinels != null) {
            sentinels.close();
        } else if (redlockNodes != null) {
            redlockNodes.forEach(RedisServer::close);
        } else if (server != null) {
            server.close();
        }
        if (failure != null) {
            throw new IllegalStateException("a client failed to close", failure);
        }
    }

    @Setup(Level.Iteration)
    public void beginIteration() {
        operations.set(0);
        probes.set(0);
        if (clientOperations != null) {
            for (int i = 0; i < clientOperations.length(); i++) {
                clientOperations.set(i, 0);
            }
        }
        before = nodes().stream().map(RedisStats::of).toList();
    }

    @TearDown(Level.Iteration)
    public void endIteration(BenchmarkParams benchmark, IterationParams params) {
        iteration++;
        long ops = operations.get();
        List<RedisServer> nodes = nodes();
        String iterationName = "iteration=" + iteration + "(" + params.getType().toString().toLowerCase(Locale.ROOT) + ")";
        String bench = " bench=" + benchmark.getBenchmark().replace(RedisBenchmark.class.getPackageName() + ".", "");
        String clients = clientOperations == null ? "" : " clients=" + clientOperations.length();
        for (int i = 0; i < nodes.size(); i++) {
            RedisStats after = RedisStats.of(nodes.get(i));
            String where = iterationName + " threads=" + benchmark.getThreads() + clients + " redis=" + server.version()
                    + (nodes.size() == 1 ? "" : " node=" + nodes.get(i).port()) + bench;
            System.out.println(after.perOperation(before.get(i), implName(), ops, probes.get(), where));
            System.out.println(after.breakdown(before.get(i), implName(), ops));
        }
        if (clientOperations != null) {
            long[] perClient = new long[clientOperations.length()];
            for (int i = 0; i < perClient.length; i++) {
                perClient[i] = clientOperations.get(i);
            }
            System.out.println(shares(implName(), perClient, benchmark.getThreads()) + " " + iterationName + bench);
        }
    }

    /**
     * Returns the line {@code SHARES impl=... clients=N threads=T jain=... min=... max=... mean=...
     * minShare=...}: how the iteration's operations were spread over the client instances. Only
     * the instances that have a benchmark thread count (thread {@code n} uses instance {@code n %
     * clients}, so with fewer threads than instances the last ones have none; {@code idle=K} then
     * says how many). {@code jain} is Jain's fairness index {@code (sum x)^2 / (n * sum x^2)} of
     * the instances' operation counts {@code x}: 1 when all did the same, {@code 1/n} when one did
     * everything. {@code min} and {@code max} are the operations of the least and the most
     * served instance, {@code minShare} is {@code min / mean}.
     */
    static String shares(String impl, long[] perClient, int threads) {
        int active = Math.min(perClient.length, threads);
        long sum = 0;
        double sumOfSquares = 0;
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < active; i++) {
            sum += perClient[i];
            sumOfSquares += (double) perClient[i] * perClient[i];
            min = Math.min(min, perClient[i]);
            max = Math.max(max, perClient[i]);
        }
        double mean = active == 0 ? Double.NaN : (double) sum / active;
        double jain = sumOfSquares == 0 ? Double.NaN : (double) sum * sum / (active * sumOfSquares);
        return String.format(Locale.ROOT, "SHARES impl=%s clients=%d threads=%d jain=%.4f min=%d max=%d mean=%.1f minShare=%.3f%s",
                impl, perClient.length, threads, jain, active == 0 ? 0 : min, max, mean, min / mean,
                active < perClient.length ? " idle=" + (perClient.length - active) : "");
    }
}
