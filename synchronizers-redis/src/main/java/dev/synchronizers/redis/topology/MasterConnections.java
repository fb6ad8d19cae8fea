package dev.synchronizers.redis.topology;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The connections of a {@link SentinelTopology} to one master: the command connection, the
 * Pub/Sub connection of the wake-ups, and the side connection once one is wanted; the address they
 * go to, since when they are the current ones, and whether their replies are trusted: not while a
 * sentinel's announcement that this master is the old one is being checked, and never again once
 * the client is leaving it.
 *
 * <p>Thread-safe: the address and the connections are fixed when it is opened; the side
 * connection is made at most once, under a lock; the trust marks are atomic. Costs two connections
 * to the master, three once a side connection is wanted; opening it blocks the caller until both
 * are made, up to the URI's connect timeout each.
 */
final class MasterConnections {

    final String host;
    final int port;
    /** The master's address as a URI, with the user's credentials and settings. */
    final RedisURI server;
    final StatefulRedisConnection<String, String> connection;
    final StatefulRedisPubSubConnection<String, String> pubSub;
    final long sinceNanos;
    /** Announcements that named this master the old one and are being checked with their sentinel. */
    private final AtomicInteger doubts = new AtomicInteger();
    /** Set once the client leaves this master for another: no reply from here is trusted any more. */
    private volatile boolean stale;
    /** When the client stopped trusting it, by {@link System#nanoTime()}; for the log. */
    private volatile long distrustedSinceNanos;
    /** Set once a command sent here was answered {@code READONLY}: the server is a replica now. */
    private volatile boolean readOnly;
    /** The side connection ({@link SentinelTopology#openSideConnection()}), once one is wanted; else null. */
    private volatile StatefulRedisConnection<String, String> side;
    private final ReentrantLock sideLock = new ReentrantLock();

    private MasterConnections(String host, int port, RedisURI server,
            StatefulRedisConnection<String, String> connection, StatefulRedisPubSubConnection<String, String> pubSub,
            long sinceNanos) {
        this.host = host;
        this.port = port;
        this.server = server;
        this.connection = connection;
        this.pubSub = pubSub;
        this.sinceNanos = sinceNanos;
    }

    /** Connects both connections to one server, by its address, with the URI's credentials and settings. */
    static MasterConnections open(RedisClient client, RedisURI uri, String host, int port) {
        RedisURI.Builder direct = RedisURI.builder().withHost(host).withPort(port).withSsl(uri.isSsl())
                .withStartTls(uri.isStartTls()).withVerifyPeer(uri.getVerifyMode()).withDatabase(uri.getDatabase())
                .withTimeout(uri.getTimeout()).withAuthentication(uri);
        if (uri.getClientName() != null) {
            direct.withClientName(uri.getClientName());
        }
        RedisURI server = direct.build();
        StatefulRedisConnection<String, String> connection =
                InFlightCommands.failOnDisconnect(client.connect(StringCodec.UTF8, server));
        try {
            return new MasterConnections(host, port, server, connection,
                    client.connectPubSub(StringCodec.UTF8, server), System.nanoTime());
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * Tells whether a reply from here can be trusted to come from the master: not while an
     * announcement that names this master the old one is being checked ({@link #doubt()}), and
     * never again once the client is leaving it ({@link #markStale()}).
     */
    boolean trusted() {
        return !stale && doubts.get() == 0;
    }

    /**
     * A sentinel announced that this master is the old one: no reply from here is trusted until
     * the announcement is checked ({@link #checked()}), or ever again if the client leaves.
     *
     * @return whether it was trusted until now
     */
    boolean doubt() {
        boolean wasTrusted = doubts.getAndIncrement() == 0 && !stale;
        if (wasTrusted) {
            distrustedSinceNanos = System.nanoTime();
        }
        return wasTrusted;
    }

    /** The check of one announcement {@link #doubt()} was told of is over. */
    void checked() {
        doubts.decrementAndGet();
    }

    /** The client is leaving this master: no reply from here is trusted any more. */
    void markStale() {
        if (trusted()) {
            distrustedSinceNanos = System.nanoTime();
        }
        stale = true;
    }

    /** A command sent here was answered {@code READONLY}: the server is a replica now. */
    void markReadOnly() {
        readOnly = true;
    }

    /** Whether a command sent here was answered {@code READONLY} ({@link #markReadOnly()}). */
    boolean readOnly() {
        return readOnly;
    }

    /** When the client stopped trusting this master, by {@link System#nanoTime()}; for the log. */
    long distrustedSinceNanos() {
        return distrustedSinceNanos;
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
                side = InFlightCommands.failOnDisconnect(client.connect(StringCodec.UTF8, server));
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
