package dev.synchronizers.redis.topology;

import dev.synchronizers.redis.wakeup.PubSubTransport;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

/**
 * Where one client's state lives: the commands (routed to the node that owns their keys), the
 * transport of wake-ups, how the watchdog may batch renewals, and what the server is. One
 * implementation per kind of deployment: {@link StandaloneTopology} (a standalone server),
 * {@link SentinelTopology} (the master a Sentinel set names) and {@link ClusterTopology} (Redis
 * Cluster). Everything above this
 * interface (synchronizers, script registry, watchdog, wake-up dispatcher) is the same on every
 * topology.
 *
 * <p>Thread-safe. Connected when created; {@link #close()} closes what it opened and the Lettuce
 * client if it created it, never a client it was given.
 */
public interface Topology extends AutoCloseable {

    /**
     * Returns the asynchronous commands, shared by every thread of the client. On a cluster every
     * command is routed to the master of its first key's slot, and redirections are followed.
     *
     * @return the commands
     */
    RedisClusterAsyncCommands<String, String> commands();

    /**
     * Opens one more command connection to the server {@link #commands()} talks to, for commands
     * that must neither wait behind the shared connection's commands nor hold them up: the
     * {@code WAIT}s of replica acknowledgement, which block the connection they are sent on.
     * Closed by {@link #close()}.
     *
     * @return the new connection's asynchronous commands
     * @throws UnsupportedOperationException on a cluster, where replica acknowledgement is refused
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    RedisClusterAsyncCommands<String, String> openSideConnection();

    /**
     * Returns the transport the wake-up dispatcher subscribes through: classic Pub/Sub, or sharded
     * Pub/Sub on Redis 7 and later, as {@link #shardedPubSub()} says.
     *
     * @return the transport, created once
     */
    PubSubTransport pubSub();

    /**
     * Tells whether the scripts publish wake-ups with {@code SPUBLISH} (Redis 7 and later) and
     * waiters must subscribe with {@code SSUBSCRIBE}, as detected when the topology connected.
     *
     * @return true on Redis 7 and later
     */
    boolean shardedPubSub();

    /**
     * Returns the group a key belongs to for batching: a script call may take keys of one group
     * only. Every key of one group on a standalone server; the key's hash slot on a cluster.
     *
     * @param key a key
     * @return its group
     */
    int batchGroup(String key);

    /**
     * Adds a task run whenever the command connection (or, on a cluster, any node connection) is
     * established again after being lost.
     *
     * @param task what to run; must be quick
     */
    void onReconnect(Runnable task);

    /**
     * Adds a task run when the client has moved to another master (a Sentinel switch): its
     * command and wake-up connections go to the new master by the time the task runs.
     * Topologies that never switch masters this way ignore it.
     *
     * @param task what to run; must be quick and must not block
     */
    default void onSwitch(Runnable task) {
    }

    /**
     * Tells whether the client may move to another master by itself ({@link #onSwitch}), so that
     * what it sent to the old master lately may have to be sent again to the new one.
     *
     * @return true on a Sentinel set
     */
    default boolean switchesMasters() {
        return false;
    }

    /**
     * Tells whether the reply to a command sent at {@code sentNanos} can be trusted to come from
     * the server that is the master now, as far as the client knows: false once the client has
     * learnt that the master it was sent to is no longer the master. An acquisition whose reply is
     * not trusted is not returned as acquired: it is given back and tried again. Always true on
     * topologies whose commands are routed to the current master by the server (a cluster's
     * redirections) or that have one server.
     *
     * @param sentNanos {@link System#nanoTime()} just before the command was sent
     * @return true if the reply came from the current master
     */
    default boolean repliesTrusted(long sentNanos) {
        return true;
    }

    /**
     * Describes the deployment for messages, without credentials, e.g.
     * {@code "redis://127.0.0.1:6379"} or {@code "cluster of 3 masters via 127.0.0.1:7000"}.
     *
     * @return the description
     */
    String describe();

    /** Closes the connections it opened, and the Lettuce client if it created it. */
    @Override
    void close();
}
