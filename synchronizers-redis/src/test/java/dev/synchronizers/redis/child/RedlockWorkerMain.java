package dev.synchronizers.redis.child;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.SynchronizerException;
import dev.synchronizers.redis.Redlock;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A child process for Redlock fault tests: {@code threads} threads increment a counter in a separate
 * store server under one Redlock lock, reading and writing it in two steps through fenced scripts
 * (the store refuses a token older than the newest it has seen), until the store's stop key is set.
 *
 * <p>Prints {@code READY}, then {@code ERROR <epoch-ms> <exception> <message>} for every exception
 * that reaches a caller (after which the thread pauses 50 ms), {@code LOST <epoch-ms> <cause>} for
 * every hold reported lost, and finally {@code DONE ok=<increments the store accepted> errors=<exceptions>}.
 *
 * <p>Arguments: {@code <node uris, comma-separated> <key prefix> <lock name> <lease ms>
 * <command timeout ms> <store uri> <threads>}.
 */
public final class RedlockWorkerMain {

    /** Reads the counter for the holder of a token; -1 if a newer token was seen (refused, counted). */
    static final String READ = """
            local high = tonumber(redis.call('GET', KEYS[1]) or '0')
            if tonumber(ARGV[1]) < high then
              redis.call('INCR', KEYS[3])
              return -1
            end
            redis.call('SET', KEYS[1], ARGV[1])
            return tonumber(redis.call('GET', KEYS[2]) or '0')
            """;

    /** Writes the counter for the holder of a token, unless a newer token was seen; counts accepted writes. */
    public static final String WRITE = """
            local high = tonumber(redis.call('GET', KEYS[1]) or '0')
            if tonumber(ARGV[1]) < high then
              redis.call('INCR', KEYS[3])
              return 0
            end
            redis.call('SET', KEYS[1], ARGV[1])
            redis.call('SET', KEYS[2], ARGV[2])
            redis.call('INCR', KEYS[4])
            return 1
            """;

    private RedlockWorkerMain() {
    }

    /** The store's keys under a prefix: highest token, value, refused, accepted, stop. */
    public static String[] storeKeys(String prefix) {
        return new String[] {prefix + ":high", prefix + ":value", prefix + ":refused", prefix + ":accepted"};
    }

    /** The store key that tells the workers to stop once it is set. */
    public static String stopKey(String prefix) {
        return prefix + ":stop";
    }

    public static void main(String[] args) throws Exception {
        String prefix = args[1];
        Redlock redlock = Redlock.builder()
                .nodes(args[0].split(","))
                .keyPrefix(prefix)
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .commandTimeout(Duration.ofMillis(Long.parseLong(args[4])))
                .lostHoldListener(hold -> print("LOST " + System.currentTimeMillis() + " " + hold.cause()))
                .build();
        RedisClient storeClient = RedisClient.create(args[5]);
        DistributedLock lock = redlock.lock(args[2]);
        int threads = Integer.parseInt(args[6]);
        AtomicLong ok = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            StatefulRedisConnection<String, String> connection = storeClient.connect(StringCodec.UTF8);
            RedisCommands<String, String> store = connection.sync();
            Thread worker = new Thread(() -> {
                String[] keys = storeKeys(prefix);
                while (store.exists(stopKey(prefix)) == 0) {
                    try {
                        lock.lock();
                    } catch (SynchronizerException e) {
                        error(errors, e);
                        continue;
                    }
                    try {
                        long token = lock.fencingToken();
                        long value = store.eval(READ, ScriptOutputType.INTEGER, keys, Long.toString(token));
                        if (value >= 0 && (Long) store.eval(WRITE, ScriptOutputType.INTEGER, keys, Long.toString(token),
                                Long.toString(value + 1)) == 1L) {
                            ok.incrementAndGet();
                        }
                    } finally {
                        try {
                            lock.unlock();
                        } catch (RuntimeException e) {
                            error(errors, e);
                        }
                    }
                }
            }, "worker-" + t);
            worker.start();
            workers.add(worker);
        }
        print("READY");
        for (Thread worker : workers) {
            worker.join();
        }
        print("DONE ok=" + ok.get() + " errors=" + errors.get());
        redlock.close();
        storeClient.shutdown();
    }

    private static void error(AtomicLong errors, RuntimeException e) {
        errors.incrementAndGet();
        print("ERROR " + System.currentTimeMillis() + " " + e.getClass().getSimpleName() + " " + e.getMessage());
        try {
            Thread.sleep(50);   // not synchronisation: keeps a worker whose every call fails from flooding its output
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static synchronized void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
