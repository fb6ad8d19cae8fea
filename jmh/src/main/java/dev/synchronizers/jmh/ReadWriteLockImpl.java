package dev.synchronizers.jmh;

import dev.synchronizers.redis.RedisSynchronizers;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import org.redisson.api.RedissonClient;

/**
 * The read-write lock implementations that {@link ReadWriteLockBenchmark} compares. {@link #open}
 * creates one independent client (its own connections) and returns its handle on one name.
 */
public enum ReadWriteLockImpl {

    /** Ours: {@code RedisSynchronizers.readWriteLock(name)}. */
    SYNCHRONIZERS {
        @Override
        public BenchReadWriteLock open(String uri, String name) {
            RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).build();
            return new Handle(client.readWriteLock(name), client::close);
        }
    },

    /** Redisson's {@code RReadWriteLock} from {@code getReadWriteLock(name)}, with its default settings. */
    REDISSON {
        @Override
        public BenchReadWriteLock open(String uri, String name) {
            RedissonClient client = LockImpl.redisson(uri);
            return new Handle(client.getReadWriteLock(name), client::shutdown);
        }
    };

    /**
     * Creates one client of the Redis server at {@code uri} and returns its handle on the
     * read-write lock {@code name}.
     *
     * @param uri a Redis URI such as {@code "redis://127.0.0.1:6379"}
     * @param name the lock name, the same for every client of one benchmark
     * @return the handle; closing it closes the client
     */
    public abstract BenchReadWriteLock open(String uri, String name);

    /** Both halves of a client library's {@link ReadWriteLock}, and how to close that client. */
    private static final class Handle implements BenchReadWriteLock {
        // Taken once: Redisson builds a new RLock object on every readLock()/writeLock() call,
        // which is not what this benchmark compares.
        private final Lock read;
        private final Lock write;
        private final Runnable closer;

        Handle(ReadWriteLock lock, Runnable closer) {
            this.read = lock.readLock();
            this.write = lock.writeLock();
            this.closer = closer;
        }

        @Override
        public void readLock() {
            read.lock();
        }

        @Override
        public void readUnlock() {
            read.unlock();
        }

        @Override
        public void writeLock() {
            write.lock();
        }

        @Override
        public void writeUnlock() {
            write.unlock();
        }

        @Override
        public void close() {
            closer.run();
        }
    }
}
