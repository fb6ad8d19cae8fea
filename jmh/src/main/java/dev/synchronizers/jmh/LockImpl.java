package dev.synchronizers.jmh;

import dev.synchronizers.redis.RedisSynchronizers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The lock implementations that the benchmarks compare. {@link #open} creates one independent
 * client (its own connections) and returns its handle on one lock name; a benchmark that wants
 * several clients calls it several times.
 */
public enum LockImpl {

    /** Our non-fair lock: {@code RedisSynchronizers.lock(name)}. */
    SYNCHRONIZERS {
        @Override
        public BenchLock open(String uri, String name) {
            RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).build();
            return new LockHandle(client.lock(name), client::close);
        }
    },

    /** Our fair lock: {@code RedisSynchronizers.fairLock(name)}. */
    SYNCHRONIZERS_FAIR {
        @Override
        public BenchLock open(String uri, String name) {
            RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).build();
            return new LockHandle(client.fairLock(name), client::close);
        }
    },

    /** Redisson's {@code RLock} from {@code getLock(name)}, with Redisson's default settings. */
    REDISSON {
        @Override
        public BenchLock open(String uri, String name) {
            RedissonClient client = redisson(uri);
            return new LockHandle(client.getLock(name), client::shutdown);
        }
    },

    /** Redisson's fair {@code RLock} from {@code getFairLock(name)}, with Redisson's default settings. */
    REDISSON_FAIR {
        @Override
        public BenchLock open(String uri, String name) {
            RedissonClient client = redisson(uri);
            return new LockHandle(client.getFairLock(name), client::shutdown);
        }
    },

    /** The raw-Redis floor; see {@link FloorLock}. */
    FLOOR {
        @Override
        public BenchLock open(String uri, String name) {
            return new FloorLock(uri, "floor:" + name);
        }
    };

    /**
     * Creates one client of the Redis server at {@code uri} and returns its handle on the lock
     * {@code name}.
     *
     * @param uri a Redis URI such as {@code "redis://127.0.0.1:6379"}
     * @param name the lock name, the same for every client of one benchmark
     * @return the handle; closing it closes the client
     */
    public abstract BenchLock open(String uri, String name);

    /** A Redisson client of the server at {@code uri}, with Redisson's default settings; every facade uses it. */
    static RedissonClient redisson(String uri) {
        Config config = new Config();
        config.useSingleServer().setAddress(uri);
        return Redisson.create(config);
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
     * 30000} to acquire and a compare-and-delete script to release, over one plain Lettuce
     * connection that the client's threads share. It has no reentrancy (a holder that locks again
     * waits for its own lease to expire), no watchdog (a hold longer than 30 s is lost) and no
     * fairness.
     *
     * <p>A waiter polls: it retries {@code SET NX} after parking about 100 µs. Polling is the
     * floor's nature, not a shortcut of this benchmark: without server-side queueing or
     * notifications there is nothing else to wait on. Under contention it therefore sends many
     * failed {@code SET}s per hand-off, which the benchmarks' commands-per-operation line shows.
     */
    static final class FloorLock implements BenchLock {
        private static final long LEASE_MILLIS = 30_000;
        private static final long RETRY_NANOS = 100_000;
        private static final String RELEASE =
                "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;
        private final RedisCommands<String, String> commands;
        private final String key;
        private final String releaseSha;
        private final SetArgs acquireArgs = SetArgs.Builder.nx().px(LEASE_MILLIS);
        /** One token per thread of this client: the client's random id and a thread number. */
        private final ThreadLocal<String> token;

        FloorLock(String uri, String key) {
            this.client = RedisClient.create(uri);
            this.connection = client.connect();
            this.commands = connection.sync();
            this.key = key;
            this.releaseSha = commands.scriptLoad(RELEASE);
            String clientId = UUID.randomUUID().toString();
            AtomicLong threads = new AtomicLong();
            this.token = ThreadLocal.withInitial(() -> clientId + ":" + threads.incrementAndGet());
        }

        @Override
        public void lock() {
            String mine = token.get();
            while (!"OK".equals(commands.set(key, mine, acquireArgs))) {
                LockSupport.parkNanos(RETRY_NANOS);
            }
        }

        @Override
        public void unlock() {
            Long deleted = commands.evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] {key}, token.get());
            if (deleted == null || deleted != 1L) {
                throw new IllegalMonitorStateException("floor lock " + key + " was not held by this thread");
            }
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown();
        }
    }
}
