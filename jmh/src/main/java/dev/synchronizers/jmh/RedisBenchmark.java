package dev.synchronizers.jmh;

import dev.synchronizers.testkit.RedisCluster;
import dev.synchronizers.testkit.RedisSentinels;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
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
        before = nodes().stream().map(RedisStats::of).toList();
    }

    @TearDown(Level.Iteration)
    public void endIteration(BenchmarkParams benchmark, IterationParams params) {
        iteration++;
        long ops = operations.get();
        List<RedisServer> nodes = nodes();
        for (int i = 0; i < nodes.size(); i++) {
            RedisStats after = RedisStats.of(nodes.get(i));
            String where = "iteration=" + iteration + "(" + params.getType().toString().toLowerCase() + ")"
                    + " threads=" + benchmark.getThreads() + " redis=" + server.version()
                    + (nodes.size() == 1 ? "" : " node=" + nodes.get(i).port())
                    + " bench=" + benchmark.getBenchmark().replace(RedisBenchmark.class.getPackageName() + ".", "");
            System.out.println(after.perOperation(before.get(i), implName(), ops, probes.get(), where));
            System.out.println(after.breakdown(before.get(i), implName(), ops));
        }
    }
}
