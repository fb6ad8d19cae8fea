package dev.synchronizers.redis.wakeup;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wake-up subscriptions on a Redis Cluster: each channel is subscribed on the master that owns
 * its slot (every key and channel of one synchronizer shares a slot), over one Pub/Sub connection
 * per master. With sharded Pub/Sub (Redis 7 and later: the scripts {@code SPUBLISH}, this
 * transport {@code SSUBSCRIBEs}), a release costs traffic on its own shard only; with classic
 * Pub/Sub (6.2) a {@code PUBLISH} reaches every node over the cluster bus, and subscribing on the
 * slot's master keeps the subscription apart from every other master's failures.
 *
 * <p>When a slot gets another master (a failover, a resharding), its channels follow: they are
 * {@linkplain Listener#interrupted interrupted}, unsubscribed from the old master if it still
 * answers, and subscribed on the new one, whose confirmation wakes their waiters to try again. A
 * move is noticed at the next {@link #checkHealth} after the client's view of the topology
 * changed (Lettuce refreshes it periodically and on redirections and reconnect storms), and at
 * once when Redis itself unsubscribes a shard channel because its slot moved away.
 */
public final class ClusterPubSubTransport implements PubSubTransport {

    private static final Logger log = LoggerFactory.getLogger(ClusterPubSubTransport.class);

    private final StatefulRedisClusterPubSubConnection<String, String> pubSub;
    private final Supplier<Partitions> partitions;
    private final Supplier<CompletionStage<?>> refreshTopology;
    private final boolean sharded;
    /** channel -> id of the master it is subscribed on. */
    private final Map<String, String> homes = new ConcurrentHashMap<>();
    /** master id -> its Pub/Sub connection. */
    private final Map<String, Node> nodes = new ConcurrentHashMap<>();
    private volatile Listener listener;
    private volatile boolean closed;

    /**
     * @param pubSub the cluster Pub/Sub connection whose node connections carry the subscriptions
     * @param partitions the client's current view of the cluster (refreshed by Lettuce)
     * @param refreshTopology asks Lettuce to refresh that view now
     * @param sharded whether to subscribe with {@code SSUBSCRIBE} (Redis 7 and later)
     */
    public ClusterPubSubTransport(StatefulRedisClusterPubSubConnection<String, String> pubSub,
            Supplier<Partitions> partitions, Supplier<CompletionStage<?>> refreshTopology, boolean sharded) {
        this.pubSub = pubSub;
        this.partitions = partitions;
        this.refreshTopology = refreshTopology;
        this.sharded = sharded;
    }

    @Override
    public void listen(Listener listener) {
        this.listener = listener;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Subscribes on the master that owns the channel's slot in the client's view. If that view
     * is behind the cluster's (the slot moved, and nothing has refreshed the view since), the node
     * answers {@code MOVED}: the view is then refreshed, and the subscription made once more on the
     * master it names now.
     */
    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        return subscribeOnOwner(channel).exceptionallyCompose(failure -> {
            if (closed || !redirected(failure)) {
                return CompletableFuture.failedFuture(failure);
            }
            log.debug("wake-up channel {}: its slot moved unseen ({}); refreshing the view of the slots", channel,
                    failure.toString());
            // Off the I/O thread: subscribing on a master not connected yet opens a connection.
            return refreshTopology.get().toCompletableFuture()
                    .handleAsync((done, refreshFailure) -> null)
                    .thenCompose(ignored -> subscribeOnOwner(channel));
        });
    }

    /** Whether {@code failure} is a node's redirection ({@code MOVED}, {@code ASK}) to another. */
    private static boolean redirected(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && (message.startsWith("MOVED ") || message.startsWith("ASK "))) {
                return true;
            }
        }
        return false;
    }

    private CompletableFuture<Void> subscribeOnOwner(String channel) {
        String owner;
        Node node;
        try {
            owner = ownerOf(channel);
            node = node(owner);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        homes.put(channel, owner);
        return node.subscribe(channel);
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        String home = homes.remove(channel);
        Node node = home == null ? null : nodes.get(home);
        return node == null ? CompletableFuture.completedFuture(null) : node.unsubscribe(channel);
    }

    @Override
    public boolean isOpen(String channel) {
        try {
            return node(ownerOf(channel)).connection.isOpen();
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public void checkHealth(Duration timeout) {
        if (closed) {
            return;
        }
        moveChannelsOfMovedSlots();
        for (Node node : nodes.values()) {
            node.ping(timeout);
        }
    }

    @Override
    public void close() {
        closed = true;
    }

    /** Moves every channel whose slot's master is not the one it is subscribed on. */
    private void moveChannelsOfMovedSlots() {
        for (Map.Entry<String, String> entry : homes.entrySet()) {
            String channel = entry.getKey();
            String owner;
            try {
                owner = ownerOf(channel);
            } catch (RuntimeException e) {
                continue;   // no master for the slot right now (failover under way): next time
            }
            if (!owner.equals(entry.getValue()) && homes.replace(channel, entry.getValue(), owner)) {
                move(channel, entry.getValue(), owner);
            }
        }
    }

    private void move(String channel, String from, String to) {
        log.debug("wake-up channel {} follows its slot from node {} to node {}", channel, from, to);
        listener.interrupted(List.of(channel));
        Node old = nodes.get(from);
        if (old != null && old.connection.isOpen()) {
            old.unsubscribe(channel);
        }
        node(to).subscribe(channel).whenComplete((ok, failure) -> {
            if (failure != null) {
                // The dispatcher's waiters still bound their sleep; the next check tries again.
                homes.replace(channel, to, from);
            }
        });
    }

    private String ownerOf(String channel) {
        RedisClusterNode master = partitions.get().getMasterBySlot(SlotHash.getSlot(channel));
        if (master == null) {
            throw new IllegalStateException("no master serves the slot of '" + channel + "' right now");
        }
        return master.getNodeId();
    }

    private Node node(String nodeId) {
        Node node = nodes.get(nodeId);
        if (node != null && node.connection.isOpen()) {
            return node;
        }
        return nodes.compute(nodeId, (id, current) ->
                current != null && current.connection.isOpen() ? current : new Node(id, pubSub.getConnection(id)));
    }

    /** Channels subscribed on one master. */
    private List<String> channelsOf(String nodeId) {
        List<String> channels = new ArrayList<>();
        homes.forEach((channel, home) -> {
            if (home.equals(nodeId)) {
                channels.add(channel);
            }
        });
        return channels;
    }

    /** One master's Pub/Sub connection. */
    private final class Node {
        final String id;
        final StatefulRedisPubSubConnection<String, String> connection;
        /** Whether a health check's PING awaits its reply. */
        final AtomicBoolean pinging = new AtomicBoolean();

        Node(String id, StatefulRedisPubSubConnection<String, String> connection) {
            this.id = id;
            this.connection = connection;
            connection.addListener(new TransportAdapter(sharded, listener) {
                @Override
                public void sunsubscribed(String channel, long count) {
                    // Redis unsubscribes the shard channels of a slot that moved away; the channel
                    // still lives here as far as this transport knows, so it must follow the slot
                    // (off the I/O thread: following it may open a connection).
                    if (id.equals(homes.get(channel)) && !closed) {
                        listener.interrupted(List.of(channel));
                        refreshTopology.get().whenCompleteAsync((done, failure) -> moveChannelsOfMovedSlots());
                    }
                }
            });
            connection.addListener(new RedisConnectionStateListener() {
                @Override
                public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
                    listener.interrupted(channelsOf(id));
                }

                @Override
                public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                    listener.reconnected();
                }
            });
        }

        CompletableFuture<Void> subscribe(String channel) {
            return (sharded ? connection.async().ssubscribe(channel) : connection.async().subscribe(channel))
                    .toCompletableFuture();
        }

        CompletableFuture<Void> unsubscribe(String channel) {
            return (sharded ? connection.async().sunsubscribe(channel) : connection.async().unsubscribe(channel))
                    .toCompletableFuture();
        }

        void ping(Duration timeout) {
            if (!connection.isOpen() || channelsOf(id).isEmpty() || !pinging.compareAndSet(false, true)) {
                return;
            }
            connection.async().ping().toCompletableFuture()
                    .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .whenComplete((pong, failure) -> {
                        pinging.set(false);
                        if (failure != null && SingleConnectionTransport.unanswered(failure) && !closed) {
                            listener.interrupted(channelsOf(id));
                            if (!SingleConnectionTransport.disconnect(connection)) {
                                listener.reconnected();
                            }
                        }
                    });
        }
    }
}
