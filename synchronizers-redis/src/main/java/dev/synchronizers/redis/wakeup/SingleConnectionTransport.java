package dev.synchronizers.redis.wakeup;

import io.lettuce.core.CommandListenerWriter;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.protocol.CommandExpiryWriter;
import io.lettuce.core.protocol.DefaultEndpoint;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Every wake-up subscription of a client on one Pub/Sub connection: a standalone server, or the
 * master a Sentinel set names. Subscribes with {@code SUBSCRIBE}, or with {@code SSUBSCRIBE} when
 * the scripts publish with {@code SPUBLISH}. When the master changes, {@link #moveTo} moves every
 * subscription to a connection to the new master.
 */
public final class SingleConnectionTransport implements PubSubTransport {

    private volatile StatefulRedisPubSubConnection<String, String> connection;
    private final boolean sharded;
    /** The channels subscribed (or being subscribed) through this transport: what a move takes along. */
    private final Set<String> channels = ConcurrentHashMap.newKeySet();
    /** Whether a health check's PING awaits its reply: one at a time, however slow Redis is. */
    private final AtomicBoolean pinging = new AtomicBoolean();
    private volatile Listener listener;
    private volatile boolean closed;

    /**
     * @param connection the client's Pub/Sub connection, used only through this transport
     * @param sharded whether to subscribe with {@code SSUBSCRIBE} (Redis 7 and later)
     */
    public SingleConnectionTransport(StatefulRedisPubSubConnection<String, String> connection, boolean sharded) {
        this.connection = connection;
        this.sharded = sharded;
    }

    @Override
    public void listen(Listener listener) {
        this.listener = listener;
        attach(connection, listener);
    }

    /**
     * Passes a connection's messages and connection events to the listener; events of a
     * connection that is no longer the transport's (one a move left behind) are ignored, and its
     * messages only wake waiters, who then ask the current master.
     */
    private void attach(StatefulRedisPubSubConnection<String, String> attached, Listener listener) {
        attached.addListener(new TransportAdapter(sharded, listener));
        attached.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
                if (connection == attached) {
                    listener.interrupted(null);
                }
            }

            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                if (connection == attached) {
                    listener.reconnected();
                }
            }
        });
    }

    /**
     * Moves every subscription to {@code next}, a connection to the new master after a switch:
     * the channels stop being live, are subscribed on {@code next} (each live again, and its
     * waiters woken, when the new master confirms it), and every waiter is woken, since releases
     * on the new master were never published to the old connection. The caller closes the old
     * connection.
     *
     * @param next the new master's Pub/Sub connection, used only through this transport from now on
     */
    public void moveTo(StatefulRedisPubSubConnection<String, String> next) {
        Listener told = listener;
        if (told != null) {
            attach(next, told);
            told.interrupted(null);
        }
        connection = next;
        // A subscription made from now on goes to next; one made before is in the set by now.
        for (String channel : channels) {
            CompletableFuture<Void> subscribed = sharded
                    ? next.async().ssubscribe(channel).toCompletableFuture()
                    : next.async().subscribe(channel).toCompletableFuture();
            subscribed.exceptionally(failure -> null);   // the waiters are woken below and subscribe again if need be
        }
        if (told != null && !closed) {
            told.reconnected();
        }
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        channels.add(channel);
        StatefulRedisPubSubConnection<String, String> now = connection;
        return (sharded ? now.async().ssubscribe(channel) : now.async().subscribe(channel)).toCompletableFuture();
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        channels.remove(channel);
        StatefulRedisPubSubConnection<String, String> now = connection;
        return (sharded ? now.async().sunsubscribe(channel) : now.async().unsubscribe(channel)).toCompletableFuture();
    }

    @Override
    public boolean isOpen(String channel) {
        return connection.isOpen();
    }

    @Override
    public void checkHealth(Duration timeout) {
        StatefulRedisPubSubConnection<String, String> now = connection;
        if (closed || !now.isOpen() || !pinging.compareAndSet(false, true)) {
            return;
        }
        now.async().ping().toCompletableFuture()
                .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((pong, failure) -> {
                    pinging.set(false);
                    if (failure != null && unanswered(failure) && !closed && now == connection) {
                        Listener told = listener;
                        told.interrupted(null);
                        if (!disconnect(now)) {
                            told.reconnected();   // cannot force a reconnect: every waiter tries once more
                        }
                    }
                });
    }

    @Override
    public void close() {
        closed = true;
    }

    /** Whether a failure means that no reply came in time (rather than, say, an error reply). */
    static boolean unanswered(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        return cause instanceof TimeoutException || cause instanceof RedisCommandTimeoutException;
    }

    /**
     * Drops a connection that no longer answers, so that the client connects again (and then
     * re-subscribes its channels). Returns false if the connection's endpoint cannot be reached to
     * do so; the caller then at least wakes every waiter.
     */
    static boolean disconnect(StatefulRedisPubSubConnection<String, String> connection) {
        RedisChannelWriter writer = connection instanceof RedisChannelHandler<?, ?> handler ? handler.getChannelWriter() : null;
        // The writers Lettuce stacks on the endpoint (command timeouts, command listeners). Both
        // classes and their getDelegate() exist on every supported line; Lettuce 7's common
        // interface for them (io.lettuce.core.Delegating) does not exist on 6.x.
        while (writer instanceof CommandExpiryWriter || writer instanceof CommandListenerWriter) {
            writer = writer instanceof CommandExpiryWriter expiry ? expiry.getDelegate() : ((CommandListenerWriter) writer).getDelegate();
        }
        if (writer instanceof DefaultEndpoint endpoint) {
            endpoint.disconnect();
            return true;
        }
        return false;
    }
}
