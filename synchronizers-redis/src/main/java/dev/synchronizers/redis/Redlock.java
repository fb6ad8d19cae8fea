package dev.synchronizers.redis;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHoldListener;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.ClientOptions;
import dev.synchronizers.redis.client.LibraryVersion;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.lock.RedisLock;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.quorum.QuorumLockBackend;
import dev.synchronizers.redis.quorum.QuorumNodes;
import dev.synchronizers.redis.quorum.RedlockNode;
import dev.synchronizers.redis.support.EventThread;
import dev.synchronizers.redis.support.LettuceLine;
import dev.synchronizers.redis.wakeup.FanOutTransport;
import dev.synchronizers.redis.wakeup.PubSubTransport;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client of a quorum lock over N independent Redis masters (Redlock): a lock is held while a
 * majority of the nodes, {@code N/2 + 1}, hold it, so it keeps working while a minority of the
 * nodes is down, paused or unreachable. The nodes are standalone servers with no replication
 * between them; each keeps its own copy of every lock.
 *
 * <pre>{@code
 * Redlock redlock = Redlock.create("redis://a:6379", "redis://b:6379", "redis://c:6379");
 * DistributedLock lock = redlock.lock("order-42");
 * lock.lock();
 * try {
 *     store.write(order, lock.fencingToken());
 * } finally {
 *     lock.unlock();
 * }
 * }</pre>
 *
 * <p>Each {@link #lock(String)} has the whole {@link DistributedLock} contract: reentrant,
 * {@code tryLock} with and without a wait, fixed leases, a watchdog that renews leases on every
 * node and reports a hold lost when fewer than a quorum of nodes still have it, fencing tokens, and
 * {@code forceUnlock()}. How an acquisition works, what it costs, and when the guarantees fail (a
 * node restarted without its data, clocks that jump, a holder paused past its validity) are in the
 * project's topologies document; the fencing-token argument is in its semantics document.
 *
 * <ul>
 *   <li><b>Acquire</b>: the lock script runs on every node at once. With grants from a quorum, the
 *       acquirer takes the largest fencing token they proposed and writes it back to every node
 *       that granted or did not answer (a second round trip); it holds the lock if a quorum confirm
 *       that they still hold the grant under that token and both round trips took less than the
 *       lease minus the drift allowance ({@code lease × clockDriftFactor + 2 ms}). Otherwise it gives back what it
 *       got, on every node including those whose reply did not come, and waits for a release (a
 *       wake-up from any node) or a short random back-off.
 *   <li><b>Renew</b>: one watchdog per node renews every hold of this client on that node each
 *       third of the lease, in one batched call, and takes a hold back on a node that lost it
 *       (restarted) where nobody else took the lock since.
 *   <li><b>Release</b>: on every node at once; a node that is down is skipped (and retried while
 *       the hold's lease lasts), as long as a quorum answers.
 * </ul>
 *
 * <p>Fewer than a quorum of nodes answering makes any call throw
 * {@link SynchronizerUnavailableException} within the command timeout, naming how many answered.
 *
 * <p>Thread-safe; create one per JVM and share it, and {@link #close()} it when done. A quorum of
 * the nodes must be reachable when it is built; the others are connected as soon as they answer.
 * Clients that share lock names must use the same nodes, key prefix and lease.
 */
public final class Redlock implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);

    /** The fewest nodes: with two, a quorum is both, and one failure stops every lock. */
    public static final int MIN_NODES = 3;

    final String clientId;
    final List<RedlockNode> nodes;
    final int quorum;
    /** The nodes as the locks use them. */
    private final QuorumNodes quorumNodes;
    private final long leaseMillis;
    final double clockDriftFactor;
    private final Duration timeout;
    private final WakeupDispatcher wakeups;
    private final Recorder metrics;
    /** What this client's locks share with every other client's synchronizers. */
    private final ClientContext context;
    /**
     * The client's own thread: lost-hold listeners without an executor, and the wake-up chores of
     * every tick. Not a node's watchdog thread, which waits out its node's replies in each tick: a
     * stalled node would delay every report and chore behind it.
     */
    private final EventThread events;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LoadingCache<String, RedisLock> locks;

    private Redlock(Builder builder, List<RedisURI> uris) {
        ClientOptions options = builder.options;
        this.clientId = UUID.randomUUID().toString();
        this.leaseMillis = options.lease().toMillis();
        this.clockDriftFactor = builder.clockDriftFactor;
        this.timeout = options.commandTimeout();
        this.quorum = QuorumNodes.quorumOf(uris.size());
        this.metrics = options.recorder(clientId, true);
        Duration drift = Duration.ofMillis(QuorumNodes.driftMillis(leaseMillis, clockDriftFactor));
        List<RedlockNode> built = new ArrayList<>();
        for (int i = 0; i < uris.size(); i++) {
            built.add(new RedlockNode(i, uris.get(i), options.clientResources(), timeout, leaseMillis, drift, clientId,
                    metrics));
        }
        int reachable = 0;
        RuntimeException first = null;
        for (RedlockNode node : built) {
            RuntimeException failure = node.connect();
            if (failure == null) {
                reachable++;
            } else {
                first = first == null ? failure : first;
                log.warn("Redlock node {} is unreachable; its watchdog connects it when it is back: {}",
                        node.describe(), failure.getMessage());
            }
        }
        if (reachable < quorum) {
            for (RedlockNode node : built) {
                node.watchdog().close();
                node.close();
            }
            metrics.close();
            throw new SynchronizerUnavailableException("Redlock: only " + reachable + " of " + uris.size()
                    + " nodes reachable within " + timeout.toMillis() + " ms; a quorum is " + quorum + ": "
                    + first.getMessage(), first);
        }
        this.nodes = List.copyOf(built);
        this.quorumNodes = new QuorumNodes(nodes, clockDriftFactor);
        this.wakeups = new WakeupDispatcher(new FanOutTransport(nodes.stream().<PubSubTransport>map(RedlockNode::transport)
                .toList()), timeout, Owner.prefixOf(clientId), metrics);
        this.events = new EventThread(eventsThreadName());
        long tickMillis = Math.max(1, leaseMillis / 3);
        events.scheduler().scheduleWithFixedDelay(this::chores, tickMillis, tickMillis, TimeUnit.MILLISECONDS);
        this.context = new ClientContext("Redlock", clientId, options.keyPrefix(), wakeups,
                options.lostHoldListeners(events.reports(), metrics), metrics, leaseMillis, timeout, closed,
                options.asyncExecutor());
        metrics.clientGauges(this::watchdogEntries, this::pendingRetries, this::subscribedChannels);
        this.locks = Caffeine.newBuilder().weakValues()
                .build(name -> new RedisLock(new QuorumLockBackend(name, quorumNodes, context), null));
        log.info("synchronizers {}: Redlock client {} connected to {} of {} nodes (quorum {}) {}, key prefix '{}'",
                LibraryVersion.VERSION, clientId, reachable, nodes.size(), quorum,
                nodes.stream().map(RedlockNode::describe).toList(), options.keyPrefix());
    }

    /**
     * Creates a Redlock client of the nodes at {@code uris}, with the defaults: lease 30 s, clock
     * drift factor 0.01, command timeout 5 s.
     *
     * @param uris one {@code redis://} URI per node, at least {@value #MIN_NODES}; an odd number
     *     is recommended (an even one tolerates no more failures than one node fewer)
     * @return the connected client
     * @throws NullPointerException if {@code uris} or one of them is null
     * @throws IllegalArgumentException if fewer than {@value #MIN_NODES} URIs are given, one is
     *     given twice, or one is not a valid {@code redis://} or {@code rediss://} URI
     * @throws SynchronizerUnavailableException if fewer than a quorum of the nodes can be reached
     *     within the command timeout
     */
    public static Redlock create(String... uris) {
        return builder().nodes(uris).build();
    }

    /**
     * Returns a builder of a Redlock client.
     *
     * @return a new builder with the defaults
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the reentrant, non-fair quorum lock called {@code name}. The same name returns the
     * same lock object while it is in use. Makes no network call.
     *
     * @param name the lock's name, non-empty
     * @return the lock
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if it is empty
     * @throws IllegalStateException if this client is closed
     */
    public DistributedLock lock(String name) {
        Objects.requireNonNull(name, "name must not be null");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("name must not be empty");
        }
        context.checkOpen();
        return locks.get(name);
    }

    /**
     * Returns how many nodes must hold a lock for it to be held: {@code N/2 + 1}.
     *
     * @return the quorum
     */
    public int quorum() {
        return quorum;
    }

    /**
     * Returns the number of nodes.
     *
     * @return N
     */
    public int nodeCount() {
        return nodes.size();
    }

    /**
     * Returns this client's id, the first part of its owners' names in Redis and of its holders in
     * snapshots.
     *
     * @return a random UUID, fixed for the client's life
     */
    public String clientId() {
        return clientId;
    }

    /**
     * Closes the client: the watchdogs stop, this client's waiters are woken and fail with
     * {@link IllegalStateException} (also one whose attempt is on the nodes when the connections
     * close: what it may have been granted expires with its lease), and holds still open expire
     * with their lease on each node; the {@code lost()} stage of each handle still held completes
     * with a {@link dev.synchronizers.LostHold.Cause#ABANDONED} report (the listeners are not told).
     * Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        wakeups.close();
        for (RedlockNode node : nodes) {
            node.watchdog().close();
        }
        for (RedlockNode node : nodes) {
            node.close();
        }
        // Reports already queued are delivered, not dropped; at most a timeout is waited for them.
        events.close(timeout);
        // Handles still held are no longer renewed: their lost() stages complete, ABANDONED.
        context.lossSignals.close();
        context.closeAsync();
        metrics.close();
    }

    private String eventsThreadName() {
        return "synchronizers-redlock-" + clientId.substring(0, 8) + "-events";
    }

    /** The wake-up chores of a tick: quick, and they never wait for a node. */
    private void chores() {
        try {
            wakeups.sweep();
            wakeups.checkHealth();
        } catch (RuntimeException e) {
            // A chore that threw would cancel every later run of the schedule.
            log.error("Redlock wake-up chores failed; they run again at the next tick", e);
        }
    }

    @Override
    public String toString() {
        return "Redlock[" + clientId + ", " + nodes.size() + " nodes, quorum " + quorum + "]";
    }

    /* --------------- shared with the locks --------------- */

    /** How many lock objects holds keep reachable, for leak checks. */
    int pinnedCount() {
        return context.pinnedCount();
    }

    /** Holds the nodes' watchdogs track, summed over the nodes: one lease per node per hold. */
    int watchdogEntries() {
        return nodes.stream().mapToInt(node -> node.watchdog().registered()).sum();
    }

    /** Follow-ups (releases, give-backs) the nodes' watchdogs still retry. */
    int pendingRetries() {
        return nodes.stream().mapToInt(node -> node.watchdog().followUps().pending()).sum();
    }

    /** Channels with local waiters. */
    int subscribedChannels() {
        return wakeups.subscribedChannels();
    }

    /** Runs one watchdog tick of every node now, and the wake-up chores, for tests. */
    void renewNow() {
        nodes.forEach(node -> node.watchdog().tick());
        chores();
    }


    /** A builder of a {@link Redlock} client. Not thread-safe. */
    public static final class Builder {
        private List<String> uris;
        /** The settings shared with {@link RedisSynchronizers.Builder}. */
        private final ClientOptions options = new ClientOptions();
        private double clockDriftFactor = 0.01;

        private Builder() {
        }

        /**
         * Sets the nodes: independent Redis masters, not replicas of one another.
         *
         * @param uris one {@code redis://} or {@code rediss://} URI per node, at least
         *     {@value #MIN_NODES}, each once
         * @return this builder
         * @throws NullPointerException if {@code uris} or one of them is null
         * @throws IllegalArgumentException if fewer than {@value #MIN_NODES} are given, one is given
         *     twice, or one is not a valid {@code redis://} or {@code rediss://} URI
         */
        public Builder nodes(String... uris) {
            Objects.requireNonNull(uris, "nodes must not be null");
            if (uris.length < MIN_NODES) {
                throw new IllegalArgumentException("nodes: a Redlock needs at least " + MIN_NODES + " nodes, got "
                        + uris.length);
            }
            Set<String> seen = new HashSet<>();
            for (String uri : uris) {
                Objects.requireNonNull(uri, "nodes must not contain null");
                RedisURI parsed;
                parsed = ClientOptions.parseChecked("nodes", uri, ClientOptions.SERVER_SCHEMES);
                if (!parsed.getSentinels().isEmpty() || parsed.getSocket() != null) {
                    throw new IllegalArgumentException("nodes: each node must be a redis:// or rediss:// server: " + uri);
                }
                if (!seen.add(parsed.getHost() + ":" + parsed.getPort())) {
                    throw new IllegalArgumentException("nodes: " + parsed.getHost() + ":" + parsed.getPort()
                            + " is given twice");
                }
            }
            this.uris = List.of(uris);
            return this;
        }

        /**
         * Sets the prefix of every key and channel. Clients coordinate only if they use the same prefix.
         *
         * @param keyPrefix the prefix, non-empty, without '{' or '}'; default {@code "sync"}
         * @return this builder
         * @throws NullPointerException if {@code keyPrefix} is null
         * @throws IllegalArgumentException if it is empty or contains '{' or '}'
         */
        public Builder keyPrefix(String keyPrefix) {
            options.keyPrefix(keyPrefix);
            return this;
        }

        /**
         * Sets the lease of holds taken without a lease time, renewed on every node every third of
         * it. It bounds how long a dead holder keeps the lock, and every acquisition must finish
         * within it (less the drift allowance). A renewal waits for its reply at
         * most the command timeout or a sixth of the lease, whichever is shorter, so that a hold whose
         * renewals get no answer is reported lost ({@code UNRENEWABLE}) at least that long before it
         * can run out in Redis, whatever the command timeout: every lease this accepts keeps that
         * promise.
         *
         * @param lease the lease, at least 30 ms; default 30 s
         * @return this builder
         * @throws NullPointerException if {@code lease} is null
         * @throws IllegalArgumentException if it is shorter than 30 ms
         */
        public Builder lease(Duration lease) {
            options.lease(lease);
            return this;
        }

        /**
         * Sets how much faster than this JVM's clock a node's clock may run, as a fraction: a hold
         * counts as valid for {@code lease × (1 - clockDriftFactor) - 2 ms} after its acquisition
         * was sent (and after each renewal), never longer.
         *
         * @param clockDriftFactor the factor, at least 0 and below 0.5; default 0.01
         * @return this builder
         * @throws IllegalArgumentException if it is outside that range or not a number
         */
        public Builder clockDriftFactor(double clockDriftFactor) {
            if (!(clockDriftFactor >= 0 && clockDriftFactor < 0.5)) {
                throw new IllegalArgumentException("clockDriftFactor must be >= 0 and < 0.5: " + clockDriftFactor);
            }
            this.clockDriftFactor = clockDriftFactor;
            return this;
        }

        /**
         * Sets how long any call waits for the nodes (and for each connection at start-up) before
         * it throws {@link SynchronizerUnavailableException}.
         *
         * <p>The watchdog's renewals wait for their replies this long or a sixth of the lease,
         * whichever is shorter (see {@code lease}), so a timeout longer than the lease is accepted
         * and still lets the watchdog report a hold it cannot renew before the hold can run out.
         *
         * @param commandTimeout the timeout, positive; default 5 s
         * @return this builder
         * @throws NullPointerException if {@code commandTimeout} is null
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder commandTimeout(Duration commandTimeout) {
            options.commandTimeout(commandTimeout);
            return this;
        }

        /**
         * Adds a listener told of every hold this client loses, run on the client's own events
         * thread ({@code synchronizers-redlock-<client>-events}), which no node's replies hold up:
         * it must be quick and must not block, as it delays the reports after it.
         *
         * @param listener the listener
         * @return this builder
         * @throws NullPointerException if {@code listener} is null
         */
        public Builder lostHoldListener(LostHoldListener listener) {
            options.lostHoldListener(listener);
            return this;
        }

        /**
         * Shares {@code resources} (Lettuce's event loops, timers and DNS resolver) with the
         * Lettuce client of every node, instead of each node's client creating resources of its
         * own: one set of Netty threads for the whole application, e.g. the {@code ClientResources}
         * bean that Spring Boot makes. Only the resources are shared: each node's client keeps this
         * library's client options, and {@link Redlock#close()} closes the clients but never shuts
         * the resources down; their owner does, after closing this client. By default, each node's
         * client creates and shuts down its own.
         *
         * @param resources the resources to share, not shut down while this client is open
         * @return this builder
         * @throws NullPointerException if {@code resources} is null
         */
        public Builder clientResources(ClientResources resources) {
            options.clientResources(resources);
            return this;
        }

        /**
         * Sets where this client's async stages complete ({@code LockHandle.releaseAsync()} and the
         * like). By default, a pool of the client's own: at most two daemon threads, which end when
         * idle and are shut down by {@link Redlock#close()}. Stages never complete on a network
         * (Netty event-loop) thread, whichever executor runs them.
         *
         * @param executor runs the completions; must not run them on the caller's thread if callers
         *     may hold locks meanwhile
         * @return this builder
         * @throws NullPointerException if {@code executor} is null
         */
        public Builder asyncExecutor(Executor executor) {
            options.asyncExecutor(executor);
            return this;
        }

        /**
         * Adds a listener told of every hold this client loses, run on {@code executor}.
         *
         * @param listener the listener
         * @param executor where the listener runs
         * @return this builder
         * @throws NullPointerException if either is null
         */
        public Builder lostHoldListener(LostHoldListener listener, Executor executor) {
            options.lostHoldListener(listener, executor);
            return this;
        }

        /**
         * Records this client's metrics in {@code registry}, as
         * {@link RedisSynchronizers.Builder#meterRegistry} does (kind {@code redlock}; the
         * watchdog and script meters add up over the nodes).
         *
         * @param registry where to record
         * @return this builder
         * @throws NullPointerException if {@code registry} is null
         */
        public Builder meterRegistry(MeterRegistry registry) {
            options.meterRegistry(registry);
            return this;
        }

        /**
         * Adds a bounded {@code name} tag to the per-lock meters, as
         * {@link RedisSynchronizers.Builder#meterNameTag} does.
         *
         * @param nameTag maps a lock's name to a bounded tag value
         * @return this builder
         * @throws NullPointerException if {@code nameTag} is null
         */
        public Builder meterNameTag(Function<String, String> nameTag) {
            options.meterNameTag(nameTag);
            return this;
        }

        /**
         * Connects to the nodes and returns the client.
         *
         * @return the connected client
         * @throws IllegalStateException if no nodes were given, the drift allowance leaves no
         *     validity ({@code lease × clockDriftFactor + 2 ms} at least half the lease), or a
         *     {@link #meterNameTag} is set without a {@link #meterRegistry}, or if the Lettuce on the
         *     class path is older than 6.6.0 (the message names the version found)
         * @throws SynchronizerUnavailableException if fewer than a quorum of the nodes can be reached
         *     within the command timeout (the message says how many could); nothing stays connected
         *     then. Nodes that cannot be reached while a quorum can are connected later, by their
         *     watchdogs, as soon as they answer.
         */
        public Redlock build() {
            LettuceLine.check();
            if (uris == null) {
                throw new IllegalStateException("no nodes: call nodes(...)");
            }
            long leaseMillis = options.lease().toMillis();
            if (QuorumNodes.driftMillis(leaseMillis, clockDriftFactor) >= leaseMillis / 2) {
                throw new IllegalStateException("the drift allowance (lease × clockDriftFactor + 2 ms) must be under half"
                        + " the lease: lease " + leaseMillis + " ms, clockDriftFactor " + clockDriftFactor);
            }
            options.checkMeters();
            return new Redlock(this, uris.stream().map(options::parseUri).toList());
        }
    }
}
