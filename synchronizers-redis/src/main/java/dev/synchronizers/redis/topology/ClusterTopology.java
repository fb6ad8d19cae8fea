package dev.synchronizers.redis.topology;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.wakeup.ClusterPubSubTransport;
import dev.synchronizers.redis.wakeup.PubSubTransport;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * A Redis Cluster. Commands go to the master of their first key's slot (every key of one
 * synchronizer shares a slot), redirections ({@code MOVED}, {@code ASK}) are followed, and the
 * client's view of the slots is refreshed periodically and on redirections and reconnect storms.
 * Renewals are batched per slot (a script's keys must share one), and all batches of a tick are
 * sent before any reply is awaited: one round trip per master. Wake-ups travel on the master that
 * owns their channel's slot ({@link ClusterPubSubTransport}).
 */
public final class ClusterTopology implements Topology {

    /** How often a client created here refreshes its view of the slots, besides on redirections. */
    private static final Duration TOPOLOGY_REFRESH = Duration.ofSeconds(5);

    private final RedisClusterClient client;
    private final boolean ownsClient;
    private final String seed;
    private final StatefulRedisClusterConnection<String, String> connection;
    private final StatefulRedisClusterPubSubConnection<String, String> pubSubConnection;
    private final boolean sharded;
    private final PubSubTransport transport;
    private final Duration timeout;
    private final List<RedisConnectionStateListener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    private ClusterTopology(RedisClusterClient client, boolean ownsClient, String seed,
            StatefulRedisClusterConnection<String, String> connection,
            StatefulRedisClusterPubSubConnection<String, String> pubSubConnection, boolean sharded, Duration timeout) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.seed = seed;
        this.connection = connection;
        this.pubSubConnection = pubSubConnection;
        this.sharded = sharded;
        this.timeout = timeout;
        this.transport = new ClusterPubSubTransport(pubSubConnection, connection::getPartitions,
                client::refreshPartitionsAsync, sharded);
    }

    /**
     * Returns the options of a Lettuce cluster client created here: its view of the slots is
     * refreshed every 5 s and on redirections ({@code MOVED}, {@code ASK}), reconnect storms,
     * uncovered slots and unknown nodes; it reconnects by itself and never replays a command after
     * a reconnect (a replayed acquire could take a lock nobody knows it holds); a command to a node
     * not connected yet waits for the connection within {@code commandTimeout} instead of being
     * refused; every command and every connection attempt is bounded by {@code commandTimeout};
     * and its sockets use the keep-alive of {@link StandaloneTopology#KEEP_ALIVE}.
     *
     * @param commandTimeout the command timeout, positive
     * @return the options, for {@link #connect}
     */
    @SuppressWarnings("deprecation")   // enableAllAdaptiveRefreshTriggers: see below
    public static ClusterClientOptions clientOptions(Duration commandTimeout) {
        ClusterClientOptions.Builder options = ClusterClientOptions.builder()
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        // Every adaptive trigger (MOVED, ASK, reconnect storms, uncovered slots,
                        // unknown nodes): on by default since Lettuce 7.0 (which deprecates this
                        // call for that reason), off by default on 6.x.
                        .enableAllAdaptiveRefreshTriggers()
                        .enablePeriodicRefresh(TOPOLOGY_REFRESH)
                        .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1))
                        .refreshTriggersReconnectAttempts(2)
                        .build())
                .autoReconnect(true)
                // A node not (yet) in our view of the cluster, where a redirection may point, may
                // be connected to (and refreshes the view: the UNKNOWN_NODE trigger): the default
                // since Lettuce 7.0; 6.x refuses such a connection by default.
                .validateClusterNodeMembership(false)
                // Node connections open lazily, on a node's first command (and a new master's
                // after a failover): that command waits for the connection, within the command
                // timeout, instead of being refused. A command that times out waiting is never
                // sent later, and one that was sent is settled like any unknown outcome.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                .socketOptions(SocketOptions.builder().connectTimeout(commandTimeout)
                        .keepAlive(StandaloneTopology.KEEP_ALIVE).build());
        options.replayFilter(command -> true);
        return options.build();
    }

    /**
     * Connects to the cluster that {@code seeds} belong to.
     *
     * @param given a Lettuce cluster client configured by the caller, or null to create one for
     *     {@code seeds} configured by {@code options}
     * @param resources the Lettuce resources (event loops, timers) of a client this topology creates,
     *     shared with their owner and not shut down here; or null for resources of the client's own
     * @param seeds some of the cluster's nodes (any one that answers is enough); ignored if
     *     {@code given} is set
     * @param options the options of a client this topology creates
     * @param timeout the command timeout, which bounds connecting too
     * @return the connected topology
     * @throws SynchronizerUnavailableException if no seed can be reached within the timeout
     */
    public static ClusterTopology connect(RedisClusterClient given, ClientResources resources, List<RedisURI> seeds,
            ClusterClientOptions options, Duration timeout) {
        RedisClusterClient client = given != null ? given
                : resources != null ? RedisClusterClient.create(resources, seeds) : RedisClusterClient.create(seeds);
        if (given == null) {
            client.setOptions(options);
        }
        String seed = seeds.isEmpty() ? "a given cluster client" : describe(seeds.get(0));
        StatefulRedisClusterConnection<String, String> commands = null;
        StatefulRedisClusterPubSubConnection<String, String> pubSub = null;
        try {
            commands = client.connect(StringCodec.UTF8);
            commands.setTimeout(timeout);
            pubSub = client.connectPubSub(StringCodec.UTF8);
            boolean sharded = ServerVersion.shardedPubSub(commands.async(), timeout);
            return new ClusterTopology(client, given == null, seed, commands, pubSub, sharded, timeout);
        } catch (RuntimeException e) {
            if (pubSub != null) {
                pubSub.close();
            }
            if (commands != null) {
                commands.close();
            }
            if (given == null) {
                client.shutdown();
            }
            throw new SynchronizerUnavailableException("cannot connect to the Redis Cluster via " + seed
                    + ConnectFailure.describe(e, timeout), e);
        }
    }

    @Override
    public RedisClusterAsyncCommands<String, String> commands() {
        return connection.async();
    }

    @Override
    public PubSubTransport pubSub() {
        return transport;
    }

    @Override
    public boolean shardedPubSub() {
        return sharded;
    }

    @Override
    public RedisClusterAsyncCommands<String, String> openSideConnection() {
        throw new UnsupportedOperationException("replica acknowledgement is not supported on a Redis Cluster");
    }

    @Override
    public int batchGroup(String key) {
        return SlotHash.getSlot(key);
    }

    @Override
    public void onReconnect(Runnable task) {
        RedisConnectionStateListener listener = new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                task.run();
            }
        };
        listeners.add(listener);
        client.addListener(listener);
    }

    @Override
    public String describe() {
        return "the Redis Cluster via " + seed;
    }

    @Override
    public void close() {
        listeners.forEach(client::removeListener);
        pubSubConnection.close();
        connection.close();
        if (ownsClient) {
            client.shutdown(Duration.ZERO, timeout);
        }
    }

    private static String describe(RedisURI uri) {
        return "redis://" + uri.getHost() + ":" + uri.getPort();
    }
}
