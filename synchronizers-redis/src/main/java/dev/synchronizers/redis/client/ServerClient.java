package dev.synchronizers.redis.client;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.topology.ClusterTopology;
import dev.synchronizers.redis.topology.SentinelTopology;
import dev.synchronizers.redis.topology.Topology;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.watchdog.Watchdog;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One {@code RedisSynchronizers} client of a server, a Sentinel set's master or a cluster, as
 * connected and wired: its {@link Topology}, and the {@link Machinery} its synchronizers share
 * (scripts, watchdog, wake-ups, follow-ups, with replica acknowledgement the side connection for
 * {@code WAIT}), with the watchdog ticks and topology callbacks that keep them going. Its
 * {@link #close()} takes it down in order. The facade builds its synchronizers over
 * {@link #machinery()}.
 */
public final class ServerClient {

    private final Topology topology;
    private final Machinery machinery;
    private final AtomicBoolean closed;

    private ServerClient(Topology topology, Machinery machinery, AtomicBoolean closed) {
        this.topology = topology;
        this.machinery = machinery;
        this.closed = closed;
    }

    /**
     * Connects to {@code target} and wires a client over it, with a random client id.
     *
     * @param target a checked target ({@link ServerTarget#forClient})
     * @param options the client's own copy of the settings
     * @param acks the replica acknowledgement asked for, or null for none
     * @param lockCaching whether non-fair locks are cached
     * @throws SynchronizerUnavailableException if Redis cannot be reached within the command
     *     timeout, or with replica acknowledgement its side connection cannot be opened
     * @throws IllegalStateException with replica acknowledgement, if the server refuses {@code WAIT}
     */
    public static ServerClient open(ServerTarget target, ClientOptions options, ReplicaAcks acks, boolean lockCaching) {
        Duration commandTimeout = options.commandTimeout();
        Topology topology = target.connect(options);
        String clientId = UUID.randomUUID().toString();
        Recorder metrics = options.recorder(clientId, false);
        ScriptRegistry scripts = new ScriptRegistry(topology.commands(), metrics, commandTimeout);
        // With replica acknowledgement, every WAIT goes over a side connection of its own: a WAIT
        // blocks the connection it is sent on, and renewals and releases must never wait behind one.
        RedisClusterAsyncCommands<String, String> side = acks == null
                ? null
                : openSideConnection(topology, acks, commandTimeout);
        ScriptRegistry sideScripts = side == null ? null : new ScriptRegistry(side, metrics, commandTimeout);
        long leaseMillis = options.lease().toMillis();
        Watchdog watchdog = new Watchdog(scripts, metrics, topology::batchGroup, new Watchdog.Options(leaseMillis,
                commandTimeout, Duration.ZERO, "synchronizers-watchdog-" + clientId.substring(0, 8)));
        AtomicBoolean closed = new AtomicBoolean();
        if (acks != null) {
            watchdog.acknowledgeRenewals(sideScripts,
                    () -> side.waitForReplication(acks.replicas(), acks.timeout().toMillis()), acks::met);
        }
        Machinery machinery = new Machinery(clientId, options.keyPrefix(), topology.commands(), scripts, watchdog,
                new WakeupDispatcher(topology.pubSub(), commandTimeout, Owner.prefixOf(clientId), metrics),
                options.lostHoldListeners(watchdog.executor(), metrics), metrics, leaseMillis, commandTimeout, acks, side,
                sideScripts, topology::repliesTrusted, topology.switchesMasters(), closed, options.asyncExecutor(),
                lockCaching);
        machinery.servers = topology.describe();
        metrics.clientGauges(machinery.watchdog::registered, machinery.followUps::pending,
                machinery.wakeups::subscribedChannels);
        machinery.watchdog.everyTick(machinery.wakeups::sweep);
        machinery.watchdog.everyTick(machinery.wakeups::checkHealth);
        // A thread that ends inside a cached hold is found as one that ends inside a hold in Redis is.
        machinery.watchdog.everyTick(machinery::checkAbandonedCaches);
        // Follow-ups that failed during an outage (releases, leaves, give-backs) go out as soon as
        // the connection is back, not a tick later: their holds keep others waiting meanwhile.
        topology.onReconnect(machinery.followUps::retryNow);
        // Moved to a new master (a Sentinel switch): every hold is renewed there at once, and one
        // it lacks is reported lost right then; the wake-up transport has woken every waiter.
        // A release sent to the old master after the promotion is sent again, so that a hold the
        // new master still has from before does not keep everyone out until its lease runs out.
        topology.onSwitch(machinery::resendRecentReleases);
        topology.onSwitch(machinery.watchdog::renewNow);
        return new ServerClient(topology, machinery, closed);
    }

    /**
     * Opens the side connection that carries replica acknowledgement's {@code WAIT}s, and fails
     * the build, closing the topology, if it cannot be opened or the server refuses {@code WAIT}
     * (some proxies and managed services do), so that replica acknowledgement is never silently
     * absent.
     */
    private static RedisClusterAsyncCommands<String, String> openSideConnection(Topology topology, ReplicaAcks acks,
            Duration timeout) {
        RedisClusterAsyncCommands<String, String> side;
        try {
            side = topology.openSideConnection();
        } catch (RuntimeException e) {
            topology.close();
            throw new SynchronizerUnavailableException("replicaAcks(" + acks.replicas() + ", "
                    + acks.timeout().toMillis() + " ms) is set, but its connection to " + topology.describe()
                    + " cannot be opened: " + e.getMessage(), e);
        }
        try {
            Replies.await(side.waitForReplication(0, 1), timeout, "probe WAIT");
        } catch (RuntimeException e) {
            topology.close();
            throw new IllegalStateException("replicaAcks(" + acks.replicas() + ", " + acks.timeout().toMillis()
                    + " ms) is set, but " + topology.describe() + " does not accept WAIT: " + e.getMessage(), e);
        }
        return side;
    }

    /** What the client's synchronizers share. */
    public Machinery machinery() {
        return machinery;
    }

    /** The kind of deployment, for the start-up line: standalone, sentinel or cluster. */
    public String topologyKind() {
        if (topology instanceof ClusterTopology) {
            return "cluster";
        }
        return topology instanceof SentinelTopology || topology.describe().startsWith("redis-sentinel://")
                ? "sentinel" : "standalone";
    }

    /** What the client connected to, for the start-up line: the servers as the topology names them. */
    public String describeTopology() {
        return topology.describe();
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Takes the client down, once; see {@code RedisSynchronizers.close()} for the contract. Later
     * calls do nothing.
     */
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        machinery.wakePauses();
        machinery.wakeups.close();
        // The waiters just woken fail; those in a line in Redis leave it while the connections are open.
        machinery.awaitAcquisitionsEnded();
        // Locks cached and idle are given back, not left to keep other clients out for a lease.
        machinery.giveBackCaches();
        machinery.watchdog.close();
        // Handles still held are no longer renewed: their lost() stages complete, ABANDONED.
        machinery.lossSignals.close();
        machinery.metrics.close();
        machinery.closeAsync();
        topology.close();
    }
}
