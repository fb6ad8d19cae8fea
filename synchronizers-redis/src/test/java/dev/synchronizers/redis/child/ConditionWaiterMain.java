package dev.synchronizers.redis.child;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.RedisSynchronizers;
import java.time.Duration;
import java.util.concurrent.locks.Condition;

/**
 * A child process for crash tests: takes a lock, prints {@code WAITING <client-id>} and awaits the
 * lock's first condition, until killed. Should it be signalled, it prints {@code SIGNALLED} and waits
 * again.
 *
 * <p>Arguments: {@code <redis uri> <key prefix> <lock name> <lease millis>}.
 */
public final class ConditionWaiterMain {

    private ConditionWaiterMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        RedisSynchronizers client = RedisSynchronizers.builder()
                .uri(args[0])
                .keyPrefix(args[1])
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .build();
        DistributedLock lock = client.lock(args[2]);
        Condition condition = lock.newCondition();
        lock.lock();
        System.out.println("WAITING " + client.clientId());
        System.out.flush();
        while (true) {
            condition.await();
            System.out.println("SIGNALLED");
            System.out.flush();
        }
    }
}
