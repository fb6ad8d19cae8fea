package dev.synchronizers.redis.child;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.Synchronizers;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.Condition;

/**
 * The {@code BoundedBuffer} of {@link Condition}'s javadoc, with its items in a Redis list so that
 * producers and consumers of several processes share it: the list is only touched under the lock,
 * {@code notFull} and {@code notEmpty} are the lock's first and second conditions.
 */
public final class SharedBuffer {

    private final DistributedLock lock;
    private final Condition notFull;
    private final Condition notEmpty;
    private final RedisCommands<String, String> redis;
    private final String items;
    private final int capacity;

    public SharedBuffer(Synchronizers client, RedisCommands<String, String> redis, String prefix, String name,
            int capacity) {
        this.lock = client.lock(name);
        this.notFull = lock.newCondition();
        this.notEmpty = lock.newCondition();
        this.redis = redis;
        this.items = prefix + ":buffer:{" + name + "}";
        this.capacity = capacity;
    }

    public void put(int item) throws InterruptedException {
        lock.lock();
        try {
            while (redis.llen(items) == capacity) {
                notFull.await();
            }
            redis.rpush(items, Integer.toString(item));
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
    }

    public int take() throws InterruptedException {
        lock.lock();
        try {
            while (redis.llen(items) == 0) {
                notEmpty.await();
            }
            int item = Integer.parseInt(redis.lpop(items));
            notFull.signal();
            return item;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs one producer of {@code [first, first + count)} and one consumer of {@code count} items on
     * two threads, and returns the items the consumer took.
     *
     * @throws IllegalStateException if the consumer took an item twice
     */
    public static BitSet run(SharedBuffer buffer, int first, int count) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<?> producer = threads.submit(() -> {
                for (int i = first; i < first + count; i++) {
                    buffer.put(i);
                }
                return null;
            });
            Future<BitSet> consumer = threads.submit(() -> {
                BitSet taken = new BitSet();
                for (int i = 0; i < count; i++) {
                    int item = buffer.take();
                    if (taken.get(item)) {
                        throw new IllegalStateException("item " + item + " taken twice");
                    }
                    taken.set(item);
                }
                return taken;
            });
            producer.get();
            return consumer.get();
        } finally {
            threads.shutdownNow();
        }
    }

    public static String hex(BitSet bits) {
        return HexFormat.of().formatHex(bits.toByteArray());
    }

    public static BitSet fromHex(String hex) {
        return BitSet.valueOf(HexFormat.of().parseHex(hex));
    }
}
