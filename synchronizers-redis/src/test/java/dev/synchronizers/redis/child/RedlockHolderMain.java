package dev.synchronizers.redis.child;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.Redlock;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A child process for the Redlock validity test: takes a lock with a watchdog lease and prints
 * {@code LOCKED <token>}; once its hold is reported lost it prints {@code LOST <cause>}, tries to
 * write the store with its token ({@code WRITE 1} accepted, {@code WRITE 0} refused) and to unlock
 * ({@code UNLOCK <exception or "ok">}), and exits.
 *
 * <p>Arguments: {@code <node uris, comma-separated> <key prefix> <lock name> <lease ms>
 * <command timeout ms> <store uri> <store prefix>}.
 */
public final class RedlockHolderMain {

    private RedlockHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        CountDownLatch lost = new CountDownLatch(1);
        Redlock redlock = Redlock.builder()
                .nodes(args[0].split(","))
                .keyPrefix(args[1])
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .commandTimeout(Duration.ofMillis(Long.parseLong(args[4])))
                .lostHoldListener(hold -> {
                    System.out.println("LOST " + hold.cause());
                    System.out.flush();
                    lost.countDown();
                })
                .build();
        DistributedLock lock = redlock.lock(args[2]);
        lock.lock();
        long token = lock.fencingToken();
        System.out.println("LOCKED " + token);
        System.out.flush();
        lost.await();
        RedisClient storeClient = RedisClient.create(args[5]);
        RedisCommands<String, String> store = storeClient.connect(StringCodec.UTF8).sync();
        Long written = store.eval(RedlockWorkerMain.WRITE, ScriptOutputType.INTEGER,
                RedlockWorkerMain.storeKeys(args[6]), Long.toString(token), "999");
        System.out.println("WRITE " + written);
        String unlocked = "ok";
        try {
            lock.unlock();
        } catch (RuntimeException e) {
            unlocked = e.getClass().getSimpleName();
        }
        System.out.println("UNLOCK " + unlocked);
        System.out.flush();
        storeClient.shutdown();
        redlock.close();
    }
}
