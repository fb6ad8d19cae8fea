package dev.synchronizers.redis.child;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.RedisSynchronizers;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * A child process for crash tests: takes a lock with a watchdog lease, prints {@code LOCKED <token>},
 * and then holds it until it is killed.
 *
 * <p>Arguments: {@code <redis uri> <key prefix> <lock name> <lease millis>}.
 */
public final class LockHolderMain {

    private LockHolderMain() {
    }

    public static void main(String[] args) {
        RedisSynchronizers client = RedisSynchronizers.builder()
                .uri(args[0])
                .keyPrefix(args[1])
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .build();
        DistributedLock lock = client.lock(args[2]);
        lock.lock();
        System.out.println("LOCKED " + lock.fencingToken());
        System.out.flush();
        while (true) {
            LockSupport.park();
        }
    }
}
