package dev.synchronizers.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code synchronizers.*} properties that {@link SynchronizersAutoConfiguration} builds its
 * client from.
 *
 * <p>Where Redis is: at most one of {@code synchronizers.uri}, {@code synchronizers.sentinel.*},
 * {@code synchronizers.cluster.nodes} and {@code synchronizers.redlock.nodes}; start-up fails with
 * an {@link IllegalStateException} naming the properties if more than one is given. With none, the
 * client connects where Spring Boot's own Redis connection points ({@code spring.data.redis.*}, or a
 * {@code DataRedisConnectionDetails} bean, e.g. from Testcontainers or Docker Compose), and without
 * Spring Data Redis to {@code redis://localhost:6379}, Boot's default.
 *
 * <p>A plain mutable bean, as Spring binds it; not thread-safe, read once at start-up.
 */
@ConfigurationProperties(prefix = "synchronizers")
public class SynchronizersProperties {

    /**
     * Redis URI of a standalone server or a Sentinel set, e.g. redis://:secret@host:6379/0,
     * rediss://host:6380 or redis-sentinel://h1:26379,h2:26379/0#mymaster.
     */
    private String uri;

    /**
     * Username for the nodes given as host:port (sentinel, cluster and Redlock nodes); a URI carries
     * its own.
     */
    private String username;

    /**
     * Password for the nodes given as host:port (sentinel, cluster and Redlock nodes); a URI carries
     * its own.
     */
    private String password;

    /** Database index of a Sentinel-managed master. */
    private int database;

    /** Prefix of every key and channel; clients coordinate only if they use the same one. */
    private String keyPrefix = "sync";

    /**
     * Lease of holds taken without a lease time; the watchdog renews them every third of it, and a
     * process that dies frees them at most this long after its last renewal.
     */
    private Duration lease = Duration.ofSeconds(30);

    /** How long any single call waits for Redis (and each connection at start-up). */
    private Duration commandTimeout = Duration.ofSeconds(5);

    /**
     * Whether start-up fails when Redis cannot be reached. When false, the client is connected on
     * first use instead: calls throw SynchronizerUnavailableException until Redis answers, and the
     * health indicator reports DOWN meanwhile. Not for Redlock, which starts with a quorum of its
     * nodes and connects the rest later.
     */
    private boolean failFast = true;

    /**
     * Whether to use an in-memory Synchronizers instead of Redis, for tests: the
     * InMemorySynchronizers of dev.synchronizers:synchronizers-test (which must be on the class
     * path), with this library's semantics in one JVM and no connection anywhere. The address
     * properties are then ignored.
     */
    private boolean inMemory;

    private final Sentinel sentinel = new Sentinel();

    private final Cluster cluster = new Cluster();

    private final Redlock redlock = new Redlock();

    private final ReplicaAcks replicaAcks = new ReplicaAcks();

    private final Shedlock shedlock = new Shedlock();

    private final LockRegistry lockRegistry = new LockRegistry();

    /** Creates the properties with their defaults. */
    public SynchronizersProperties() {
    }

    /**
     * Returns the Redis URI of a standalone server or a Sentinel set.
     *
     * @return the URI, or null if not set
     */
    public String getUri() {
        return uri;
    }

    /**
     * Sets the Redis URI of a standalone server or a Sentinel set.
     *
     * @param uri the URI, e.g. {@code redis://host:6379}
     */
    public void setUri(String uri) {
        this.uri = uri;
    }

    /**
     * Returns the username for nodes given as {@code host:port}.
     *
     * @return the username, or null
     */
    public String getUsername() {
        return username;
    }

    /**
     * Sets the username for nodes given as {@code host:port}.
     *
     * @param username the username
     */
    public void setUsername(String username) {
        this.username = username;
    }

    /**
     * Returns the password for nodes given as {@code host:port}.
     *
     * @return the password, or null
     */
    public String getPassword() {
        return password;
    }

    /**
     * Sets the password for nodes given as {@code host:port}.
     *
     * @param password the password
     */
    public void setPassword(String password) {
        this.password = password;
    }

    /**
     * Returns the database index of a Sentinel-managed master.
     *
     * @return the index, default 0
     */
    public int getDatabase() {
        return database;
    }

    /**
     * Sets the database index of a Sentinel-managed master.
     *
     * @param database the index
     */
    public void setDatabase(int database) {
        this.database = database;
    }

    /**
     * Returns the key prefix.
     *
     * @return the prefix, default {@code "sync"}
     */
    public String getKeyPrefix() {
        return keyPrefix;
    }

    /**
     * Sets the key prefix.
     *
     * @param keyPrefix non-empty, without '{' or '}'
     */
    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    /**
     * Returns the watchdog lease.
     *
     * @return the lease, default 30 s
     */
    public Duration getLease() {
        return lease;
    }

    /**
     * Sets the watchdog lease.
     *
     * @param lease at least 30 ms
     */
    public void setLease(Duration lease) {
        this.lease = lease;
    }

    /**
     * Returns the command timeout.
     *
     * @return the timeout, default 5 s
     */
    public Duration getCommandTimeout() {
        return commandTimeout;
    }

    /**
     * Sets the command timeout.
     *
     * @param commandTimeout positive
     */
    public void setCommandTimeout(Duration commandTimeout) {
        this.commandTimeout = commandTimeout;
    }

    /**
     * Returns whether start-up fails when Redis cannot be reached.
     *
     * @return true (the default) to fail start-up
     */
    public boolean isFailFast() {
        return failFast;
    }

    /**
     * Sets whether start-up fails when Redis cannot be reached.
     *
     * @param failFast false to connect on first use instead
     */
    public void setFailFast(boolean failFast) {
        this.failFast = failFast;
    }

    /**
     * Returns whether the auto-configuration provides an in-memory {@code Synchronizers} instead of
     * connecting to Redis.
     *
     * @return true for the in-memory one; default false
     */
    public boolean isInMemory() {
        return inMemory;
    }

    /**
     * Sets whether the auto-configuration provides an in-memory {@code Synchronizers}
     * ({@code dev.synchronizers.test.InMemorySynchronizers}, module {@code synchronizers-test})
     * instead of connecting to Redis.
     *
     * @param inMemory true for the in-memory one, for tests
     */
    public void setInMemory(boolean inMemory) {
        this.inMemory = inMemory;
    }

    /**
     * Returns the Sentinel settings.
     *
     * @return the settings, never null
     */
    public Sentinel getSentinel() {
        return sentinel;
    }

    /**
     * Returns the Cluster settings.
     *
     * @return the settings, never null
     */
    public Cluster getCluster() {
        return cluster;
    }

    /**
     * Returns the Redlock settings.
     *
     * @return the settings, never null
     */
    public Redlock getRedlock() {
        return redlock;
    }

    /**
     * Returns the replica-acknowledgement settings.
     *
     * @return the settings, never null
     */
    public ReplicaAcks getReplicaAcks() {
        return replicaAcks;
    }

    /**
     * Returns the ShedLock settings.
     *
     * @return the settings, never null
     */
    public Shedlock getShedlock() {
        return shedlock;
    }

    /** {@code synchronizers.sentinel.*}: a master that Redis Sentinel watches. */
    public static class Sentinel {

        /** Name of the master the sentinels watch, e.g. mymaster. */
        private String master;

        /** Sentinels as host:port. */
        private List<String> nodes = new ArrayList<>();

        /** Creates empty Sentinel settings. */
        public Sentinel() {
        }

        /**
         * Returns the master's name.
         *
         * @return the name, or null
         */
        public String getMaster() {
            return master;
        }

        /**
         * Sets the master's name.
         *
         * @param master the name the sentinels know it by
         */
        public void setMaster(String master) {
            this.master = master;
        }

        /**
         * Returns the sentinels.
         *
         * @return the sentinels as {@code host:port}
         */
        public List<String> getNodes() {
            return nodes;
        }

        /**
         * Sets the sentinels.
         *
         * @param nodes the sentinels as {@code host:port}
         */
        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }
    }

    /** {@code synchronizers.cluster.*}: a Redis Cluster. */
    public static class Cluster {

        /** Seed nodes of the cluster, as host:port or redis:// URIs; any one that answers is enough. */
        private List<String> nodes = new ArrayList<>();

        /** Creates empty Cluster settings. */
        public Cluster() {
        }

        /**
         * Returns the seed nodes.
         *
         * @return the nodes
         */
        public List<String> getNodes() {
            return nodes;
        }

        /**
         * Sets the seed nodes.
         *
         * @param nodes as {@code host:port} or {@code redis://} URIs
         */
        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }
    }

    /** {@code synchronizers.redlock.*}: a quorum lock over independent servers. */
    public static class Redlock {

        /**
         * Independent Redis servers (at least 3), as host:port or redis:// URIs. When set, the
         * auto-configuration makes a Redlock instead of a RedisSynchronizers.
         */
        private List<String> nodes = new ArrayList<>();

        /** Share of the lease allowed for clock drift between the servers; the library's default when unset. */
        private Double clockDriftFactor;

        /** Creates empty Redlock settings. */
        public Redlock() {
        }

        /**
         * Returns the nodes.
         *
         * @return the nodes
         */
        public List<String> getNodes() {
            return nodes;
        }

        /**
         * Sets the nodes.
         *
         * @param nodes as {@code host:port} or {@code redis://} URIs
         */
        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }

        /**
         * Returns the clock drift factor.
         *
         * @return the factor, or null for the library's default
         */
        public Double getClockDriftFactor() {
            return clockDriftFactor;
        }

        /**
         * Sets the clock drift factor.
         *
         * @param clockDriftFactor the share of the lease allowed for drift
         */
        public void setClockDriftFactor(Double clockDriftFactor) {
            this.clockDriftFactor = clockDriftFactor;
        }
    }

    /** {@code synchronizers.replica-acks.*}: WAIT for replicas after every acquisition. */
    public static class ReplicaAcks {

        /** How many replicas must acknowledge every hold; 0 (the default) switches it off. */
        private int replicas;

        /** How long WAIT may block; shorter than the command timeout. */
        private Duration timeout = Duration.ofMillis(50);

        /** Creates the settings, switched off. */
        public ReplicaAcks() {
        }

        /**
         * Returns the number of replicas.
         *
         * @return the number, 0 when off
         */
        public int getReplicas() {
            return replicas;
        }

        /**
         * Sets the number of replicas.
         *
         * @param replicas 0 for off, else at least 1
         */
        public void setReplicas(int replicas) {
            this.replicas = replicas;
        }

        /**
         * Returns the WAIT timeout.
         *
         * @return the timeout, default 50 ms
         */
        public Duration getTimeout() {
            return timeout;
        }

        /**
         * Sets the WAIT timeout.
         *
         * @param timeout positive, shorter than the command timeout
         */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /**
     * Returns the settings of the Spring Integration {@code LockRegistry} bean.
     *
     * @return the lock registry settings
     */
    public LockRegistry getLockRegistry() {
        return lockRegistry;
    }

    /** {@code synchronizers.lock-registry.*}: the Spring Integration LockRegistry bean. */
    public static class LockRegistry {

        /**
         * Whether the registry's locks are fair: granted in order of request, across clients (the
         * store's fair lock) and among this application's threads. Not for Redlock.
         */
        private boolean fair;

        /** Creates the settings with the defaults: not fair. */
        public LockRegistry() {
        }

        /**
         * Returns whether the registry's locks are fair.
         *
         * @return true for fair locks, default false
         */
        public boolean isFair() {
            return fair;
        }

        /**
         * Sets whether the registry's locks are fair.
         *
         * @param fair true for fair locks
         */
        public void setFair(boolean fair) {
            this.fair = fair;
        }
    }

    /** {@code synchronizers.shedlock.*}: the ShedLock LockProvider bean. */
    public static class Shedlock {

        /** How the provider keeps a running task's lock. */
        private ShedlockMode mode = ShedlockMode.LEASE;

        /** Creates the settings with the default mode. */
        public Shedlock() {
        }

        /**
         * Returns the mode.
         *
         * @return the mode, default {@link ShedlockMode#LEASE}
         */
        public ShedlockMode getMode() {
            return mode;
        }

        /**
         * Sets the mode.
         *
         * @param mode the mode
         */
        public void setMode(ShedlockMode mode) {
            this.mode = mode;
        }
    }

    /** How the ShedLock provider bean keeps a running task's lock. */
    public enum ShedlockMode {
        /** A fixed lease of lockAtMostFor, as ShedLock's own providers do. */
        LEASE,
        /** Renewed by the client's watchdog for as long as the task runs. */
        KEEP_ALIVE,
        /** Renewed by the watchdog, but no longer than lockAtMostFor. */
        KEEP_ALIVE_UP_TO_LOCK_AT_MOST_FOR
    }
}
