package dev.synchronizers.shedlock.spring;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The resource a scheduled job writes to, kept in Redis so that every JVM of a test shares it: a
 * counter that accepts a write only with a fencing token above every token it accepted before, and
 * a gauge of the job runs in progress that counts overlaps. A stand-in for the database of a real
 * job, which would check the token in its own transaction.
 */
final class FencedStore implements AutoCloseable {

    /** Accepts ARGV[1] if it is above the last accepted token: sets it, counts the write. */
    private static final String WRITE = """
            local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
            if tonumber(ARGV[1]) <= last then
              redis.call('HINCRBY', KEYS[1], 'refused', 1)
              return 0
            end
            redis.call('HSET', KEYS[1], 'last', ARGV[1])
            redis.call('HINCRBY', KEYS[1], 'written', 1)
            return 1
            """;

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final String key;

    FencedStore(String uri, String scope) {
        this.client = RedisClient.create(uri);
        this.connection = client.connect();
        this.redis = connection.sync();
        this.key = "store:{" + scope + "}";
    }

    /** Writes with {@code token}: true if the store accepted it. */
    boolean write(long token) {
        Long accepted = redis.eval(WRITE, ScriptOutputType.INTEGER, new String[] {key}, Long.toString(token));
        return accepted == 1L;
    }

    /** Marks a run as started: true if another run was in progress (an overlap, counted). */
    boolean begin() {
        boolean overlap = redis.hincrby(key, "active", 1) > 1;
        if (overlap) {
            redis.hincrby(key, "overlaps", 1);
        }
        return overlap;
    }

    /** Marks a run as ended. */
    void end() {
        redis.hincrby(key, "active", -1);
    }

    /** The counter {@code field} (written, refused, overlaps, active, last), 0 if never set. */
    long get(String field) {
        String value = redis.hget(key, field);
        return value == null ? 0 : Long.parseLong(value);
    }

    boolean exists(String flag) {
        return redis.exists(key + ":" + flag) == 1L;
    }

    void set(String flag) {
        redis.set(key + ":" + flag, "1");
    }

    void clear(String flag) {
        redis.del(key + ":" + flag);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
