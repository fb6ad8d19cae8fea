package dev.synchronizers.redis.topology;

import dev.synchronizers.redis.support.Replies;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;

/** Reads what a topology needs to know of the server it connected to. */
final class ServerVersion {

    /**
     * The test every script makes before it publishes a wake-up (its {@code publish} line), run
     * as a script of its own: 1 where the scripts use {@code SPUBLISH}, 0 where {@code PUBLISH}.
     * A script, not {@code INFO}: it needs no permission beyond what the library needs anyway
     * ({@code INFO} is in the {@code @dangerous} ACL category that least-privilege users lack), and
     * it cannot disagree with the scripts.
     */
    private static final String PROBE =
            "return (redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000) and 1 or 0";

    private ServerVersion() {
    }

    /**
     * Tells whether the server's scripts publish wake-ups with {@code SPUBLISH} (Redis 7 or later),
     * so that waiters must {@code SSUBSCRIBE}; classic Pub/Sub before.
     */
    static boolean shardedPubSub(RedisClusterAsyncCommands<String, String> commands, Duration timeout) {
        Long sharded = Replies.await(commands.<Long>eval(PROBE, ScriptOutputType.INTEGER), timeout,
                "learn how the server's scripts publish wake-ups (a script reading redis.REDIS_VERSION_NUM)");
        return sharded != null && sharded == 1L;
    }
}
