package dev.synchronizers.redis.topology;

import dev.synchronizers.redis.topology.SentinelQuery.Named;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sentinel: its {@code +switch-master} subscription, and a connection to ask it for the
 * master. Connected again by Lettuce after an outage, re-subscribing by itself; the sentinel is
 * then asked for the master, since an announcement may have been missed meanwhile. What it hears
 * and what it is told goes to its {@link Listener}. Thread-safe.
 */
final class SentinelEar {

    // The logger SentinelTopology logged these under before the watch was split from it: log
    // settings for it keep working. Named by its name, not its class: SentinelTopology uses this
    // class, and this class does not use it back.
    private static final Logger log = LoggerFactory.getLogger("dev.synchronizers.redis.topology.SentinelTopology");

    /** Told what a sentinel announces and answers. */
    interface Listener {

        /** The sentinel announced {@code message} on {@code +switch-master}; on a Lettuce I/O thread. */
        void announced(SentinelEar from, String message);

        /** The sentinel, asked by {@link #resolve()}, named a master; on a Lettuce I/O thread. */
        void answered(SentinelEar from, Named named);
    }

    private final RedisClient client;
    private final RedisURI sentinel;
    private final String masterId;
    private final Duration timeout;
    private final WatchThread thread;
    private final Listener listener;
    private volatile StatefulRedisPubSubConnection<String, String> pubSub;
    private volatile StatefulRedisSentinelConnection<String, String> asking;

    /**
     * @param sentinel the sentinel's URI, bounded by the command timeout
     * @param masterId the name of the master the sentinels watch
     * @param thread the watch's thread, for retries, and whether the watch is closed
     */
    SentinelEar(RedisClient client, RedisURI sentinel, String masterId, Duration timeout, WatchThread thread,
            Listener listener) {
        this.client = client;
        this.sentinel = sentinel;
        this.masterId = masterId;
        this.timeout = timeout;
        this.thread = thread;
        this.listener = listener;
    }

    String address() {
        return sentinel.getHost() + ":" + sentinel.getPort();
    }

    /** Subscribes, asynchronously; tries again later while the sentinel cannot be reached. */
    void connect() {
        if (thread.closed()) {
            return;
        }
        client.connectPubSubAsync(StringCodec.UTF8, sentinel).whenComplete((connection, failure) -> {
            if (failure != null) {
                log.debug("sentinel {} cannot be reached; trying again: {}", address(), failure.getMessage());
                thread.schedule(this::connect, WatchThread.RETRY_MILLIS);
                return;
            }
            if (thread.closed()) {
                connection.closeAsync();
                return;
            }
            connection.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    if ("+switch-master".equals(channel)) {
                        listener.announced(SentinelEar.this, message);
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
        if (thread.closed()) {
            return;
        }
        ask().whenComplete((named, failure) -> {
            if (failure != null) {
                log.debug("sentinel {} did not name the master: {}", address(), failure.getMessage());
            } else {
                listener.answered(this, named);
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
                    if (thread.closed()) {
                        made.closeAsync();
                    }
                    return made;
                });
        return connected.thenCompose(connection -> SentinelQuery.askFor(connection, masterId))
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
