package dev.synchronizers.jmh;

import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.Redlock;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The lock implementations that the benchmarks compare. {@link #open(String, String)} creates one
 * independent client (its own connections) and returns its handle on one lock name; a benchmark
 * that wants several clients calls it several times. {@link #open(String, List, Duration)} creates
 * one client and returns its handles on many names, for the benchmarks in which one client serves
 * many locks.
 */
public enum LockImpl {

    /** Our non-fair lock: {@code RedisSynchronizers.lock(name)}. */
    SYNCHRONIZERS {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            RedisSynchronizers client = target(RedisSynchronizers.builder(), uri).lease(lease).build();
            return handles(names, client::lock, client::close);
        }
    },

    /**
     * Our non-fair lock with lock caching on ({@code lockCaching(true)}): after its first {@code
     * lock()} the client keeps the lock in Redis between its threads' holds, and a re-take with
     * nobody else asking is local, without a round trip.
     */
    SYNCHRONIZERS_CACHING {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            RedisSynchronizers client = target(RedisSynchronizers.builder(), uri).lease(lease).lockCaching(true)
                    .build();
            return handles(names, client::lock, client::close);
        }
    },

    /**
     * Our non-fair lock with metrics on: {@link #SYNCHRONIZERS} whose client records its meters
     * in a {@code SimpleMeterRegistry} (default configuration: no percentiles), for the cost of
     * metrics per operation.
     */
    SYNCHRONIZERS_METERED {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            RedisSynchronizers client = target(RedisSynchronizers.builder(), uri).lease(lease)
                    .meterRegistry(new SimpleMeterRegistry()).build();
            return handles(names, client::lock, client::close);
        }
    },

    /**
     * Our non-fair lock with {@code replicaAcks(1, 100 ms)}: every acquisition followed by
     * {@code WAIT 1 100} in the same round trip, for the cost of replica acknowledgement (needs a
     * master with replicas: {@code -p topology=SENTINEL}).
     */
    SYNCHRONIZERS_ACKED {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            RedisSynchronizers client = target(RedisSynchronizers.builder(), uri).lease(lease)
                    .replicaAcks(1, Duration.ofMillis(100)).build();
            return handles(names, client::lock, client::close);
        }
    },

    /** Our fair lock: {@code RedisSynchronizers.fairLock(name)}. */
    SYNCHRONIZERS_FAIR {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            RedisSynchronizers client = target(RedisSynchronizers.builder(), uri).lease(lease).build();
            return handles(names, client::fairLock, client::close);
        }
    },

    /**
     * Redisson's {@code RLock} from {@code getLock(name)}, with Redisson's default settings apart
     * from the lease ({@code lockWatchdogTimeout}, by default Redisson's own 30 s).
     */
    REDISSON {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            RedissonClient client = redisson(uri, lease);
            return handles(names, client::getLock, client::shutdown);
        }
    },

    /**
     * Redisson's fair {@code RLock} from {@code getFairLock(name)}, with Redisson's default
     * settings apart from the lease, as {@link #REDISSON}.
     */
    REDISSON_FAIR {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            RedissonClient client = redisson(uri, lease);
            return handles(names, client::getFairLock, client::shutdown);
        }
    },

    /**
     * Our quorum lock: {@code Redlock.lock(name)} over every node of a {@code "redlock:"} target
     * ({@code -p topology=REDLOCK3} or {@code REDLOCK5}).
     */
    SYNCHRONIZERS_REDLOCK {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            Redlock client = Redlock.builder().nodes(redlockNodes(uri)).lease(lease).build();
            return handles(names, client::lock, client::close);
        }
    },

    /**
     * Redisson's {@code RedissonRedLock} (deprecated, still shipped) over one Redisson client per
     * node of a {@code "redlock:"} target, each with Redisson's defaults apart from the lease.
     */
    REDISSON_REDLOCK {
        @Override
        @SuppressWarnings("deprecation")
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            List<RedissonClient> clients = java.util.Arrays.stream(redlockNodes(uri))
                    .map(node -> redisson(node, lease)).toList();
            return handles(names,
                    name -> new org.redisson.RedissonRedLock(clients.stream().map(c -> c.getLock(name))
                            .toArray(org.redisson.api.RLock[]::new)),
                    () -> clients.forEach(RedissonClient::shutdown));
        }
    },

    /**
     * A {@link ReentrantLock} per name, no Redis at all: the local-memory limit of a lock in one
     * JVM. Each {@code open} makes new locks, so two "clients" of it do not exclude each other: for
     * the benchmarks with one client only (uncontended, many names).
     */
    JUC {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            return handles(names, name -> new ReentrantLock(), () -> { });
        }
    },

    /** The raw-Redis floor; see {@link FloorLock}. */
    FLOOR {
        @Override
        public List<BenchLock> open(String uri, List<String> names, Duration lease) {
            if (uri.startsWith("cluster:")) {
                throw new UnsupportedOperationException("FLOOR runs on a standalone server only");
            }
            FloorClient client = new FloorClient(single(uri), lease);
            return names.stream().<BenchLock>map(name -> new FloorLock(client, "floor:" + name)).toList();
        }
    };

    /**
     * The lease of a hold without a lease time, the same by default for every implementation: ours
     * ({@code RedisSynchronizers.Builder.lease}), Redisson's ({@code lockWatchdogTimeout}) and the
     * floor's {@code PX}; the watchdogs renew it every third.
     */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    /**
     * Creates one client of the Redis server at {@code uri}, with the implementations' default
     * lease, and returns its handle on the lock {@code name}.
     *
     * @param uri a Redis URI such as {@code "redis://127.0.0.1:6379"}
     * @param name the lock name, the same for every client of one benchmark
     * @return the handle; closing it closes the client
     */
    public BenchLock open(String uri, String name) {
        return open(uri, List.of(name), DEFAULT_LEASE).get(0);
    }

    /**
     * Creates one client of the Redis server at {@code uri} and returns its handles on the locks
     * {@code names}, in that order. They all share the client: closing any of them closes it.
     *
     * @param uri a Redis URI such as {@code "redis://127.0.0.1:6379"}
     * @param names the lock names
     * @param lease the lease of a hold (see {@link #DEFAULT_LEASE}); the floor has no watchdog and
     *     uses it as its fixed lease
     * @return one handle per name
     */
    public abstract List<BenchLock> open(String uri, List<String> names, Duration lease);

    /** A Redisson client of the server at {@code uri}, with Redisson's default settings; every facade uses it. */
    static RedissonClient redisson(String uri) {
        return Redisson.create(redissonConfig(uri));
    }

    /** A Redisson client with Redisson's default settings except the lock watchdog's lease. */
    static RedissonClient redisson(String uri, Duration lease) {
        Config config = redissonConfig(uri);
        config.setLockWatchdogTimeout(lease.toMillis());
        return Redisson.create(config);
    }

    /**
     * Points our builder at {@code uri}: a server, or {@code "cluster:<uri>,<uri>,..."} for a Redis
     * Cluster (see {@link RedisBenchmark#target()}).
     */
    static RedisSynchronizers.Builder target(RedisSynchronizers.Builder builder, String uri) {
        return uri.startsWith("cluster:") ? builder.cluster(uri.substring("cluster:".length()).split(","))
                : builder.uri(single(uri));
    }

    /** The nodes of a {@code "redlock:<uri>,<uri>,..."} target. */
    static String[] redlockNodes(String uri) {
        if (!uri.startsWith("redlock:")) {
            throw new UnsupportedOperationException("the Redlock implementations need -p topology=REDLOCK3 or REDLOCK5");
        }
        return uri.substring("redlock:".length()).split(",");
    }

    /** A single-server implementation on a Redlock target uses its first node. */
    static String single(String uri) {
        return uri.startsWith("redlock:") ? redlockNodes(uri)[0] : uri;
    }

    static Config redissonConfig(String target) {
        String uri = single(target);
        Config config = new Config();
        if (uri.startsWith("cluster:")) {
            config.useClusterServers().addNodeAddress(uri.substring("cluster:".length()).split(","));
            return config;
        }
        config.useSingleServer().setAddress(uri);
        return config;
    }

    /** One client library's handles on {@code names}, each closing the client with {@code closer}. */
    private static List<BenchLock> handles(List<String> names, Function<String, ? extends Lock> lock, Runnable closer) {
        return names.stream().<BenchLock>map(name -> new LockHandle(lock.apply(name), closer)).toList();
    }

    /** A {@link Lock} of a client library, and how to close that client. */
    private static final class LockHandle implements BenchLock {
        private final Lock lock;
        private final Runnable closer;

        LockHandle(Lock lock, Runnable closer) {
            this.lock = lock;
            this.closer = closer;
        }

        @Override
        public void lock() {
            lock.lock();
        }

        @Override
        public void unlock() {
            lock.unlock();
        }

        @Override
        public void close() {
            closer.run();
        }
    }

    /**
     * The textbook lock, as a lower bound on what a Redis lock costs: {@code SET key token NX PX
     * lease} (30000 by default) to acquire and a compare-and-delete script to release, over one plain Lettuce
     * connection that the client's threads share (see {@link FloorClient}). It has no reentrancy (a
     * holder that locks again waits for its own lease to expire), no watchdog (a hold longer than
     * the lease is lost) and no fairness.
     *
     * <p>A waiter polls: it retries {@code SET NX} after parking about 100 µs. Polling is the
     * floor's nature, not a shortcut of this benchmark: without server-side queueing or
     * notifications there is nothing else to wait on. Under contention it therefore sends many
     * failed {@code SET}s per hand-off, which the benchmarks' commands-per-operation line shows.
     */
    static final class FloorLock implements BenchLock {
        private final FloorClient client;
        private final String key;

        FloorLock(FloorClient client, String key) {
            this.client = client;
            this.key = key;
        }

        @Override
        public void lock() {
            String mine = client.token.get();
            while (!"OK".equals(client.commands.set(key, mine, client.acquireArgs))) {
                LockSupport.parkNanos(FloorClient.RETRY_NANOS);
            }
        }

        @Override
        public void unlock() {
            Long deleted = client.commands.evalsha(client.releaseSha, ScriptOutputType.INTEGER, new String[] {key},
                    client.token.get());
            if (deleted == null || deleted != 1L) {
                throw new IllegalMonitorStateException("floor lock " + key + " was not held by this thread");
            }
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** One client of the floor: one Lettuce connection, shared by all its threads and lock names. */
    static final class FloorClient implements AutoCloseable {
        static final long RETRY_NANOS = 100_000;
        private static final String RELEASE =
                "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;
        final RedisCommands<String, String> commands;
        final String releaseSha;
        final SetArgs acquireArgs;
        /** One token per thread of this client: the client's random id and a thread number. */
        final ThreadLocal<String> token;

        FloorClient(String uri, Duration lease) {
            this.client = RedisClient.create(uri);
            this.connection = client.connect();
            this.commands = connection.sync();
            this.releaseSha = commands.scriptLoad(RELEASE);
            this.acquireArgs = SetArgs.Builder.nx().px(lease.toMillis());
            String clientId = UUID.randomUUID().toString();
            AtomicLong threads = new AtomicLong();
            this.token = ThreadLocal.withInitial(() -> clientId + ":" + threads.incrementAndGet());
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown();
        }
    }
}
