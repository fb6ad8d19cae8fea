package dev.synchronizers.redis.topology;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.wakeup.PubSubTransport;
import dev.synchronizers.redis.wakeup.SingleConnectionTransport;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master a Sentinel set names, followed from the sentinels' own announcements. The client
 * subscribes to {@code +switch-master} on every sentinel of the URI (any of them may be down, and
 * each is tried again until it answers), asks each for the master again whenever that
 * subscription is made again, and connects to the master they name directly, by its address.
 *
 * <p>When a sentinel announces that the master moved, the client stops trusting its connection to
 * the old master at once ({@link #repliesTrusted(long)} turns false for every command sent on it,
 * unless the announcement turns out to be a lagging sentinel's, below), connects to the new
 * master, moves its command traffic and its wake-up subscriptions there, and then runs the tasks
 * given to {@link #onSwitch} (renew every hold now, wake every waiter). It does not wait for the
 * old master to be demoted: after {@code SENTINEL FAILOVER} the old master keeps
 * {@code role:master} and accepts writes for about ten seconds, and nothing disconnects its
 * clients until then. Commands queued on the old connection are never sent to the new master; the
 * old connections are closed a command timeout after the switch, once the replies still on their
 * way have arrived (they are not trusted).
 *
 * <p>An announcement that names the master this client is connected to as the old one is followed
 * at once (every sentinel announces the same switch: the first one moves the client, the others
 * find it moved): the client connects to the new master while it asks the announcing sentinel for
 * that master's configuration epoch, and stays where it is if the epoch is older than the one it
 * knows: a sentinel that lags behind announces late the switches it missed, which may lead from
 * the current master back to an older one. Any other announcement is checked with the announcing
 * sentinel first, and the client moves only to a configuration newer than the one it knows. So a
 * sentinel that lags behind cannot move it back. If the announcing sentinel does not answer within
 * the command timeout, the client follows the announcement unconfirmed, and asks that sentinel
 * until it answers: an answer that shows the announcement was stale moves the client back to the
 * master of the configuration it knew.
 *
 * <p>A {@code READONLY} reply from the current master (it is a replica now) has the client ask
 * every sentinel for the master, at most once a second: it moves to a newer configuration they
 * name, or back to the one it knew if it came to this server unconfirmed. The caller still gets
 * the {@code READONLY} as {@link SynchronizerUnavailableException}.
 *
 * <p>Listening to the sentinels and deciding when to move is {@link SentinelWatch}'s; one master's
 * connections are a {@link MasterConnections}; the commands handed out follow the current master
 * through a {@link MasterProxy}.
 *
 * <p>Thread-safe. The switch runs on a thread of its own, never on a Lettuce I/O thread.
 */
public final class SentinelTopology implements Topology {

    private static final Logger log = LoggerFactory.getLogger(SentinelTopology.class);

    private final RedisClient client;
    private final boolean ownsClient;
    private final RedisURI uri;
    private final Duration timeout;
    private final boolean sharded;
    private final SingleConnectionTransport transport;
    private final RedisClusterAsyncCommands<String, String> commands;
    private final List<Runnable> reconnectTasks = new CopyOnWriteArrayList<>();
    private final List<Runnable> switchTasks = new CopyOnWriteArrayList<>();
    /** The sentinels, listened to; decides the moves and runs them on its thread. */
    private final SentinelWatch watch;
    /** Old masters' connections, closed a command timeout after the switch (or on close). */
    private final List<MasterConnections> retired = new CopyOnWriteArrayList<>();
    /** The master the client talks to now. */
    private volatile MasterConnections current;
    private volatile boolean closed;
    /** Whether {@link #openSideConnection()} was called: every master connected to then gets one. */
    private volatile boolean sidesWanted;

    private SentinelTopology(RedisClient client, boolean ownsClient, RedisURI uri, Duration timeout,
            MasterConnections first, SentinelQuery.Named named, boolean sharded) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.uri = uri;
        this.timeout = timeout;
        this.current = first;
        this.sharded = sharded;
        this.transport = new SingleConnectionTransport(first.pubSub, sharded);
        // Every command goes over the current master's one connection: see MasterProxy for the order.
        this.commands = MasterProxy.of(() -> current, master -> master.connection,
                "commands of the master of " + describe(uri), this::failed);
        this.watch = new SentinelWatch(client, uri, timeout, named, new MasterMoves.Follower() {
            @Override
            public MasterConnections current() {
                return current;
            }

            @Override
            public MasterConnections connect(String host, int port) {
                return connectTo(host, port);
            }

            @Override
            public void switchTo(MasterConnections next) {
                SentinelTopology.this.switchTo(next);
            }
        });
        listenToReconnects(first);
    }

    /**
     * Asks the sentinels of {@code uri} for the master, connects to it, and starts listening to
     * every sentinel for switches.
     *
     * @param given a Lettuce client configured by the caller, or null to create one configured by
     *     {@code options}
     * @param resources the Lettuce resources (event loops, timers) of a client this topology creates,
     *     shared with their owner and not shut down here; or null for resources of the client's own
     * @param uri a {@code redis-sentinel://} URI
     * @param options the options of a client this topology creates
     * @param timeout the command timeout, which bounds connecting too: each sentinel asked in turn,
     *     until one names the master, and then the master
     * @return the connected topology
     * @throws SynchronizerUnavailableException if no sentinel names the master, or the master it
     *     names cannot be reached, each within the timeout
     */
    public static SentinelTopology connect(RedisClient given, ClientResources resources, RedisURI uri, ClientOptions options,
            Duration timeout) {
        RedisClient client = given != null ? given
                : resources != null ? RedisClient.create(resources) : RedisClient.create();
        if (given == null) {
            client.setOptions(options);
        }
        MasterConnections first = null;
        try {
            SentinelQuery.Named named = null;
            RuntimeException failure = null;
            for (RedisURI sentinel : uri.getSentinels()) {
                try (StatefulRedisSentinelConnection<String, String> connection = client.connectSentinel(StringCodec.UTF8,
                        SentinelQuery.sentinelUri(sentinel, timeout))) {
                    named = Replies.await(SentinelQuery.askFor(connection, uri.getSentinelMasterId()), timeout,
                            "ask a sentinel for the master");
                    break;
                } catch (RuntimeException e) {
                    failure = e;
                }
            }
            if (named == null) {
                throw failure != null ? failure : new IllegalArgumentException("no sentinel in " + describe(uri));
            }
            first = MasterConnections.open(client, uri, named.host(), named.port());
            boolean sharded = ServerVersion.shardedPubSub(first.connection.async(), timeout);
            SentinelTopology topology = new SentinelTopology(client, given == null, uri, timeout, first, named, sharded);
            topology.watch.start();
            return topology;
        } catch (RuntimeException e) {
            if (first != null) {
                first.pubSub.close();
                first.connection.close();
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
        return commands;
    }

    /**
     * {@inheritDoc} The connection returned follows the master as {@link #commands()} does: each
     * master gets a side connection of its own (connected when the client moves there, or at its
     * first command if that failed), and commands go to the current master's.
     */
    @Override
    public RedisClusterAsyncCommands<String, String> openSideConnection() {
        sidesWanted = true;
        current.side(client);
        return MasterProxy.of(() -> current, master -> master.side(client),
                "side connection of the master of " + describe(uri), this::failed);
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
        reconnectTasks.add(task);
    }

    @Override
    public boolean switchesMasters() {
        return true;
    }

    @Override
    public void onSwitch(Runnable task) {
        switchTasks.add(task);
    }

    /**
     * False for a command sent before the connection it went over became the current one, and for
     * every command of a connection a sentinel has since announced to be the old master's, while
     * that announcement is checked and for good once the client leaves: its reply may come from a
     * server that is no master any more.
     */
    @Override
    public boolean repliesTrusted(long sentNanos) {
        MasterConnections now = current;
        return now.trusted() && sentNanos - now.sinceNanos >= 0;
    }

    @Override
    public String describe() {
        return describe(uri);
    }

    @Override
    public void close() {
        closed = true;
        watch.close();   // after the switch in progress, so that the connections it opened are closed below
        transport.close();
        MasterConnections last = current;
        last.close();
        for (MasterConnections old : retired) {
            old.close();
        }
        if (ownsClient) {
            client.shutdown(Duration.ZERO, uri.getTimeout());
        }
    }

    /* --------------- moving to another master --------------- */

    /**
     * Connects to a new master ({@link MasterMoves.Follower#connect}); null if it cannot be
     * reached yet, or if the client was closed meanwhile. On the watch's thread.
     */
    private MasterConnections connectTo(String host, int port) {
        try {
            MasterConnections next = MasterConnections.open(client, uri, host, port);
            if (closed) {
                next.close();
                return null;
            }
            if (sidesWanted) {
                try {
                    next.side(client);
                } catch (RuntimeException e) {
                    // Its first command connects it (MasterConnections.side); until then that command fails.
                    log.warn("cannot open the side connection to the new master {}:{} yet: {}", host, port,
                            e.getMessage());
                }
            }
            return next;
        } catch (RuntimeException e) {
            log.warn("cannot connect to the new master {}:{} of {} yet; asking the sentinels again: {}", host, port,
                    uri.getSentinelMasterId(), e.getMessage());
            return null;
        }
    }

    /**
     * Makes {@code next} the current master: commands go there from now on, wake-up subscriptions
     * move there, the switch tasks run, and the old connections are closed once the replies still
     * on their way have had a command timeout to arrive. On the watch's thread.
     */
    private void switchTo(MasterConnections next) {
        if (closed) {
            next.close();
            return;
        }
        MasterConnections old = current;
        listenToReconnects(next);
        current = next;
        transport.moveTo(next.pubSub);
        log.info("moved to the master {} of {}, {} ms after learning of the switch", next, uri.getSentinelMasterId(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - old.distrustedSinceNanos()));
        for (Runnable task : switchTasks) {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.error("a task after the switch to {} failed", next, e);
            }
        }
        retired.add(old);
        // Once closed, nothing is scheduled: close() closes the retired connections.
        watch.schedule(() -> {
            retired.remove(old);
            old.closeAsync();
        }, timeout.toMillis());
    }

    /**
     * Runs the reconnect tasks when the current master's command connection is made again, and
     * asks the sentinels whether it is still the master (a restarted server may not be).
     */
    private void listenToReconnects(MasterConnections master) {
        master.connection.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                if (current != master || closed) {
                    return;
                }
                reconnectTasks.forEach(Runnable::run);
                watch.resolveAll();
            }
        });
    }

    /**
     * A command sent to {@code master} failed: a {@code READONLY} reply says that server is a
     * replica now, and has the watch ask the sentinels for the master again
     * ({@link SentinelWatch#readOnly}). On the Lettuce I/O thread that completed the reply.
     */
    private void failed(MasterConnections master, Throwable failure) {
        if (Replies.readOnly(failure)) {
            watch.readOnly(master);
        }
    }

    /** The URI without credentials. */
    private static String describe(RedisURI uri) {
        StringBuilder sentinels = new StringBuilder();
        for (RedisURI sentinel : uri.getSentinels()) {
            sentinels.append(sentinels.length() == 0 ? "" : ",").append(sentinel.getHost()).append(':')
                    .append(sentinel.getPort());
        }
        return "redis-sentinel://" + sentinels + "#" + uri.getSentinelMasterId();
    }
}
