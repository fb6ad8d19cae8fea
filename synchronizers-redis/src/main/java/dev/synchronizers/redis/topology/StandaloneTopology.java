package dev.synchronizers.redis.topology;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.wakeup.PubSubTransport;
import dev.synchronizers.redis.wakeup.SingleConnectionTransport;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One Redis server. One command connection shared by every thread, one Pub/Sub connection for
 * wake-ups, every key in one batch group. A client of a Sentinel set uses {@link SentinelTopology},
 * which follows the sentinels' announcements; given a {@code redis-sentinel://} URI (a Redlock node)
 * this one lets Lettuce ask the sentinels for the master when it connects and reconnects only.
 */
public final class StandaloneTopology implements Topology {

    /**
     * TCP keep-alive on every connection of a client created here (here and in
     * {@link ClusterTopology}): keeps an idle connection's NAT and firewall entries alive, and lets
     * the kernel find a dead peer after about a minute of silence. The Pub/Sub connection's health
     * check (a PING every watchdog tick) finds one sooner.
     */
    static final SocketOptions.KeepAliveOptions KEEP_ALIVE = SocketOptions.KeepAliveOptions.builder()
            .enable().idle(Duration.ofSeconds(30)).interval(Duration.ofSeconds(10)).count(3).build();

    private final RedisClient client;
    private final boolean ownsClient;
    private final RedisURI uri;
    private final StatefulRedisConnection<String, String> connection;
    private final StatefulRedisPubSubConnection<String, String> pubSubConnection;
    private final boolean sharded;
    private final PubSubTransport transport;
    /** Connections opened by {@link #openSideConnection()}, closed with this topology. */
    private final List<StatefulRedisConnection<String, String>> sideConnections = new CopyOnWriteArrayList<>();

    private StandaloneTopology(RedisClient client, boolean ownsClient, RedisURI uri,
            StatefulRedisConnection<String, String> connection,
            StatefulRedisPubSubConnection<String, String> pubSubConnection, boolean sharded) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.uri = uri;
        this.connection = connection;
        this.pubSubConnection = pubSubConnection;
        this.sharded = sharded;
        this.transport = new SingleConnectionTransport(pubSubConnection, sharded);
    }

    /**
     * Returns the options of a Lettuce client created for one server (a standalone server, the
     * master a Sentinel set names, or a Redlock node): it reconnects by itself, refuses commands
     * while disconnected (and a command whose write failed as the connection dropped, at once, on
     * every Lettuce line), never replays a command after a reconnect (a replayed acquire could take
     * a lock nobody knows it holds), bounds every command and every connection attempt by
     * {@code commandTimeout}, and keeps its sockets alive ({@link #KEEP_ALIVE}).
     *
     * @param commandTimeout the command timeout, positive
     * @return the options, for {@link #connect} or {@link SentinelTopology#connect}
     */
    public static ClientOptions clientOptions(Duration commandTimeout) {
        return ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .replayFilter(command -> !failedWrite())
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                .socketOptions(SocketOptions.builder().connectTimeout(commandTimeout).keepAlive(KEEP_ALIVE).build())
                .build();
    }

    /**
     * Whether Lettuce asks the replay filter about a command whose write to the socket failed
     * (the connection dropped as it was written): a command that never reached Redis. The filter
     * lets such a command be written again, and while disconnected that write is refused at once,
     * as Lettuce 7.7 and later refuse a failed write by themselves under {@code REJECT_COMMANDS}.
     * Lettuce 6.x up to 7.5 ask the filter instead, and a command it keeps from being written
     * again is left pending until the command timeout, an unknown outcome. Every other command the
     * filter is asked about was sent, and is never written again.
     */
    static boolean failedWrite() {
        // Lettuce's handler of a failed write, DefaultEndpoint.RetryListener, calls the filter
        // directly; matched by its simple name so that a relocated (shaded) Lettuce matches too.
        return StackWalker.getInstance().walk(frames -> frames.limit(12)
                .anyMatch(frame -> frame.getClassName().endsWith(".DefaultEndpoint$RetryListener")));
    }

    /**
     * Connects to {@code uri}: a {@code redis://} or {@code rediss://} server, or a
     * {@code redis-sentinel://} set.
     *
     * @param given a Lettuce client configured by the caller, or null to create one configured by
     *     {@code options}
     * @param resources the Lettuce resources (event loops, timers) of a client this topology creates,
     *     shared with their owner and not shut down here; or null for resources of the client's own
     * @param uri the server
     * @param options the options of a client this topology creates
     * @param timeout the command timeout, which bounds connecting too
     * @return the connected topology
     * @throws SynchronizerUnavailableException if the server cannot be reached within the timeout
     */
    public static StandaloneTopology connect(RedisClient given, ClientResources resources, RedisURI uri, ClientOptions options,
            Duration timeout) {
        RedisClient client = given != null ? given
                : resources != null ? RedisClient.create(resources) : RedisClient.create();
        if (given == null) {
            client.setOptions(options);
        }
        StatefulRedisConnection<String, String> commands = null;
        StatefulRedisPubSubConnection<String, String> pubSub = null;
        try {
            commands = InFlightCommands.failOnDisconnect(client.connect(StringCodec.UTF8, uri));
            pubSub = client.connectPubSub(StringCodec.UTF8, uri);
            boolean sharded = ServerVersion.shardedPubSub(commands.async(), timeout);
            return new StandaloneTopology(client, given == null, uri, commands, pubSub, sharded);
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
            throw new SynchronizerUnavailableException("cannot connect to Redis at " + describe(uri)
                    + ConnectFailure.describe(e, timeout), e);
        }
    }

    @Override
    public RedisClusterAsyncCommands<String, String> commands() {
        return connection.async();
    }

    /**
     * {@inheritDoc} Under Sentinel, it asks the sentinels for the master as the shared connection
     * does, when it connects and whenever it reconnects.
     */
    @Override
    public RedisClusterAsyncCommands<String, String> openSideConnection() {
        StatefulRedisConnection<String, String> side = InFlightCommands.failOnDisconnect(client.connect(StringCodec.UTF8, uri));
        sideConnections.add(side);
        return side.async();
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
    public int batchGroup(String key) {
        return 0;
    }

    @Override
    public void onReconnect(Runnable task) {
        connection.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                task.run();
            }
        });
    }

    @Override
    public String describe() {
        return describe(uri);
    }

    @Override
    public void close() {
        pubSubConnection.close();
        sideConnections.forEach(StatefulRedisConnection::close);
        connection.close();
        if (ownsClient) {
            client.shutdown(Duration.ZERO, uri.getTimeout());
        }
    }

    /** The URI without credentials. */
    private static String describe(RedisURI uri) {
        if (!uri.getSentinels().isEmpty()) {
            StringBuilder sentinels = new StringBuilder();
            for (RedisURI sentinel : uri.getSentinels()) {
                sentinels.append(sentinels.length() == 0 ? "" : ",").append(sentinel.getHost()).append(':')
                        .append(sentinel.getPort());
            }
            return "redis-sentinel://" + sentinels + "#" + uri.getSentinelMasterId();
        }
        return (uri.isSsl() ? "rediss://" : "redis://") + uri.getHost() + ":" + uri.getPort();
    }
}
