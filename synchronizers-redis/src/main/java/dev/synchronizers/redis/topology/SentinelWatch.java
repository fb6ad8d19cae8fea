package dev.synchronizers.redis.topology;

import dev.synchronizers.redis.topology.SentinelQuery.Named;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sentinels of a {@code redis-sentinel://} URI, listened to for the master they name, and
 * the decisions of a {@code SentinelTopology} about when to move: it subscribes to
 * {@code +switch-master} on every sentinel of the URI (any of them may be down, and each is tried
 * again until it answers), asks each for the master again whenever that subscription is made
 * again, and moves its {@link MasterMoves.Follower Follower} to the master they name.
 *
 * <p>An announcement that names the follower's current master as the old one stops the client
 * trusting that master at once, and moves the follower to the new one (every sentinel announces
 * the same switch: the first one moves the client, the others find it moved) unless the
 * announcing sentinel, asked while the follower connects, names that master with a configuration
 * epoch older than the one the watch knows: a sentinel that lags behind announces late the
 * switches it missed, which may lead from the current master back to an older one. Any other
 * announcement, and every answer to asking a sentinel, moves the follower only to a configuration
 * newer than the one known. So a sentinel that lags behind cannot move it back.
 *
 * <p>The configuration known is a master and its epoch as one answer named them, never an epoch
 * alone. When the announcing sentinel does not answer in time, the follower follows its
 * announcement with the new master's epoch unknown, and that move stays unconfirmed: the watch
 * keeps asking that sentinel until it answers. An answer that names the new master with an epoch
 * not older than the one known confirms it; an answer of that sentinel that names a configuration
 * not newer than the one known shows the announcement was stale, and so does a {@code READONLY}
 * from the new master ({@link #readOnly}) once a sentinel names the known configuration: the
 * follower then moves back to the known configuration's master.
 *
 * <p>Threads: announcements arrive on Lettuce I/O threads, where they are only read, the current
 * master marked untrusted and the rest handed over; every decision and every move (the follower's
 * {@link MasterMoves.Follower#connect} and {@link MasterMoves.Follower#switchTo}) runs on the
 * watch's own thread, {@code synchronizers-sentinel}, one at a time, never on an I/O thread. That thread also retries
 * a sentinel that could not be reached, or a master that could not be, every half second, and
 * runs what {@link #schedule} is given. Thread-safe.
 *
 * <p>Costs, per sentinel of the URI, a Pub/Sub connection and a connection to ask it; asking is
 * one round trip ({@code SENTINEL GET-MASTER-ADDR-BY-NAME} and {@code SENTINEL MASTER},
 * pipelined), bounded by the command timeout; and the one thread.
 *
 * <p>Parts: this class listens (the announcements, {@code READONLY}, closing); each sentinel's
 * connections are a {@link SentinelEar}; the decisions and the moves, with the configuration
 * known, are {@link MasterMoves}'; asking a sentinel is {@link SentinelQuery}; the thread is a
 * {@link WatchThread}.
 */
final class SentinelWatch {

    // The logger SentinelTopology logged these under before the watch was split from it: log
    // settings for it keep working. Named by its name, not its class: SentinelTopology uses this
    // class, and this class does not use it back.
    private static final Logger log = LoggerFactory.getLogger("dev.synchronizers.redis.topology.SentinelTopology");

    /** The least time between two re-discoveries that {@code READONLY} replies start ({@link #readOnly}). */
    private static final long READONLY_REDISCOVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final RedisClient client;
    private final RedisURI uri;
    private final Duration timeout;
    private final MasterMoves.Follower follower;
    /** Runs switches and resolutions, one at a time, off the I/O threads; retries sentinels. */
    private final WatchThread thread = new WatchThread();
    /** Decides when and where the follower moves, and moves it; on {@link #thread} only. */
    private final MasterMoves moves;
    private final List<SentinelEar> ears = new ArrayList<>();
    /** When {@link #readOnly} last asked the sentinels, by {@link System#nanoTime()}. */
    private final AtomicLong readOnlyAskedNanos = new AtomicLong(System.nanoTime() - READONLY_REDISCOVERY_NANOS);

    /**
     * Creates the watch and its thread; listens to nothing before {@link #start()}.
     *
     * @param first the follower's current master and the configuration epoch it was named with,
     *     as one answer named them
     */
    SentinelWatch(RedisClient client, RedisURI uri, Duration timeout, Named first, MasterMoves.Follower follower) {
        this.client = client;
        this.uri = uri;
        this.timeout = timeout;
        this.follower = follower;
        this.moves = new MasterMoves(follower, first, uri.getSentinelMasterId(), timeout, thread, this::resolveAll);
    }

    /** Subscribes to every sentinel's announcements, each on its own, trying again those that are down. */
    void start() {
        SentinelEar.Listener listener = new SentinelEar.Listener() {
            @Override
            public void announced(SentinelEar from, String message) {
                SentinelWatch.this.announced(from, message);
            }

            @Override
            public void answered(SentinelEar from, Named named) {
                thread.execute(() -> moves.consider(from, named));
            }
        };
        for (RedisURI sentinel : uri.getSentinels()) {
            SentinelEar ear = new SentinelEar(client, SentinelQuery.sentinelUri(sentinel, timeout),
                    uri.getSentinelMasterId(), timeout, thread, listener);
            ears.add(ear);
            ear.connect();
        }
    }

    /** Asks every sentinel for the master, asynchronously, and follows it if its configuration is newer. */
    void resolveAll() {
        for (SentinelEar ear : ears) {
            ear.resolve();
        }
    }

    /**
     * A command sent to {@code master} was answered {@code READONLY}: that server is a replica now.
     * If it is the follower's current master, asks every sentinel for the master, at most once a
     * second however many replies say so; the answers move the follower to a newer configuration,
     * or back to the known one when the move to this master is unconfirmed (see the class
     * comment). Any thread; does not block.
     */
    void readOnly(MasterConnections master) {
        if (thread.closed() || master != follower.current()) {
            return;
        }
        master.markReadOnly();
        long now = System.nanoTime();
        long last = readOnlyAskedNanos.get();
        if (now - last < READONLY_REDISCOVERY_NANOS || !readOnlyAskedNanos.compareAndSet(last, now)) {
            return;
        }
        log.warn("the master {} of {} answers READONLY: it is a replica now; asking the sentinels for the master",
                master, uri.getSentinelMasterId());
        resolveAll();
    }

    /** Runs {@code task} on the watch's thread after {@code delayMillis}; once closed, never. */
    void schedule(Runnable task, long delayMillis) {
        thread.schedule(task, delayMillis);
    }

    /**
     * Stops the watch's thread, after the switch in progress if any (unless called on that
     * thread), waiting up to the command timeout; then closes every sentinel connection.
     */
    void close() {
        thread.close(timeout);
        for (SentinelEar ear : ears) {
            ear.close();
        }
    }

    /**
     * A sentinel announced a switch, {@code <name> <old-ip> <old-port> <new-ip> <new-port>}: one
     * that names the current master as the old one stops the client trusting it at once and is
     * checked with the sentinel while the client connects to the new master; another is checked
     * with the sentinel first. Called on an I/O thread: only marks the current connection
     * untrusted and hands the rest to the worker thread.
     */
    private void announced(SentinelEar from, String message) {
        String[] parts = message.split(" ");
        if (parts.length < 5 || !parts[0].equals(uri.getSentinelMasterId()) || thread.closed()) {
            return;
        }
        String host = parts[3];
        int port = Integer.parseInt(parts[4]);
        MasterConnections now = follower.current();
        if (now.is(host, port)) {
            return;   // the same switch, announced by another sentinel after it moved the client
        }
        if (now.is(parts[1], Integer.parseInt(parts[2]))) {
            if (now.doubt()) {
                log.info("sentinel {} announces that the master of {} moved from {} to {}:{}; following it unless"
                        + " its configuration is older than the one the client knows", from.address(),
                        uri.getSentinelMasterId(), now, host, port);
            }
            thread.execute(() -> moves.follow(from, now, host, port));
        } else {
            from.resolve();
        }
    }
}
