package dev.synchronizers.redis;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHoldListener;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.client.ClientOptions;
import dev.synchronizers.redis.client.LibraryVersion;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.client.ReplicaAcks;
import dev.synchronizers.redis.client.ServerClient;
import dev.synchronizers.redis.client.ServerTarget;
import dev.synchronizers.redis.latch.RedisCountDownLatch;
import dev.synchronizers.redis.lock.LockPolicy;
import dev.synchronizers.redis.lock.RedisLock;
import dev.synchronizers.redis.lock.RedisReadWriteLock;
import dev.synchronizers.redis.semaphore.RedisSemaphore;
import dev.synchronizers.redis.support.InstancesByName;
import dev.synchronizers.redis.support.LettuceLine;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entry point: a {@link Synchronizers} whose state lives in Redis: one standalone server, the
 * master a Sentinel set names ({@code redis-sentinel://} URIs), or a Redis Cluster
 * ({@link Builder#cluster(String...)}). Every synchronizer works the same on each; what each
 * deployment guarantees is in the project's topologies document.
 *
 * <pre> {@code
 * try (Synchronizers synchronizers = RedisSynchronizers.create("redis://127.0.0.1:6379")) {
 *     DistributedLock lock = synchronizers.lock("nightly-report");
 *     if (lock.tryLock()) {
 *         try { runReport(); } finally { lock.unlock(); }
 *     }
 * }}</pre>
 *
 * <p>One instance is one client with a random client id, one command connection shared by all
 * threads (on a cluster, one per node), one Pub/Sub connection for wake-ups (on a cluster, one per
 * master) and one watchdog thread. Create it once per JVM and share it. Creating it connects to
 * Redis; it throws {@link SynchronizerUnavailableException} within the command timeout if Redis
 * cannot be reached.
 *
 * <p>Defaults: key prefix {@code "sync"}, watchdog lease 30 s (renewed every 10 s), command
 * timeout 5 s. When it creates the Lettuce client itself, it configures it so that commands are
 * never replayed after a reconnect (a replayed acquire could take a lock nobody knows it holds),
 * a cluster's topology is refreshed every 5 s and on redirections, and its sockets use TCP
 * keep-alive; a client
 * passed to {@link Builder#client(RedisClient, RedisURI)} or {@link Builder#client(RedisClusterClient)}
 * is used as configured by its owner, and every wait is still bounded by the command timeout. Either way, the Pub/Sub connection is checked with a PING
 * every watchdog period: one that does not answer within the command timeout (a half-open socket,
 * say after a NAT forgot it) is closed and made again, and the waiters are woken to try again.
 */
public final class RedisSynchronizers implements Synchronizers {

    private static final Logger log = LoggerFactory.getLogger(RedisSynchronizers.class);

    /** The connection and the machinery of this client: see {@link ServerClient}. */
    private final ServerClient client;
    private final Machinery machinery;
    /** One object per name while anyone uses it; holds keep theirs reachable. */
    private final InstancesByName<RedisLock> locks;
    private final InstancesByName<RedisLock> fairLocks;
    private final InstancesByName<RedisReadWriteLock> readWriteLocks;
    private final InstancesByName<RedisSemaphore> semaphores;
    private final InstancesByName<RedisCountDownLatch> latches;

    private RedisSynchronizers(ServerClient client) {
        this.client = client;
        Machinery machinery = client.machinery();
        this.machinery = machinery;
        this.locks = new InstancesByName<>(name -> RedisLock.onServer(name, LockPolicy.NONFAIR, machinery), machinery::checkOpen);
        this.fairLocks = new InstancesByName<>(name -> RedisLock.onServer(name, LockPolicy.FAIR, machinery), machinery::checkOpen);
        this.readWriteLocks = new InstancesByName<>(name -> new RedisReadWriteLock(name, machinery), machinery::checkOpen);
        this.semaphores = new InstancesByName<>(name -> new RedisSemaphore(name, machinery), machinery::checkOpen);
        this.latches = new InstancesByName<>(name -> new RedisCountDownLatch(name, machinery), machinery::checkOpen);
        log.info("synchronizers {}: client {} connected to {} {}, key prefix '{}'", LibraryVersion.VERSION,
                machinery.clientId, client.topologyKind(), client.describeTopology(), machinery.keyPrefix);
    }

    /**
     * Creates a client of the Redis server at {@code uri} with the defaults: a standalone server, or
     * the master a Sentinel set names.
     *
     * @param uri a Redis URI, e.g. {@code "redis://127.0.0.1:6379"}, {@code "redis://:password@host:6379/0"}
     *     or {@code "redis-sentinel://h1:26379,h2:26379,h3:26379/0#mymaster"}
     * @return the connected client
     * @throws NullPointerException if {@code uri} is null
     * @throws IllegalArgumentException if {@code uri} is not a valid Redis URI
     * @throws SynchronizerUnavailableException if Redis cannot be reached within the command timeout
     */
    public static RedisSynchronizers create(String uri) {
        return builder().uri(uri).build();
    }

    /**
     * Returns a builder with the defaults: key prefix {@code "sync"}, lease 30 s, command timeout 5 s,
     * no listeners.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public DistributedLock lock(String name) {
        return locks.get(name);
    }

    @Override
    public DistributedLock fairLock(String name) {
        return fairLocks.get(name);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        return readWriteLocks.get(name);
    }

    @Override
    public DistributedSemaphore semaphore(String name) {
        return semaphores.get(name);
    }

    @Override
    public DistributedCountDownLatch countDownLatch(String name) {
        return latches.get(name);
    }

    /**
     * Returns this client's random id, the first half of every owner string it writes to Redis.
     * It is the id that {@link dev.synchronizers.LockSnapshot.Holder#clientId()} and
     * {@link dev.synchronizers.SemaphoreSnapshot.PermitHolder#clientId()} show for this client's
     * holds, and the one the start-up log line names. No network call.
     *
     * @return the client id
     */
    @Override
    public String clientId() {
        return machinery.clientId;
    }

    /**
     * Wakes this client's waiters, which fail with {@link IllegalStateException}; waits for those
     * with a place in a line in Redis (a fair lock's, a semaphore's) to leave it, so that nothing
     * released later is handed to a waiter that is gone, at most the command timeout (an
     * acquisition whose command is in flight and unanswered then fails as the connection closes
     * under it); gives back the locks it caches idle; delivers every lost-hold report that a reply
     * in flight can still produce (a cached lock's give-back found gone, or not answered within
     * the command timeout: reported {@code UNRENEWABLE}), on the listeners' executors, before it
     * returns; stops the watchdog; and closes the connections, and the Lettuce client if this
     * instance created it. Holds still held are not released; they expire with their lease, and the
     * {@code lost()} stage of each handle still held completes with a
     * {@link dev.synchronizers.LostHold.Cause#ABANDONED} report (the listeners are not told). Takes
     * about two command timeouts at most when Redis does not answer, more only by what a listener
     * on the watchdog thread takes. Idempotent.
     */
    @Override
    public void close() {
        client.close();
    }

    /** The client's machinery, for the tests' view of its internals (RedisInternals); nothing else calls it. */
    Machinery machinery() {
        return machinery;
    }

    @Override
    public String toString() {
        return "RedisSynchronizers[client " + machinery.clientId + ", prefix " + machinery.keyPrefix
                + (client.isClosed() ? ", closed" : "") + "]";
    }

    /**
     * Configures a {@link RedisSynchronizers}. Not thread-safe; {@link #build()} may be called more
     * than once, each call creating an independent client.
     */
    public static final class Builder {
        /** The target: a server or Sentinel URI, cluster seeds, or a caller's Lettuce client; the last call sets it. */
        private final ServerTarget target = new ServerTarget();
        /** The settings shared with {@link Redlock.Builder}; build() gives each client a copy. */
        private final ClientOptions options = new ClientOptions();
        private ReplicaAcks replicaAcks;
        private boolean lockCaching;

        private Builder() {
        }

        /**
         * Sets the Redis server to connect to: a standalone server ({@code redis://},
         * {@code rediss://}) or the master a Sentinel set names ({@code
         * redis-sentinel://h1:26379,h2:26379/0#mymaster}). Replaces any target set before.
         *
         * @param uri a Redis URI, e.g. {@code "redis://127.0.0.1:6379"}
         * @return this builder
         * @throws NullPointerException if {@code uri} is null
         * @throws IllegalArgumentException if {@code uri} is not a valid Redis URI, e.g. has no
         *     scheme: the message lists the schemes accepted
         */
        public Builder uri(String uri) {
            target.uri(uri);
            return this;
        }

        /**
         * Connects to a Redis Cluster, finding its nodes from {@code seedUris}: any one that
         * answers is enough, and the client learns every master and replica from it. Every
         * synchronizer works on a cluster exactly as on one server; see the project's topologies
         * document for what a cluster guarantees. Replaces any target set before.
         *
         * @param seedUris one or more nodes of the cluster, e.g. {@code "redis://10.0.0.1:7000"}
         * @return this builder
         * @throws NullPointerException if {@code seedUris} or one of them is null
         * @throws IllegalArgumentException if there is none, or one is not a valid Redis URI
         */
        public Builder cluster(String... seedUris) {
            target.cluster(seedUris);
            return this;
        }

        /**
         * Uses an existing Lettuce cluster client, configured and owned by the caller.
         * {@link RedisSynchronizers#close()} closes the connections it opened but not the client.
         * The client's own options apply: for failovers to be noticed promptly, enable its
         * periodic and adaptive topology refresh. Replaces any target set before.
         *
         * @param client the Lettuce cluster client
         * @return this builder
         * @throws NullPointerException if {@code client} is null
         */
        public Builder client(RedisClusterClient client) {
            target.client(client);
            return this;
        }

        /**
         * Uses an existing Lettuce client, configured and owned by the caller, to connect to
         * {@code uri}. {@link RedisSynchronizers#close()} closes the connections it opened but not
         * the client.
         *
         * @param client the Lettuce client
         * @param uri the server to connect to
         * @return this builder
         * @throws NullPointerException if either is null
         */
        public Builder client(RedisClient client, RedisURI uri) {
            target.client(client, uri);
            return this;
        }

        /**
         * Sets the TLS options of the Lettuce client this builder creates, for a {@code rediss://}
         * URI (or a Cluster's {@code rediss://} seeds): for example the certificate authority to
         * trust, {@code SslOptions.builder().trustManager(caFile).build()}, where the JVM's default
         * trust store does not hold it. The client keeps this library's other options. Ignored when
         * a client is passed to {@link #client(RedisClient, RedisURI)} or
         * {@link #client(RedisClusterClient)}, which has its own options. By default, Lettuce's
         * defaults: the JVM's trust store.
         *
         * @param ssl the TLS options
         * @return this builder
         * @throws NullPointerException if {@code ssl} is null
         */
        public Builder sslOptions(SslOptions ssl) {
            target.sslOptions(ssl);
            return this;
        }

        /**
         * Shares {@code resources} (Lettuce's event loops, timers and DNS resolver) with the Lettuce
         * client this builder creates, instead of the client creating resources of its own: one set
         * of Netty threads for the whole application, e.g. the {@code ClientResources} bean that
         * Spring Boot makes. Only the resources are shared: the client keeps this library's client
         * options (no command replay after a reconnect, TCP keep-alive, cluster topology refresh),
         * and {@link RedisSynchronizers#close()} closes the client but never shuts the resources
         * down; their owner does, after closing this client. Ignored when a client is passed to
         * {@link #client(RedisClient, RedisURI)} or {@link #client(RedisClusterClient)}, which
         * already has its resources. By default, the client creates and shuts down its own.
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
         * Sets the prefix of every key and channel, so that several applications can share one Redis
         * without their names meeting. Clients coordinate only if they use the same prefix.
         *
         * @param keyPrefix the prefix, non-empty; default {@code "sync"}
         * @return this builder
         * @throws NullPointerException if {@code keyPrefix} is null
         * @throws IllegalArgumentException if it is empty or contains '{' or '}' (they would break
         *     the hash tags that keep a synchronizer's keys in one Cluster slot)
         */
        public Builder keyPrefix(String keyPrefix) {
            options.keyPrefix(keyPrefix);
            return this;
        }

        /**
         * Sets the lease of holds taken without a lease time. The watchdog renews them every third
         * of it; a process that dies holding one frees it at most this long after its last renewal. A renewal waits for its reply at
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
         * Sets how long any single call waits for Redis (and for the connection at start-up)
         * before it throws {@link SynchronizerUnavailableException}.
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
         * Adds a listener told of every hold this client loses, run on the client's watchdog
         * thread: it must be quick and must not block. While it runs, no hold of this client is
         * renewed; one that blocks for a lease makes every other hold of the client lost. Every
         * report learned before {@link RedisSynchronizers#close()} returns is delivered, none
         * dropped by the shutdown: {@code close()} waits for the reports queued for this thread, at
         * most the command timeout; behind a listener slower than that, the rest run on the
         * watchdog thread after {@code close()} returns, and a report learned after the watchdog
         * stopped runs on the thread that learned it.
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
         * Sets where this client's async stages complete ({@code LockHandle.releaseAsync()} and the
         * like). By default, a pool of the client's own: at most two daemon threads, which end when
         * idle and are shut down by {@link RedisSynchronizers#close()}. Stages never complete on a
         * network (Netty event-loop) thread, whichever executor runs them.
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
         * Records this client's metrics in {@code registry}: waits, holds, lost holds, the
         * watchdog, wake-ups, script calls and follow-ups, as listed in the project's
         * observability document. Needs {@code io.micrometer:micrometer-core} on the classpath
         * (an optional dependency: without this call, Micrometer is never loaded). Recording
         * costs a few increments per operation and no network call. Meters carry no synchronizer
         * name unless {@link #meterNameTag} is set; several clients may share one registry, and
         * their meters add up.
         *
         * @param registry where to record, e.g. the application's {@code PrometheusMeterRegistry}
         * @return this builder
         * @throws NullPointerException if {@code registry} is null
         */
        public Builder meterRegistry(MeterRegistry registry) {
            options.meterRegistry(registry);
            return this;
        }

        /**
         * Adds a {@code name} tag to the per-synchronizer meters, whose value is
         * {@code nameTag.apply(name)}. Names are unbounded (a lock per order id), and every
         * distinct tag value is a time series kept for the life of the registry, so the function
         * must map names onto a small fixed set, e.g. {@code name -> name.replaceAll("-\\d+$", "")}
         * turning {@code "charge-42"} into {@code "charge"}. Without it, meters are tagged by kind
         * only. Applied once per synchronizer object and once per lost hold; it must be quick,
         * must not block, and must not return null (the call that met the null throws
         * {@link NullPointerException}).
         *
         * @param nameTag maps a synchronizer's name to a bounded tag value
         * @return this builder
         * @throws NullPointerException if {@code nameTag} is null
         */
        public Builder meterNameTag(Function<String, String> nameTag) {
            options.meterNameTag(nameTag);
            return this;
        }

        /**
         * Asks every hold a caller gets (by an acquisition or a hand-over) to be acknowledged by
         * at least {@code replicas} replicas. The client opens a side connection for this: once a
         * call has created the hold, the hold is written once more (its renewal) on that connection,
         * followed there by {@code WAIT replicas timeout} in the same round trip. {@code WAIT} never
         * goes over the shared command connection, so renewals and releases never wait behind one.
         * An acquisition that fewer replicas acknowledged is not acquired: it is given back at once
         * and tried again within the caller's wait, after a pause that starts at {@code timeout}
         * and doubles up to the larger of {@code timeout} and a third of the lease
         * ({@code tryLock()} and {@code tryAcquire()} without a timeout return false;
         * {@code lock()} keeps trying). So every hold a caller gets was on that many replicas when
         * it got it, and a failover to one of them keeps it. After each watchdog tick, one of its
         * renewals is checked the same way in the background. A check that falls short is reported
         * (a WARN log and the {@code synchronizers.replica.acks.short} meter), since a renewal
         * cannot be undone.
         *
         * <p>Costs: one more round trip and script call per acquisition, and the wait for the
         * replicas' acknowledgement, up to {@code timeout}. The side connection's {@code WAIT}s
         * queue behind each other: with fewer replicas reachable than asked, each acquisition waits
         * {@code timeout} for every acquisition ahead of it, and then gets nothing. {@code WAIT}
         * narrows the window in which a failover loses a hold; it does not close it (see the
         * topologies document). Off by default. {@link #build()} fails if the server refuses
         * {@code WAIT}, and on a Redis Cluster.
         *
         * @param replicas how many replicas must acknowledge, at least 1
         * @param timeout how long {@code WAIT} may block, positive and shorter than the command timeout
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalArgumentException if {@code replicas} is below 1 or {@code timeout} is not positive
         */
        public Builder replicaAcks(int replicas, Duration timeout) {
            this.replicaAcks = ReplicaAcks.checked(replicas, timeout);
            return this;
        }

        /**
         * Lets the client keep a non-fair lock ({@link Synchronizers#lock(String)}) that it released
         * while nobody else wants it, so that its next acquisition of that lock, by any of its
         * threads, is taken locally, without a round trip. Another client that wants the lock asks
         * for it back; this client gives it back at once if none of its threads holds it, and at the
         * holder's last {@code unlock()} otherwise. Fencing tokens stay strictly greater than every
         * token handed out before for the name, cached re-takes included: the client reserves them
         * in blocks in Redis.
         *
         * <p>Only the non-fair lock is cached: the fair lock, the read-write lock and {@link Redlock}
         * locks ignore this option (the fair lock and the write lock promise arrival order across
         * clients, which a cacher's local takes would break), as do holds with a fixed lease and
         * handles, which give an idle cache back first. Off by default.
         *
         * <p>Costs: the client subscribes once to a channel of its own, on which other clients ask
         * for its cached locks; an asker sends one message more than without caching, and waits
         * for the cacher's give-back (a round trip) besides. A lost message is made good by the
         * cacher's next lease renewal, at most a third of the lease later.
         *
         * <p>A condition's {@code await} on a cached lock gives the lock back in Redis before it
         * waits, so that other clients can take it (and signal).
         *
         * <p>Lost holds: an {@code unlock()} of a hold taken from the cache makes no round trip, so
         * it cannot throw {@link dev.synchronizers.LostHoldException} for a cache lost under it (a
         * failover, a {@code forceUnlock()} by another client, a pause past the lease). When the
         * client finds the cache gone instead (its next renewal, at most a third of the lease later,
         * or the give-back after an ask, a force or {@code close()}), every hold taken from it and
         * released since the cache was last confirmed in Redis is reported to the lost-hold
         * listeners ({@code GONE}, with its thread and fencing token; the 4,096 latest). A hold
         * still held then is lost as any hold is. Another client's {@code forceUnlock()} tells this
         * client with one message; until it arrives, a local take may still hand out a token below
         * the new holder's, which a store that checks tokens refuses. The meters
         * {@code synchronizers.cache.takes}, {@code synchronizers.cache.ends} and
         * {@code synchronizers.cache.asks} count takes, ends by cause and asks.
         *
         * <p>{@code isLocked()} of a lock this client caches is answered locally (false while no
         * thread of the client holds it). {@code close()} gives back the locks the client caches and
         * no thread holds. {@code snapshot()} shows a lock this client caches as held by the client
         * with {@link dev.synchronizers.LockSnapshot.Renewal#CACHED}: the thread that holds it
         * locally (or {@code -1} while none does) and the latest token a thread took from it.
         *
         * <p>Where a cached lock's contract differs from {@link dev.synchronizers.DistributedLock}'s,
         * as seen from <em>another</em> client (the store knows that a client caches the lock, not
         * whether one of its threads holds it):
         * <ul>
         *   <li>a lock another client caches counts as locked, even while none of its threads holds
         *       it: {@code isLocked()} is true, and a single try ({@code tryLock()}, a timed try with
         *       no time left, {@code tryAcquire(Duration.ZERO)}) fails. The try asks for the lock
         *       back, so a later try gets it once that client gave it back; an acquisition that
         *       waits ({@code lock()}, a timed {@code tryLock}, {@code acquire()}) gets it at that
         *       client's last {@code unlock()}, or at once if none of its threads holds it. A try
         *       made while the lock was held asks too, but the ask may reach the cacher after its
         *       {@code unlock()}: a try right after that unlock may fail;</li>
         *   <li>its snapshot shows the caching client with thread {@code -1} and the fencing token
         *       the cache began with (at most the holder's), its renewal
         *       {@link dev.synchronizers.LockSnapshot.Renewal#UNKNOWN};</li>
         *   <li>threads of the caching client that wait behind its own hold take the lock from the
         *       cache without a round trip, so the store has no record of them: they are not in
         *       another client's {@code getQueueLength()} (their own client counts them).</li>
         * </ul>
         *
         * <p>On every topology: on a Redis Cluster the client's ask channel is a shard channel of
         * its own slot, and follows that slot to another master; under Sentinel the client listens
         * on the new master after a switch. With {@link #replicaAcks}, taking a lock into the cache
         * in Redis is acknowledged by the replicas like any acquisition (the takes from the cache
         * that follow write nothing and wait for nothing); after a Sentinel switch, the locks the
         * client gave back during the last lease are given back again on the new master, as
         * releases are.
         *
         * @param enabled whether to cache non-fair locks
         * @return this builder
         */
        public Builder lockCaching(boolean enabled) {
            this.lockCaching = enabled;
            return this;
        }

        /**
         * Connects and returns the client.
         *
         * @return the connected client
         * @throws IllegalStateException if no URI was given, or a {@link #meterNameTag} without a
         *     {@link #meterRegistry}, or if the Lettuce on the class path is older than 6.6.0 (the
         *     message names the version found)
         * @throws SynchronizerUnavailableException if Redis cannot be reached within the command
         *     timeout
         */
        public RedisSynchronizers build() {
            LettuceLine.check();
            target.check(options.commandTimeout(), replicaAcks);
            options.checkMeters();
            return new RedisSynchronizers(ServerClient.open(target.forClient(options), options.copy(), replicaAcks,
                    lockCaching));
        }
    }
}
