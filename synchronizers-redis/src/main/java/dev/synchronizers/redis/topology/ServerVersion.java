package dev.synchronizers.redis.topology;

import dev.synchronizers.redis.support.Replies;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads what a topology needs to know of the server it connected to. */
final class ServerVersion {

    private static final Pattern VERSION = Pattern.compile("(?m)^redis_version:(\\d+)\\.");

    private ServerVersion() {
    }

    /**
     * Tells whether the server answering {@code INFO server} is Redis 7 or later, whose scripts
     * publish wake-ups with {@code SPUBLISH} (see the scripts' {@code publish} line). A server that
     * does not say is taken as older: classic Pub/Sub works everywhere.
     */
    static boolean shardedPubSub(RedisClusterAsyncCommands<String, String> commands, Duration timeout) {
        String info = Replies.await(commands.info("server"), timeout, "read the Redis version (INFO server)");
        Matcher m = VERSION.matcher(info);
        return m.find() && Integer.parseInt(m.group(1)) >= 7;
    }
}
