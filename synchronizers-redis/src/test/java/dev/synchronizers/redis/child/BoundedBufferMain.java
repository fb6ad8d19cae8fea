package dev.synchronizers.redis.child;

import dev.synchronizers.redis.RedisSynchronizers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.BitSet;

/**
 * A child process for the bounded-buffer test: one producer that puts items {@code [first, first +
 * count)} and one consumer that takes {@code count} items, through {@link SharedBuffer}; then prints
 * {@code TAKEN <hex of the bit set of items taken>}, or {@code FAILED <error>}.
 *
 * <p>Arguments: {@code <redis uri> <key prefix> <buffer name> <capacity> <first> <count>}.
 */
public final class BoundedBufferMain {

    private BoundedBufferMain() {
    }

    public static void main(String[] args) throws Exception {
        try (RedisSynchronizers client = RedisSynchronizers.builder().uri(args[0]).keyPrefix(args[1]).build()) {
            RedisClient plain = RedisClient.create(args[0]);
            try (StatefulRedisConnection<String, String> connection = plain.connect()) {
                SharedBuffer buffer = new SharedBuffer(client, connection.sync(), args[1], args[2],
                        Integer.parseInt(args[3]));
                int first = Integer.parseInt(args[4]);
                int count = Integer.parseInt(args[5]);
                System.out.println("READY");
                System.out.flush();
                BitSet taken = SharedBuffer.run(buffer, first, count);
                System.out.println("TAKEN " + SharedBuffer.hex(taken));
            } catch (Throwable e) {
                System.out.println("FAILED " + e);
            } finally {
                plain.shutdown();
            }
        }
        System.out.flush();
    }
}
