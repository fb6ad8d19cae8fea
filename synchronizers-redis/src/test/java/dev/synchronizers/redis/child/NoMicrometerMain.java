package dev.synchronizers.redis.child;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.redis.RedisSynchronizers;

/**
 * Run by {@code MetricsTest} in a JVM whose class path lacks Micrometer: every synchronizer works
 * without it. Arguments: the Redis URI and a key prefix. Prints {@code no-micrometer: ok}.
 */
public final class NoMicrometerMain {

    private NoMicrometerMain() {
    }

    public static void main(String[] args) throws Exception {
        try {
            Class.forName("io.micrometer.core.instrument.MeterRegistry");
            System.out.println("no-micrometer: Micrometer is on the class path after all");
            return;
        } catch (ClassNotFoundException expected) {
            // as intended
        }
        try (RedisSynchronizers client = RedisSynchronizers.builder().uri(args[0]).keyPrefix(args[1]).build()) {
            DistributedLock lock = client.lock("no-micrometer");
            lock.lock();
            lock.unlock();
            DistributedLock fair = client.fairLock("no-micrometer");
            if (!fair.tryLock()) {
                throw new AssertionError("fair lock taken");
            }
            fair.unlock();
            DistributedSemaphore semaphore = client.semaphore("no-micrometer");
            semaphore.trySetPermits(1);
            semaphore.acquire();
            semaphore.release();
            DistributedCountDownLatch latch = client.countDownLatch("no-micrometer");
            latch.trySetCount(1);
            latch.countDown();
            latch.await();
            client.readWriteLock("no-micrometer").readLock().lock();
            client.readWriteLock("no-micrometer").readLock().unlock();
        }
        System.out.println("no-micrometer: ok");
    }
}
