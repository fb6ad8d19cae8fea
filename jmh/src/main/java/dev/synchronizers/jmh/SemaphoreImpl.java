package dev.synchronizers.jmh;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.redis.RedisSynchronizers;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;

/**
 * The semaphore implementations that {@link SemaphoreThroughputBenchmark} compares. {@link #open}
 * creates one independent client (its own connections) and returns its handle on one name.
 */
public enum SemaphoreImpl {

    /** Ours: {@code RedisSynchronizers.semaphore(name)}, permits owned by the client and leased. */
    SYNCHRONIZERS {
        @Override
        public BenchSemaphore open(String uri, String name) {
            RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).build();
            DistributedSemaphore semaphore = client.semaphore(name);
            return new BenchSemaphore() {
                @Override
                public boolean trySetPermits(int permits) {
                    return semaphore.trySetPermits(permits);
                }

                @Override
                public void acquire() throws InterruptedException {
                    semaphore.acquire();
                }

                @Override
                public void release() {
                    semaphore.release();
                }

                @Override
                public void close() {
                    client.close();
                }
            };
        }
    },

    /** Redisson's {@code RSemaphore} from {@code getSemaphore(name)}: a bare counter, no owner, no lease. */
    REDISSON {
        @Override
        public BenchSemaphore open(String uri, String name) {
            RedissonClient client = LockImpl.redisson(uri);
            RSemaphore semaphore = client.getSemaphore(name);
            return new BenchSemaphore() {
                @Override
                public boolean trySetPermits(int permits) {
                    return semaphore.trySetPermits(permits);
                }

                @Override
                public void acquire() throws InterruptedException {
                    semaphore.acquire();
                }

                @Override
                public void release() {
                    semaphore.release();
                }

                @Override
                public void close() {
                    client.shutdown();
                }
            };
        }
    },

    /**
     * Redisson's {@code RPermitExpirableSemaphore} from {@code getPermitExpirableSemaphore(name)}:
     * {@code acquire()} returns a permit id (no lease time given, so the permit does not expire)
     * and {@code release(id)} returns it.
     */
    REDISSON_EXPIRABLE {
        @Override
        public BenchSemaphore open(String uri, String name) {
            RedissonClient client = LockImpl.redisson(uri);
            RPermitExpirableSemaphore semaphore = client.getPermitExpirableSemaphore(name);
            // The facade hides the id: each thread holds one permit at a time, so one slot per thread.
            ThreadLocal<String> held = new ThreadLocal<>();
            return new BenchSemaphore() {
                @Override
                public boolean trySetPermits(int permits) {
                    return semaphore.trySetPermits(permits);
                }

                @Override
                public void acquire() throws InterruptedException {
                    held.set(semaphore.acquire());
                }

                @Override
                public void release() {
                    String id = held.get();
                    held.remove();
                    semaphore.release(id);
                }

                @Override
                public void close() {
                    client.shutdown();
                }
            };
        }
    };

    /**
     * Creates one client of the Redis server at {@code uri} and returns its handle on the
     * semaphore {@code name}.
     *
     * @param uri a Redis URI such as {@code "redis://127.0.0.1:6379"}
     * @param name the semaphore name, the same for every client of one benchmark
     * @return the handle; closing it closes the client
     */
    public abstract BenchSemaphore open(String uri, String name);
}
