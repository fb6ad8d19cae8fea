package dev.synchronizers.redis.child;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.RedisSynchronizers;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * A child process for crash tests: takes a read lock with a watchdog lease, prints
 * {@code READING <client-id>}, and holds it until it is killed.
 *
 * <p>Arguments: {@code <redis uri> <key prefix> <lock name> <lease millis>}.
 */
public final class ReadLockHolderMain {

    private ReadLockHolderMain() {
    }

    public static void main(String[] args) {
        RedisSynchronizers client = RedisSynchronizers.builder()
                .uri(args[0])
                .keyPrefix(args[1])
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .build();
        DistributedLock read = client.readWriteLock(args[2]).readLock();
        read.lock();
        System.out.println("READING " + client.clientId());
        System.out.flush();
        while (true) {
            LockSupport.park();
        }
    }
}
