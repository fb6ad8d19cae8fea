package dev.synchronizers.redis.wakeup;

import io.lettuce.core.Delegating;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.protocol.DefaultEndpoint;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Every wake-up subscription of a client on one Pub/Sub connection: a standalone server, or the
 * master a Sentinel set names (the client follows it across failovers). Subscribes with {@code
 * SUBSCRIBE}, or with {@code SSUBSCRIBE} when the scripts publish with {@code SPUBLISH}.
 */
public final class SingleConnectionTransport implements PubSubTransport {

    private final StatefulRedisPubSubConnection<String, String> connection;
    private final boolean sharded;
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
        connection.addListener(new TransportAdapter(sharded, listener));
        connection.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
                listener.interrupted(null);
            }

            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                listener.reconnected();
            }
        });
        this.listener = listener;
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        return (sharded ? connection.async().ssubscribe(channel) : connection.async().subscribe(channel))
                .toCompletableFuture();
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        return (sharded ? connection.async().sunsubscribe(channel) : connection.async().unsubscribe(channel))
                .toCompletableFuture();
    }

    @Override
    public boolean isOpen(String channel) {
        return connection.isOpen();
    }

    @Override
    public void checkHealth(Duration timeout) {
        if (closed || !connection.isOpen() || !pinging.compareAndSet(false, true)) {
            return;
        }
        connection.async().ping().toCompletableFuture()
                .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((pong, failure) -> {
                    pinging.set(false);
                    if (failure != null && unanswered(failure) && !closed) {
                        Listener told = listener;
                        told.interrupted(null);
                        if (!disconnect(connection)) {
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
        Object writer = connection instanceof RedisChannelHandler<?, ?> handler ? handler.getChannelWriter() : null;
        while (writer instanceof Delegating<?> delegating) {
            writer = delegating.getDelegate();
        }
        if (writer instanceof DefaultEndpoint endpoint) {
            endpoint.disconnect();
            return true;
        }
        return false;
    }
}
