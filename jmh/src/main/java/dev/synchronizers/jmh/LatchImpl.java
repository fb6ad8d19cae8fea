package dev.synchronizers.jmh;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.redis.RedisSynchronizers;
import org.redisson.api.RCountDownLatch;
import org.redisson.api.RedissonClient;

/**
 * The countdown latch implementations that {@link LatchRoundTripBenchmark} compares. {@link #open}
 * creates one independent client (its own connections) and returns its handle on one name.
 */
public enum LatchImpl {

    /** Ours: {@code RedisSynchronizers.countDownLatch(name)}. */
    SYNCHRONIZERS {
        @Override
        public BenchLatch open(String uri, String name) {
            RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).build();
            DistributedCountDownLatch latch = client.countDownLatch(name);
            return new BenchLatch() {
                @Override
                public boolean trySetCount(long count) {
                    return latch.trySetCount(count);
                }

                @Override
                public void countDown() {
                    latch.countDown();
                }

                @Override
                public void await() throws InterruptedException {
                    latch.await();
                }

                @Override
                public void close() {
                    client.close();
                }
            };
        }
    },

    /** Redisson's {@code RCountDownLatch} from {@code getCountDownLatch(name)}, with its default settings. */
    REDISSON {
        @Override
        public BenchLatch open(String uri, String name) {
            RedissonClient client = LockImpl.redisson(uri);
            RCountDownLatch latch = client.getCountDownLatch(name);
            return new BenchLatch() {
                @Override
                public boolean trySetCount(long count) {
                    return latch.trySetCount(count);
                }

                @Override
                public void countDown() {
                    latch.countDown();
                }

                @Override
                public void await() throws InterruptedException {
                    latch.await();
                }

                @Override
                public void close() {
                    client.shutdown();
                }
            };
        }
    };

    /**
     * Creates one client of the Redis server at {@code uri} and returns its handle on the latch
     * {@code name}.
     *
     * @param uri a Redis URI such as {@code "redis://127.0.0.1:6379"}
     * @param name the latch name, the same for every client of one benchmark
     * @return the handle; closing it closes the client
     */
    public abstract BenchLatch open(String uri, String name);
}
