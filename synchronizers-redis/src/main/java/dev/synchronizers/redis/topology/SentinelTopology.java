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
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master a Sentinel set names, followed from the sentinels' own announcements. The client
 * subscribes to {@code +switch-master} on every sentinel of the URI (any of them may be down, and
 * each is tried again until it answers), asks each for the master again whenever that
 * subscription is made again, and connects to the master they name directly, by its address.
 *
 * <p>When a sentinel announces that the master moved, the client stops trusting its connection to
 * the old master at once ({@link #repliesTrusted(long)} turns false for every command sent on it),
 * connects to the new master, moves its command traffic and its wake-up subscriptions there, and
 * then runs the tasks given to {@link #onSwitch} (renew every hold now, wake every waiter). It does
 * not wait for the old master to be demoted: after {@code SENTINEL FAILOVER} the old master keeps
 * {@code role:master} and accepts writes for about ten seconds, and nothing disconnects its
 * clients until then. Commands queued on the old connection are never sent to the new master; the
 * old connections are closed a command timeout after the switch, once the replies still on their
 * way have arrived (they are not trusted).
 *
 * <p>An announcement is accepted at once when it names the master this client is connected to as
 * the old one (every sentinel announces the same switch: the first one moves the client, the
 * others find it moved); otherwise the announcing sentinel is asked for the master and its
 * configuration epoch, and the client moves only to a configuration newer than the one it knows,
 * so that a sentinel that lags behind cannot move it back.
 *
 * <p>Thread-safe. The switch runs on a thread of its own, never on a Lettuce I/O thread.
 */
public final class SentinelTopology implements Topology {

    private static final Logger log = LoggerFactory.getLogger(SentinelTopology.class);

    /** How long to wait before trying again a sentinel that could not be reached, or a failed switch. */
    private static final long RETRY_MILLIS = 500;

    private final RedisClient client;
    private final boolean ownsClient;
    private final RedisURI uri;
    private final Duration timeout;
    private final boolean sharded;
    private final SingleConnectionTransport transport;
    private final RedisClusterAsyncCommands<String, String> commands;
    private final List<Runnable> reconnectTasks = new CopyOnWriteArrayList<>();
    private final List<Runnable> switchTasks = new CopyOnWriteArrayList<>();
    /** Runs switches and resolutions, one at a time, off the I/O threads; retries sentinels. */
    private final ScheduledThreadPoolExecutor worker;
    private volatile Thread workerThread;
    private final List<Ear> ears = new ArrayList<>();
    /** Old masters' connections, closed a command timeout after the switch (or on close). */
    private final List<Master> retired = new CopyOnWriteArrayList<>();
    /** The master the client talks to now. */
    private volatile Master current;
    /** The highest configuration epoch a sentinel named the current master with; -1 if unknown. */
    private volatile long knownEpoch;
    private volatile boolean closed;
    /** Whether {@link #openSideConnection()} was called: every master connected to then gets one. */
    private volatile boolean sidesWanted;

    /** The master's connections, the address they go to, and since when they are the current ones. */
    private static final class Master {
        final String host;
        final int port;
        /** The master's address as a URI, with the user's credentials and settings. */
        final RedisURI server;
        final StatefulRedisConnection<String, String> connection;
        final StatefulRedisPubSubConnection<String, String> pubSub;
        final long sinceNanos;
        /** Set when a sentinel announces another master: no reply from here is trusted any more. */
        volatile boolean stale;
        /** When it was found stale, by {@link System#nanoTime()}; for the log. */
        volatile long staleSinceNanos;
        /** The side connection ({@link #openSideConnection()}), once one is wanted; else null. */
        private volatile StatefulRedisConnection<String, String> side;
        private final ReentrantLock sideLock = new ReentrantLock();

        Master(String host, int port, RedisURI server, StatefulRedisConnection<String, String> connection,
                StatefulRedisPubSubConnection<String, String> pubSub, long sinceNanos) {
            this.host = host;
            this.port = port;
            this.server = server;
            this.connection = connection;
            this.pubSub = pubSub;
            this.sinceNanos = sinceNanos;
        }

        /** Returns this master's side connection, connecting it first if it has none yet. */
        StatefulRedisConnection<String, String> side(RedisClient client) {
            StatefulRedisConnection<String, String> open = side;
            if (open != null) {
                return open;
            }
            sideLock.lock();
            try {
                if (side == null) {
                    side = client.connect(StringCodec.UTF8, server);
                }
                return side;
            } finally {
                sideLock.unlock();
            }
        }

        /** Closes every connection of this master, at once. */
        void close() {
            pubSub.close();
            connection.close();
            StatefulRedisConnection<String, String> open = side;
            if (open != null) {
                open.close();
            }
        }

        /** Closes every connection of this master without waiting. */
        void closeAsync() {
            pubSub.closeAsync();
            connection.closeAsync();
            StatefulRedisConnection<String, String> open = side;
            if (open != null) {
                open.closeAsync();
            }
        }

        boolean is(String otherHost, int otherPort) {
            return host.equals(otherHost) && port == otherPort;
        }

        @Override
        public String toString() {
            return host + ":" + port;
        }
    }

    /** The master as one sentinel names it. */
    private record Named(String host, int port, long epoch) {
    }

    private SentinelTopology(RedisClient client, boolean ownsClient, RedisURI uri, Duration timeout, Master first,
            long epoch, boolean sharded) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.uri = uri;
        this.timeout = timeout;
        this.current = first;
        this.knownEpoch = epoch;
        this.sharded = sharded;
        this.transport = new SingleConnectionTransport(first.pubSub, sharded);
        this.commands = commandsOfTheCurrentMaster();
        this.worker = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "synchronizers-sentinel");
            thread.setDaemon(true);
            workerThread = thread;
            return thread;
        });
        worker.setRemoveOnCancelPolicy(true);
        worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        listenToReconnects(first);
    }

    /**
     * Asks the sentinels of {@code uri} for the master, connects to it, and starts listening to
     * every sentinel for switches.
     *
     * @param given a Lettuce client configured by the caller, or null to create one configured by
     *     {@code options}
     * @param uri a {@code redis-sentinel://} URI
     * @param options the options of a client this topology creates
     * @param timeout the command timeout, which bounds connecting too: each sentinel asked in turn,
     *     until one names the master, and then the master
     * @return the connected topology
     * @throws SynchronizerUnavailableException if no sentinel names the master, or the master it
     *     names cannot be reached, each within the timeout
     */
    public static SentinelTopology connect(RedisClient given, RedisURI uri, ClientOptions options, Duration timeout) {
        RedisClient client = given != null ? given : RedisClient.create();
        if (given == null) {
            client.setOptions(options);
        }
        Master first = null;
        try {
            Named named = null;
            RuntimeException failure = null;
            for (RedisURI sentinel : uri.getSentinels()) {
                try (StatefulRedisSentinelConnection<String, String> connection = client.connectSentinel(StringCodec.UTF8,
                        sentinelUri(sentinel, timeout))) {
                    named = Replies.await(askFor(connection, uri.getSentinelMasterId()), timeout,
                            "ask a sentinel for the master");
                    break;
                } catch (RuntimeException e) {
                    failure = e;
                }
            }
            if (named == null) {
                throw failure != null ? failure : new IllegalArgumentException("no sentinel in " + describe(uri));
            }
            first = open(client, uri, named.host(), named.port());
            boolean sharded = ServerVersion.shardedPubSub(first.connection.async(), timeout);
            SentinelTopology topology = new SentinelTopology(client, given == null, uri, timeout, first, named.epoch(),
                    sharded);
            topology.listenToSentinels();
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
                    + " within " + timeout.toMillis() + " ms: " + e.getMessage(), e);
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
        return proxyOfTheCurrentMaster(master -> master.side(client), "side connection");
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
     * every command of a connection a sentinel has since announced to be the old master's: its
     * reply may come from a server that is no master any more.
     */
    @Override
    public boolean repliesTrusted(long sentNanos) {
        Master now = current;
        return !now.stale && sentNanos - now.sinceNanos >= 0;
    }

    @Override
    public String describe() {
        return describe(uri);
    }

    @Override
    public void close() {
        closed = true;
        worker.shutdownNow();
        if (Thread.currentThread() != workerThread) {
            try {
                // A switch in progress ends before the connections it may have opened are closed.
                worker.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        transport.close();
        for (Ear ear : ears) {
            ear.close();
        }
        Master last = current;
        last.close();
        for (Master old : retired) {
            old.close();
        }
        if (ownsClient) {
            client.shutdown(Duration.ZERO, uri.getTimeout());
        }
    }

    /* --------------- following the master --------------- */

    /** Subscribes to every sentinel's announcements, each on its own, trying again those that are down. */
    private void listenToSentinels() {
        for (RedisURI sentinel : uri.getSentinels()) {
            Ear ear = new Ear(sentinelUri(sentinel, timeout));
            ears.add(ear);
            ear.connect();
        }
    }

    /**
     * A sentinel announced a switch, {@code <name> <old-ip> <old-port> <new-ip> <new-port>}: one
     * that names the current master as the old one moves the client at once; another is checked
     * with the sentinel first. Called on an I/O thread: only marks the current connection stale
     * and hands the move to the worker thread.
     */
    private void announced(Ear from, String message) {
        String[] parts = message.split(" ");
        if (parts.length < 5 || !parts[0].equals(uri.getSentinelMasterId()) || closed) {
            return;
        }
        String host = parts[3];
        int port = Integer.parseInt(parts[4]);
        Master now = current;
        if (now.is(host, port)) {
            return;   // the same switch, announced by another sentinel after it moved the client
        }
        if (now.is(parts[1], Integer.parseInt(parts[2]))) {
            if (!now.stale) {
                now.staleSinceNanos = System.nanoTime();
                now.stale = true;
                log.info("sentinel {} announces that the master of {} moved from {} to {}:{}; following it",
                        from.address(), uri.getSentinelMasterId(), now, host, port);
            }
            execute(() -> follow(from, host, port));
        } else {
            from.resolve();
        }
    }

    /**
     * Moves to the master a sentinel announced, learning from that sentinel, meanwhile, the
     * epoch of the new configuration: a sentinel that lags behind and still names an older
     * master with an older epoch is then ignored. On the worker thread.
     */
    private void follow(Ear from, String host, int port) {
        if (closed || current.is(host, port)) {
            return;
        }
        CompletableFuture<Named> epoch = from.ask();
        Master next = connectTo(host, port);
        if (next == null) {
            return;
        }
        long learnt = -1;
        try {
            Named named = epoch.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (named.host().equals(host) && named.port() == port) {
                learnt = named.epoch();
            }
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            log.debug("sentinel {} did not tell the new configuration's epoch: {}", from.address(), e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();   // closing
        }
        switchTo(next, learnt);
    }

    /**
     * One sentinel named a master, when asked: follow it if its configuration is newer than the
     * one known. On the worker thread, so that decisions and moves happen one at a time.
     */
    private void consider(Ear from, Named named) {
        Master now = current;
        if (closed) {
            return;
        }
        if (now.is(named.host(), named.port())) {
            knownEpoch = Math.max(knownEpoch, named.epoch());
            return;
        }
        if (named.epoch() <= knownEpoch) {
            log.debug("sentinel {} names {}:{} with configuration epoch {}, older than the {} known; ignored",
                    from.address(), named.host(), named.port(), named.epoch(), knownEpoch);
            return;
        }
        now.staleSinceNanos = System.nanoTime();
        now.stale = true;
        log.info("sentinel {} names {}:{} the master of {} (configuration epoch {}, the client knew {}), not {};"
                + " following it", from.address(), named.host(), named.port(), uri.getSentinelMasterId(), named.epoch(),
                knownEpoch, now);
        Master next = connectTo(named.host(), named.port());
        if (next != null) {
            switchTo(next, named.epoch());
        }
    }

    /**
     * Connects to a new master; if it cannot be reached yet, asks the sentinels again a moment
     * later (which moves the client then) and returns null.
     */
    private Master connectTo(String host, int port) {
        try {
            Master next = open(client, uri, host, port);
            if (closed) {
                next.close();
                return null;
            }
            if (sidesWanted) {
                try {
                    next.side(client);
                } catch (RuntimeException e) {
                    // Its first command connects it (Master.side); until then that command fails.
                    log.warn("cannot open the side connection to the new master {}:{} yet: {}", host, port,
                            e.getMessage());
                }
            }
            return next;
        } catch (RuntimeException e) {
            log.warn("cannot connect to the new master {}:{} of {} yet; asking the sentinels again: {}", host, port,
                    uri.getSentinelMasterId(), e.getMessage());
            schedule(() -> {
                for (Ear ear : ears) {
                    ear.resolve();
                }
            });
            return null;
        }
    }

    /**
     * Makes {@code next} the current master: commands go there from now on, wake-up subscriptions
     * move there, the switch tasks run, and the old connections are closed once the replies still
     * on their way have had a command timeout to arrive. On the worker thread.
     */
    private void switchTo(Master next, long epoch) {
        if (closed) {
            next.close();
            return;
        }
        Master old = current;
        listenToReconnects(next);
        current = next;
        knownEpoch = Math.max(knownEpoch, epoch);
        transport.moveTo(next.pubSub);
        log.info("moved to the master {} of {}, {} ms after learning of the switch", next, uri.getSentinelMasterId(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - old.staleSinceNanos));
        for (Runnable task : switchTasks) {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.error("a task after the switch to {} failed", next, e);
            }
        }
        retired.add(old);
        try {
            worker.schedule(() -> {
                retired.remove(old);
                old.closeAsync();
            }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed meanwhile: close() closes the retired connections
        }
    }

    /**
     * Runs the reconnect tasks when the current master's command connection is made again, and
     * asks the sentinels whether it is still the master (a restarted server may not be).
     */
    private void listenToReconnects(Master master) {
        master.connection.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                if (current != master || closed) {
                    return;
                }
                reconnectTasks.forEach(Runnable::run);
                for (Ear ear : ears) {
                    ear.resolve();
                }
            }
        });
    }

    private void execute(Runnable task) {
        try {
            worker.execute(task);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    private void schedule(Runnable task) {
        try {
            worker.schedule(task, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * One sentinel: its {@code +switch-master} subscription, and a connection to ask it for the
     * master. Connected again by Lettuce after an outage, re-subscribing by itself; the sentinel is
     * then asked for the master, since an announcement may have been missed meanwhile.
     */
    private final class Ear {
        private final RedisURI sentinel;
        private volatile StatefulRedisPubSubConnection<String, String> pubSub;
        private volatile StatefulRedisSentinelConnection<String, String> asking;

        Ear(RedisURI sentinel) {
            this.sentinel = sentinel;
        }

        String address() {
            return sentinel.getHost() + ":" + sentinel.getPort();
        }

        /** Subscribes, asynchronously; tries again later while the sentinel cannot be reached. */
        void connect() {
            if (closed) {
                return;
            }
            client.connectPubSubAsync(StringCodec.UTF8, sentinel).whenComplete((connection, failure) -> {
                if (failure != null) {
                    log.debug("sentinel {} cannot be reached; trying again: {}", address(), failure.getMessage());
                    schedule(this::connect);
                    return;
                }
                if (closed) {
                    connection.closeAsync();
                    return;
                }
                connection.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String channel, String message) {
                        if ("+switch-master".equals(channel)) {
                            announced(Ear.this, message);
                        }
                    }
                });
                connection.addListener(new RedisConnectionStateListener() {
                    @Override
                    public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                        resolve();
                    }
                });
                pubSub = connection;
                connection.async().subscribe("+switch-master").whenComplete((ok, subscribeFailure) -> {
                    if (subscribeFailure != null) {
                        log.debug("cannot subscribe to sentinel {}: {}", address(), subscribeFailure.getMessage());
                    }
                    resolve();
                });
            });
        }

        /** Asks this sentinel for the master, asynchronously, and follows it if its configuration is newer. */
        void resolve() {
            if (closed) {
                return;
            }
            ask().whenComplete((named, failure) -> {
                if (failure != null) {
                    log.debug("sentinel {} did not name the master: {}", address(), failure.getMessage());
                } else {
                    execute(() -> consider(this, named));
                }
            });
        }

        /** Asks this sentinel for the master and its configuration epoch; bounded by the command timeout. */
        CompletableFuture<Named> ask() {
            StatefulRedisSentinelConnection<String, String> open = asking;
            CompletableFuture<StatefulRedisSentinelConnection<String, String>> connected = open != null && open.isOpen()
                    ? CompletableFuture.completedFuture(open)
                    : client.connectSentinelAsync(StringCodec.UTF8, sentinel).thenApply(made -> {
                        StatefulRedisSentinelConnection<String, String> before = asking;
                        asking = made;
                        if (before != null && before != made) {
                            before.closeAsync();
                        }
                        if (closed) {
                            made.closeAsync();
                        }
                        return made;
                    });
            return connected.thenCompose(connection -> askFor(connection, uri.getSentinelMasterId()))
                    .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        void close() {
            StatefulRedisPubSubConnection<String, String> subscribed = pubSub;
            if (subscribed != null) {
                subscribed.closeAsync();
            }
            StatefulRedisSentinelConnection<String, String> connection = asking;
            if (connection != null) {
                connection.closeAsync();
            }
        }
    }

    /* --------------- helpers --------------- */

    /**
     * The commands of whichever master is current when a command is sent: every command goes over
     * the current master's one connection, so the commands of one thread keep their order except
     * across a switch, whose replies are not trusted anyway ({@link #repliesTrusted}).
     */
    private RedisClusterAsyncCommands<String, String> commandsOfTheCurrentMaster() {
        return proxyOfTheCurrentMaster(master -> master.connection, "commands");
    }

    /** Commands that go over the connection {@code which} picks of whichever master is current. */
    @SuppressWarnings("unchecked")
    private RedisClusterAsyncCommands<String, String> proxyOfTheCurrentMaster(
            Function<Master, StatefulRedisConnection<String, String>> which, String what) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return objectMethod(proxy, method, args, what);
            }
            try {
                return method.invoke(which.apply(current).async(), args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (RedisClusterAsyncCommands<String, String>) Proxy.newProxyInstance(
                RedisClusterAsyncCommands.class.getClassLoader(), new Class<?>[] {RedisClusterAsyncCommands.class},
                handler);
    }

    private Object objectMethod(Object proxy, Method method, Object[] args, String what) {
        return switch (method.getName()) {
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            default -> what + " of the master of " + describe();
        };
    }

    /** Connects both connections to one server, by its address, with the URI's credentials and settings. */
    private static Master open(RedisClient client, RedisURI uri, String host, int port) {
        RedisURI.Builder direct = RedisURI.builder().withHost(host).withPort(port).withSsl(uri.isSsl())
                .withStartTls(uri.isStartTls()).withVerifyPeer(uri.getVerifyMode()).withDatabase(uri.getDatabase())
                .withTimeout(uri.getTimeout()).withAuthentication(uri);
        if (uri.getClientName() != null) {
            direct.withClientName(uri.getClientName());
        }
        RedisURI server = direct.build();
        StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8, server);
        try {
            return new Master(host, port, server, connection, client.connectPubSub(StringCodec.UTF8, server),
                    System.nanoTime());
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /** A sentinel's URI as given, bounded by the command timeout. */
    private static RedisURI sentinelUri(RedisURI sentinel, Duration timeout) {
        return RedisURI.builder(sentinel).withTimeout(timeout).build();
    }

    /**
     * Asks a sentinel, in one round trip, for the master's address ({@code SENTINEL
     * GET-MASTER-ADDR-BY-NAME}, which names the promoted replica as soon as the failover has
     * reconfigured it, as Lettuce asks) and the configuration epoch ({@code SENTINEL MASTER}).
     */
    private static CompletableFuture<Named> askFor(StatefulRedisSentinelConnection<String, String> connection,
            String masterId) {
        CompletableFuture<SocketAddress> address = connection.async().getMasterAddrByName(masterId).toCompletableFuture();
        CompletableFuture<Map<String, String>> master = connection.async().master(masterId).toCompletableFuture();
        return address.thenCombine(master, (named, state) -> {
            if (!(named instanceof InetSocketAddress at)) {
                throw new IllegalStateException("the sentinel names no master " + masterId + ": " + named);
            }
            String epoch = state.get("config-epoch");
            return new Named(at.getHostString(), at.getPort(), epoch == null ? 0 : Long.parseLong(epoch));
        });
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
