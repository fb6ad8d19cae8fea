package dev.synchronizers.redis.topology;

import dev.synchronizers.fixture.Opened;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisSentinels;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

/**
 * {@link HandleLossOnTopology}'s loss tests on a master with two replicas under three sentinels,
 * started once for the class and reached with a {@code redis-sentinel://} URI. A partitioned holder
 * reaches the data servers through proxies and the sentinels directly: only its master is cut off.
 */
@Tag("topology")
class SentinelHandleLossTest extends HandleLossOnTopology {

    private static RedisSentinels sentinels;

    @BeforeAll
    static void startSentinels() {
        sentinels = RedisSentinels.start();
    }

    @AfterAll
    static void stopSentinels() {
        if (sentinels != null) {
            sentinels.close();
        }
    }

    @BeforeEach
    void settled() {
        sentinels.awaitSettled();
    }

    @Override
    RedisSynchronizers.Builder topology() {
        return RedisSynchronizers.builder().uri(sentinels.sentinelUri());
    }

    @Override
    List<Integer> dataPorts() {
        return sentinels.servers().stream().map(RedisServer::port).toList();
    }

    @Override
    RedisCommands<String, String> masterOf(String key, Opened opened) {
        return opened.commands(sentinels.master().uri());
    }
}
