package dev.synchronizers.redis.child;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.redis.RedisSynchronizers;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * A child process for crash tests: acquires permits of a semaphore, prints {@code HOLDING}, and
 * holds them until it is killed.
 *
 * <p>Arguments: {@code <redis uri> <key prefix> <semaphore name> <lease millis> <permits>}.
 */
public final class SemaphoreHolderMain {

    private SemaphoreHolderMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        RedisSynchronizers client = RedisSynchronizers.builder()
                .uri(args[0])
                .keyPrefix(args[1])
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .build();
        DistributedSemaphore semaphore = client.semaphore(args[2]);
        semaphore.acquire(Integer.parseInt(args[4]));
        System.out.println("HOLDING");
        System.out.flush();
        while (true) {
            LockSupport.park();
        }
    }
}
