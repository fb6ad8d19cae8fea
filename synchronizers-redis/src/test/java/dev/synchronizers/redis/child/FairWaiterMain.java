package dev.synchronizers.redis.child;

import dev.synchronizers.redis.RedisSynchronizers;
import java.time.Duration;

/**
 * A child process for crash tests: waits for a fair lock, or with a fifth argument {@code lock} for
 * the non-fair lock, (printing {@code WAITING <owner-prefix>} first) and, should it get it, holds it
 * until killed.
 *
 * <p>Arguments: {@code <redis uri> <key prefix> <lock name> <lease millis> [lock]}.
 */
public final class FairWaiterMain {

    private FairWaiterMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        RedisSynchronizers client = RedisSynchronizers.builder()
                .uri(args[0])
                .keyPrefix(args[1])
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .build();
        System.out.println("WAITING " + client.clientId());
        System.out.flush();
        (args.length > 4 && args[4].equals("lock") ? client.lock(args[2]) : client.fairLock(args[2])).lock();
        System.out.println("LOCKED");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
