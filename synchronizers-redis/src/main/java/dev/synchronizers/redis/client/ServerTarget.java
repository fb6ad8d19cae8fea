package dev.synchronizers.redis.client;

import dev.synchronizers.redis.topology.ClusterTopology;
import dev.synchronizers.redis.topology.SentinelTopology;
import dev.synchronizers.redis.topology.StandaloneTopology;
import dev.synchronizers.redis.topology.Topology;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Where a {@code RedisSynchronizers} connects, as its builder was told: a server or Sentinel URI
 * (with a caller's Lettuce client, or not), a cluster's seed URIs, or a caller's Lettuce cluster
 * client. Exactly one target is set, by the last call. {@code RedisSynchronizers.Builder}'s target
 * setters delegate here; their javadoc states the contract.
 *
 * <p>{@link #check} makes the checks {@code build()} makes of the target, {@link #forClient} the
 * copy one client connects to, and {@link #connect} connects it. Not thread-safe, as the builder is not.
 */
public final class ServerTarget {

    private RedisURI uri;
    /** The text uri(String) was given, re-parsed by forClient for each client it makes. */
    private String uriText;
    private RedisClient client;
    private List<RedisURI> clusterSeeds;
    private RedisClusterClient clusterClient;
    /** The TLS options of a Lettuce client created here, or null for Lettuce's defaults. */
    private SslOptions sslOptions;

    /** No target yet. */
    public ServerTarget() {
    }

    /**
     * Targets a standalone server or the master a Sentinel set names.
     *
     * @throws NullPointerException if {@code uri} is null
     * @throws IllegalArgumentException if {@code uri} is not a valid Redis URI
     */
    public void uri(String uri) {
        Objects.requireNonNull(uri, "uri must not be null");
        RedisURI parsed = ClientOptions.parseChecked("uri", uri, ClientOptions.CLIENT_SCHEMES);
        target(parsed, null, null, null);
        this.uriText = uri;
    }

    /**
     * Targets a Redis Cluster found from {@code seedUris}.
     *
     * @throws NullPointerException if {@code seedUris} or one of them is null
     * @throws IllegalArgumentException if there is none, or one is not a valid Redis URI
     */
    public void cluster(String... seedUris) {
        Objects.requireNonNull(seedUris, "seedUris must not be null");
        if (seedUris.length == 0) {
            throw new IllegalArgumentException("seedUris must name at least one node of the cluster");
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String seed : seedUris) {
            seeds.add(ClientOptions.parseChecked("cluster",
                    Objects.requireNonNull(seed, "seedUris must not contain null"), ClientOptions.SERVER_SCHEMES));
        }
        target(null, null, List.copyOf(seeds), null);
    }

    /**
     * Targets a Redis Cluster through a caller's Lettuce cluster client.
     *
     * @throws NullPointerException if {@code client} is null
     */
    public void client(RedisClusterClient client) {
        target(null, null, null, Objects.requireNonNull(client, "client must not be null"));
    }

    /**
     * Targets {@code uri} through a caller's Lettuce client.
     *
     * @throws NullPointerException if either is null
     */
    public void client(RedisClient client, RedisURI uri) {
        Objects.requireNonNull(client, "client must not be null");
        Objects.requireNonNull(uri, "uri must not be null");
        target(uri, client, null, null);
    }

    /**
     * Sets the TLS options of a Lettuce client created here (ignored with a caller's client).
     *
     * @throws NullPointerException if {@code ssl} is null
     */
    public void sslOptions(SslOptions ssl) {
        this.sslOptions = Objects.requireNonNull(ssl, "ssl must not be null");
    }

    private void target(RedisURI uri, RedisClient client, List<RedisURI> clusterSeeds,
            RedisClusterClient clusterClient) {
        this.uri = uri;
        this.client = client;
        this.clusterSeeds = clusterSeeds;
        this.clusterClient = clusterClient;
        this.uriText = null;
    }

    /**
     * Checks the target against the settings, as {@code build()} does before it connects.
     *
     * @param commandTimeout the client's command timeout
     * @param replicaAcks the replica acknowledgement asked for, or null for none
     * @throws IllegalStateException if there is no target, or replica acknowledgement is asked
     *     for on a Redis Cluster or with a timeout not shorter than the command timeout
     */
    public void check(Duration commandTimeout, ReplicaAcks replicaAcks) {
        if (uri == null && clusterSeeds == null && clusterClient == null) {
            throw new IllegalStateException("no Redis to connect to: call uri(...), cluster(...) or client(...)");
        }
        if (replicaAcks != null && (clusterSeeds != null || clusterClient != null)) {
            throw new IllegalStateException("replicaAcks is not supported on a Redis Cluster");
        }
        if (replicaAcks != null && replicaAcks.timeout().compareTo(commandTimeout) >= 0) {
            throw new IllegalStateException("replicaAcks' timeout (" + replicaAcks.timeout().toMillis()
                    + " ms) must be shorter than the commandTimeout (" + commandTimeout.toMillis() + " ms)");
        }
    }

    /**
     * The copy of a checked target that one client connects to: its URIs made afresh with the
     * command timeout, so that clients built one after another share nothing mutable.
     *
     * @param options the client's settings
     */
    public ServerTarget forClient(ClientOptions options) {
        Duration commandTimeout = options.commandTimeout();
        ServerTarget copy = new ServerTarget();
        // A URI given as text is parsed again, into a fresh copy per client with the command timeout.
        copy.uri = uriText != null ? options.parseUri(uriText) : uri;
        copy.client = client;
        copy.clusterSeeds = clusterSeeds == null ? null : clusterSeeds.stream()
                .map(seed -> RedisURI.builder(seed).withTimeout(commandTimeout).build()).toList();
        copy.clusterClient = clusterClient;
        copy.sslOptions = sslOptions;
        return copy;
    }

    /**
     * Connects to the target, with the options of a client created here: see
     * {@code RedisSynchronizers}' class comment.
     */
    Topology connect(ClientOptions options) {
        Duration commandTimeout = options.commandTimeout();
        if (clusterSeeds != null || clusterClient != null) {
            io.lettuce.core.cluster.ClusterClientOptions clusterOptions = ClusterTopology.clientOptions(commandTimeout);
            return ClusterTopology.connect(clusterClient, options.clientResources(), clusterSeeds == null ? List.of() : clusterSeeds,
                    sslOptions == null ? clusterOptions : clusterOptions.mutate().sslOptions(sslOptions).build(),
                    commandTimeout);
        }
        io.lettuce.core.ClientOptions serverOptions = StandaloneTopology.clientOptions(commandTimeout);
        if (sslOptions != null) {
            serverOptions = serverOptions.mutate().sslOptions(sslOptions).build();
        }
        if (!uri.getSentinels().isEmpty()) {
            return SentinelTopology.connect(client, options.clientResources(), uri, serverOptions, commandTimeout);
        }
        return StandaloneTopology.connect(client, options.clientResources(), uri, serverOptions, commandTimeout);
    }
}
