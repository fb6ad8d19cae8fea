package dev.synchronizers.redis.quorum;

import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.support.Disconnected;
import dev.synchronizers.redis.topology.StandaloneTopology;
import dev.synchronizers.redis.wakeup.LazyTransport;
import dev.synchronizers.redis.watchdog.Watchdog;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.resource.ClientResources;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node of a {@code Redlock}: its connections, script registry and watchdog. A node that could
 * not be reached when the client started is connected later, by its watchdog at each tick; until
 * then every command to it fails at once, as a command to a disconnected node does, and its
 * subscriptions are refused. Once connected it serves like any other: renewals take the holds
 * back there where it is free, and acquisitions count it.
 */
public final class RedlockNode {

    private static final Logger log = LoggerFactory.getLogger(RedlockNode.class);

    private final int index;
    private final RedisURI uri;
    /** Shared Lettuce resources for the node's client, or null for resources of its own. */
    private final ClientResources resources;
    private final Duration timeout;
    private final ScriptRegistry scripts;
    private final Watchdog watchdog;
    private final LazyTransport transport = new LazyTransport();
    private final RedisClusterAsyncCommands<String, String> commands;
    private final ReentrantLock connecting = new ReentrantLock();
    private volatile StandaloneTopology topology;
    private volatile boolean closed;

    public RedlockNode(int index, RedisURI uri, ClientResources resources, Duration timeout, long leaseMillis, Duration drift,
            String clientId, Recorder metrics) {
        this.index = index;
        this.resources = resources;
        this.uri = uri;
        this.timeout = timeout;
        this.commands = lazyCommands();
        this.scripts = new ScriptRegistry(commands, metrics, timeout);
        this.watchdog = new Watchdog(scripts, metrics, key -> 0, new Watchdog.Options(leaseMillis, timeout, drift,
                "synchronizers-redlock-" + clientId.substring(0, 8) + "-node" + index));
        watchdog.everyTick(this::connectIfDown);
    }

    int index() {
        return index;
    }

    ScriptRegistry scripts() {
        return scripts;
    }

    public Watchdog watchdog() {
        return watchdog;
    }

    /** The node's commands: those of its connection, or failing at once while it has none. */
    RedisClusterAsyncCommands<String, String> commands() {
        return commands;
    }

    /** The node's wake-up transport, which refuses subscriptions until it is connected. */
    public LazyTransport transport() {
        return transport;
    }

    boolean connected() {
        return topology != null;
    }

    /**
     * Connects if not connected yet, within the command timeout.
     *
     * @return null if connected (now or before), else why not
     */
    public RuntimeException connect() {
        connecting.lock();
        try {
            if (topology != null || closed) {
                return null;
            }
            StandaloneTopology connected = StandaloneTopology.connect(null, resources, uri,
                    StandaloneTopology.clientOptions(timeout), timeout);
            // Follow-ups that failed while the node was down go out as soon as it is back.
            connected.onReconnect(watchdog.followUps()::retryNow);
            topology = connected;
            transport.attach(connected.pubSub());
            return null;
        } catch (RuntimeException e) {
            return e;
        } finally {
            connecting.unlock();
        }
    }

    private void connectIfDown() {
        if (topology == null && !closed) {
            RuntimeException failure = connect();
            if (failure == null) {
                log.info("Redlock node {} is connected", describe());
                watchdog.followUps().retryNow();
            } else {
                log.debug("Redlock node {} is still unreachable: {}", describe(), failure.getMessage());
            }
        }
    }

    public String describe() {
        return "redis://" + uri.getHost() + ":" + uri.getPort();
    }

    /** Closes the node's connections; the watchdog must be closed first. */
    public void close() {
        connecting.lock();
        try {
            closed = true;
            transport.close();
            StandaloneTopology connected = topology;
            if (connected != null) {
                connected.close();
            }
        } finally {
            connecting.unlock();
        }
    }

    /**
     * Commands that go to the node's connection once it has one, and until then fail at once with
     * the error a disconnected connection gives (so that they count as never sent).
     */
    @SuppressWarnings("unchecked")
    private RedisClusterAsyncCommands<String, String> lazyCommands() {
        return (RedisClusterAsyncCommands<String, String>) Proxy.newProxyInstance(
                RedisClusterAsyncCommands.class.getClassLoader(), new Class<?>[] {RedisClusterAsyncCommands.class},
                (proxy, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return objectMethod(proxy, method, args);
                    }
                    StandaloneTopology connected = topology;
                    if (connected != null) {
                        try {
                            return method.invoke(connected.commands(), args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    }
                    if (RedisFuture.class.isAssignableFrom(method.getReturnType())) {
                        AsyncCommand<String, String, Object> refused =
                                new AsyncCommand<>(new Command<>(CommandType.PING, null));
                        refused.completeExceptionally(Disconnected.refusal());
                        return refused;
                    }
                    throw new RedisException("Redlock node " + describe() + " is not connected");
                });
    }

    private Object objectMethod(Object proxy, Method method, Object[] args) {
        return switch (method.getName()) {
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            default -> "commands of Redlock node " + describe();
        };
    }
}
