package dev.synchronizers.redis.topology;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sentinels of a {@code redis-sentinel://} URI, listened to for the master they name, and
 * the decisions of a {@link SentinelTopology} about when to move: it subscribes to
 * {@code +switch-master} on every sentinel of the URI (any of them may be down, and each is tried
 * again until it answers), asks each for the master again whenever that subscription is made
 * again, and moves its {@link Follower} to the master they name.
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
 * {@link Follower#connect} and {@link Follower#switchTo}) runs on the watch's own thread,
 * {@code synchronizers-sentinel}, one at a time, never on an I/O thread. That thread also retries
 * a sentinel that could not be reached, or a master that could not be, every half second, and
 * runs what {@link #schedule} is given. Thread-safe.
 *
 * <p>Costs, per sentinel of the URI, a Pub/Sub connection and a connection to ask it; asking is
 * one round trip ({@code SENTINEL GET-MASTER-ADDR-BY-NAME} and {@code SENTINEL MASTER},
 * pipelined), bounded by the command timeout; and the one thread.
 */
final class SentinelWatch {

    // The logger SentinelTopology logged these under before the watch was split from it: log
    // settings for it keep working.
    private static final Logger log = LoggerFactory.getLogger(SentinelTopology.class);

    /** How long to wait before trying again a sentinel that could not be reached, or a failed switch. */
    private static final long RETRY_MILLIS = 500;

    /** The least time between two re-discoveries that {@code READONLY} replies start ({@link #readOnly}). */
    private static final long READONLY_REDISCOVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * The client side the watch moves from master to master: its connections to the current
     * master and to the next one. Implemented by {@link SentinelTopology}.
     */
    interface Follower {

        /** Returns the master the client talks to now; any thread, without blocking. */
        MasterConnections current();

        /**
         * Connects to the master a sentinel named, by its address. On the watch's thread; blocks
         * until connected, up to the connect timeout.
         *
         * @return the new master's connections, not yet the current ones; or null if it cannot be
         *     reached yet (the watch then asks the sentinels again a moment later) or the client is
         *     closed
         */
        MasterConnections connect(String host, int port);

        /**
         * Makes {@code next}, from {@link #connect}, the current master. On the watch's thread.
         */
        void switchTo(MasterConnections next);
    }

    /** The epoch of a {@link Named} master that its sentinel is failing over to right now. */
    static final long UNKNOWN_EPOCH = -1;

    /**
     * The master as one sentinel names it, and the configuration epoch it is the master of;
     * {@link #UNKNOWN_EPOCH} while that sentinel is failing the master over.
     */
    record Named(String host, int port, long epoch) {
    }

    private final RedisClient client;
    private final RedisURI uri;
    private final Duration timeout;
    private final Follower follower;
    /** Runs switches and resolutions, one at a time, off the I/O threads; retries sentinels. */
    private final ScheduledThreadPoolExecutor worker;
    private volatile Thread workerThread;
    private final List<Ear> ears = new ArrayList<>();
    /**
     * The newest configuration an answer named: its master and its epoch, from one answer
     * ({@link #UNKNOWN_EPOCH} if the first answer named none). Written on the worker thread only.
     */
    private volatile Named known;
    /**
     * The epoch an answer named the follower's current master with; {@link #UNKNOWN_EPOCH} after
     * a move on an announcement its sentinel did not answer in time, until an answer names it.
     * Below {@code known}'s epoch while such a move is unconfirmed. Written on the worker thread only.
     */
    private volatile long currentEpoch;
    /** The sentinel whose announcement moved the follower without an answer, while that move is unconfirmed; else null. */
    private volatile Ear movedBy;
    /** When {@link #readOnly} last asked the sentinels, by {@link System#nanoTime()}. */
    private final AtomicLong readOnlyAskedNanos = new AtomicLong(System.nanoTime() - READONLY_REDISCOVERY_NANOS);
    private volatile boolean closed;

    /**
     * Creates the watch and its thread; listens to nothing before {@link #start()}.
     *
     * @param first the follower's current master and the configuration epoch it was named with,
     *     as one answer named them
     */
    SentinelWatch(RedisClient client, RedisURI uri, Duration timeout, Named first, Follower follower) {
        this.client = client;
        this.uri = uri;
        this.timeout = timeout;
        this.known = first;
        this.currentEpoch = first.epoch();
        this.follower = follower;
        this.worker = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "synchronizers-sentinel");
            thread.setDaemon(true);
            workerThread = thread;
            return thread;
        });
        worker.setRemoveOnCancelPolicy(true);
        worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Subscribes to every sentinel's announcements, each on its own, trying again those that are down. */
    void start() {
        for (RedisURI sentinel : uri.getSentinels()) {
            Ear ear = new Ear(sentinelUri(sentinel, timeout));
            ears.add(ear);
            ear.connect();
        }
    }

    /** Asks every sentinel for the master, asynchronously, and follows it if its configuration is newer. */
    void resolveAll() {
        for (Ear ear : ears) {
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
        if (closed || master != follower.current()) {
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
        try {
            worker.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * Stops the watch's thread, after the switch in progress if any (unless called on that
     * thread), waiting up to the command timeout; then closes every sentinel connection.
     */
    void close() {
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
        for (Ear ear : ears) {
            ear.close();
        }
    }

    /* --------------- following the master --------------- */

    /**
     * A sentinel announced a switch, {@code <name> <old-ip> <old-port> <new-ip> <new-port>}: one
     * that names the current master as the old one stops the client trusting it at once and is
     * checked with the sentinel while the client connects to the new master; another is checked
     * with the sentinel first. Called on an I/O thread: only marks the current connection
     * untrusted and hands the rest to the worker thread.
     */
    private void announced(Ear from, String message) {
        String[] parts = message.split(" ");
        if (parts.length < 5 || !parts[0].equals(uri.getSentinelMasterId()) || closed) {
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
            execute(() -> follow(from, now, host, port));
        } else {
            from.resolve();
        }
    }

    /**
     * Follows an announcement that named the current master ({@code doubted}) as the old one,
     * unless the sentinel that sent it, asked meanwhile, says otherwise. It is asked while the
     * client connects to the announced master, so that a true switch costs no round trip more.
     * The announcement is not enough on its own: a sentinel that lags behind announces the
     * switches it learns of late, and one to an older configuration (back from the current master
     * to the one before it, after a failover and a failover back) names the current master as
     * the old one too; only the configuration epoch tells the two apart. So: if the sentinel names
     * the announced master with an epoch older than the one known, the client stays on its
     * master, whose replies are trusted again once no other announcement about it is being
     * checked; if it names another master now, that answer is considered as any other
     * ({@link #consider}); if it names the announced master with an epoch not older than the one
     * known, the client follows the announcement; if it does not answer within the command
     * timeout, or names no epoch, the client follows it too, unconfirmed, and that sentinel is
     * asked until it answers ({@link #moveUnconfirmed}). On the worker thread.
     */
    private void follow(Ear from, MasterConnections doubted, String host, int port) {
        try {
            MasterConnections now = follower.current();
            if (closed || now.is(host, port)) {
                return;
            }
            if (now != doubted) {
                from.resolve();   // the client has moved since: checked as an announcement about another master
                return;
            }
            CompletableFuture<Named> asked = from.ask();
            MasterConnections next = connectTo(host, port);
            Named named = null;
            try {
                named = asked.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                log.debug("sentinel {} did not tell the new configuration's epoch: {}", from.address(), e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();   // closing
            }
            if (named != null && !(named.host().equals(host) && named.port() == port)) {
                closeUnused(next);
                consider(from, named);   // the sentinel has moved on since, or back
                return;
            }
            // Older, not "not newer": one configuration epoch names one master (askFor pairs them
            // at one moment), so an equal epoch is the configuration the client already has.
            Named before = known;
            if (named != null && named.epoch() != UNKNOWN_EPOCH && named.epoch() < before.epoch()) {
                closeUnused(next);
                log.info("sentinel {} names {}:{} with configuration epoch {}, older than the {} the client knows:"
                        + " it lags behind; staying on {}", from.address(), host, port, named.epoch(), before.epoch(),
                        now);
                return;
            }
            now.markStale();
            if (next == null) {
                return;
            }
            if (named != null && named.epoch() != UNKNOWN_EPOCH) {
                switchTo(next, named);
            } else {
                moveUnconfirmed(from, next, before);
            }
        } finally {
            doubted.checked();
        }
    }

    private static void closeUnused(MasterConnections next) {
        if (next != null) {
            next.close();
        }
    }

    /**
     * One sentinel named a master, when asked: follow it if its configuration is newer than the
     * one known; after an unconfirmed move, confirm it, or go back to the known configuration's
     * master if the answer shows the move was stale (see the class comment). On the worker thread,
     * so that decisions and moves happen one at a time.
     */
    private void consider(Ear from, Named named) {
        MasterConnections now = follower.current();
        if (closed) {
            return;
        }
        Named before = known;
        boolean unconfirmed = currentEpoch < before.epoch();
        if (named.epoch() == UNKNOWN_EPOCH) {
            if (now.is(named.host(), named.port()) && !unconfirmed) {
                return;
            }
            // The sentinel is failing the master over: ask it again once it is done (its
            // announcement of the switch may come first and move the client).
            log.debug("sentinel {} is failing the master over to {}:{}; asking it again", from.address(),
                    named.host(), named.port());
            schedule(from == movedBy ? () -> askUntilAnswered(from, now) : from::resolve, RETRY_MILLIS);
            return;
        }
        if (now.is(named.host(), named.port())) {
            if (named.epoch() >= before.epoch()) {
                known = named;
                currentEpoch = named.epoch();
                movedBy = null;
            } else if (unconfirmed && from == movedBy) {
                moveBack(now, before, "sentinel " + from.address() + ", whose announcement moved the client here,"
                        + " names " + now + " with configuration epoch " + named.epoch());
            }
            return;
        }
        if (named.epoch() > before.epoch()) {
            now.markStale();
            log.info("sentinel {} names {}:{} the master of {} (configuration epoch {}, the client knew {}), not {};"
                    + " following it", from.address(), named.host(), named.port(), uri.getSentinelMasterId(),
                    named.epoch(), before.epoch(), now);
            MasterConnections next = connectTo(named.host(), named.port());
            if (next != null) {
                switchTo(next, named);
            }
            return;
        }
        if (unconfirmed && from == movedBy) {
            moveBack(now, before, "sentinel " + from.address() + ", whose announcement moved the client here,"
                    + " names " + named.host() + ":" + named.port() + " with configuration epoch " + named.epoch());
            return;
        }
        if (unconfirmed && now.readOnly() && named.equals(before)) {
            moveBack(now, before, now + " answers READONLY and sentinel " + from.address() + " names "
                    + named.host() + ":" + named.port() + " with configuration epoch " + named.epoch());
            return;
        }
        log.debug("sentinel {} names {}:{} with configuration epoch {}, not newer than the {} known; ignored",
                from.address(), named.host(), named.port(), named.epoch(), before.epoch());
    }

    /**
     * Follows an announcement without the new master's epoch (its sentinel did not answer in
     * time, or named none): the move is unconfirmed until an answer names that master with an
     * epoch not older than the one known, and the announcing sentinel is asked until it answers.
     */
    private void moveUnconfirmed(Ear from, MasterConnections next, Named before) {
        currentEpoch = UNKNOWN_EPOCH;
        movedBy = from;
        follower.switchTo(next);
        log.info("moved to {} on the announcement of sentinel {}, which did not tell its configuration epoch;"
                + " asking it until it does (the client knew {}:{} with epoch {})", next, from.address(),
                before.host(), before.port(), before.epoch());
        schedule(() -> askUntilAnswered(from, next), RETRY_MILLIS);
    }

    /**
     * Asks {@code from}, whose announcement moved the follower to {@code moved} unconfirmed, until
     * it answers; stops once the move is confirmed or the follower has moved on.
     */
    private void askUntilAnswered(Ear from, MasterConnections moved) {
        if (closed || follower.current() != moved || movedBy != from) {
            return;
        }
        from.ask().whenComplete((named, failure) -> {
            if (failure != null) {
                log.debug("sentinel {} did not name the master yet: {}", from.address(), failure.getMessage());
                schedule(() -> askUntilAnswered(from, moved), RETRY_MILLIS);
            } else {
                execute(() -> consider(from, named));
            }
        });
    }

    /**
     * The unconfirmed move to {@code now} was stale: moves back to the master of the known
     * configuration, {@code to}. If it cannot be reached yet, every sentinel is asked again a
     * moment later ({@link #connectTo}); the move stays unconfirmed, and its sentinel's answer or
     * a sentinel naming {@code to} after a {@code READONLY} tries again.
     */
    private void moveBack(MasterConnections now, Named to, String why) {
        now.markStale();
        log.info("{}: the announcement that moved the client there was stale; moving back to {}:{}, the master of"
                + " configuration epoch {}", why, to.host(), to.port(), to.epoch());
        MasterConnections next = connectTo(to.host(), to.port());
        if (next != null) {
            switchTo(next, to);
        }
    }

    /**
     * Connects to a new master; if it cannot be reached yet, asks the sentinels again a moment
     * later (which moves the client then) and returns null.
     */
    private MasterConnections connectTo(String host, int port) {
        MasterConnections next = follower.connect(host, port);
        if (next == null && !closed) {
            schedule(this::resolveAll, RETRY_MILLIS);
        }
        return next;
    }

    /** Moves the follower to {@code next}, the master of {@code named}'s configuration, whose epoch is known. */
    private void switchTo(MasterConnections next, Named named) {
        if (named.epoch() >= known.epoch()) {
            known = named;
        }
        currentEpoch = named.epoch();
        movedBy = null;
        follower.switchTo(next);
    }

    private void execute(Runnable task) {
        try {
            worker.execute(task);
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
                    schedule(this::connect, RETRY_MILLIS);
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

    /* --------------- asking a sentinel --------------- */

    /** A sentinel's URI as given, bounded by the command timeout. */
    static RedisURI sentinelUri(RedisURI sentinel, Duration timeout) {
        return RedisURI.builder(sentinel).withTimeout(timeout).build();
    }

    /**
     * Asks a sentinel, in one round trip, for the master and the configuration epoch it is the
     * master of, as one pair taken at one moment. {@code SENTINEL MASTER} changes the master's
     * address and the epoch together (a sentinel adopts a newer configuration from its peers in one
     * step, and ends its own failover in one), except while the sentinel itself fails the master
     * over: it then adopts the new epoch when the promoted replica reports itself master, before it
     * moves the address. So outside a failover of its own the answer is that reply's address and
     * epoch; during one, it is the promoted replica's address as {@code SENTINEL
     * GET-MASTER-ADDR-BY-NAME} names it (as Lettuce asks) with the epoch unknown ({@link
     * #UNKNOWN_EPOCH}). Two separate answers, one of each command, cannot be paired: they may
     * straddle the promotion and pair the old master's address with the new epoch, and a client
     * that recorded that pair would take the true switch that follows for a stale one.
     */
    static CompletableFuture<Named> askFor(StatefulRedisSentinelConnection<String, String> connection,
            String masterId) {
        CompletableFuture<SocketAddress> address = connection.async().getMasterAddrByName(masterId).toCompletableFuture();
        CompletableFuture<Map<String, String>> master = connection.async().master(masterId).toCompletableFuture();
        return address.thenCombine(master, (named, state) -> {
            String flags = state.getOrDefault("flags", "");
            String ip = state.get("ip");
            String port = state.get("port");
            String epoch = state.get("config-epoch");
            if (!flags.contains("failover_in_progress") && ip != null && port != null && epoch != null) {
                return new Named(ip, Integer.parseInt(port), Long.parseLong(epoch));
            }
            if (!(named instanceof InetSocketAddress at)) {
                throw new IllegalStateException("the sentinel names no master " + masterId + ": " + named);
            }
            return new Named(at.getHostString(), at.getPort(), UNKNOWN_EPOCH);
        });
    }
}
