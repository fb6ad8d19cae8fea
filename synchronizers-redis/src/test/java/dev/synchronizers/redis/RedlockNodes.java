package dev.synchronizers.redis;

import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Standalone servers for the Redlock tests, each with a connection of its own to inspect and
 * tamper with it node by node; started once per test class and stopped by {@link #close()}.
 */
final class RedlockNodes implements AutoCloseable {

    private final List<RedisServer> servers = new ArrayList<>();
    private final List<RedisClient> inspectors = new ArrayList<>();
    private final List<RedisCommands<String, String>> redis = new ArrayList<>();

    private RedlockNodes() {
    }

    /**
     * Starts {@code count} managed servers on free loopback ports and connects to each.
     *
     * @param count how many nodes
     * @return the started nodes
     */
    static RedlockNodes start(int count) {
        RedlockNodes nodes = new RedlockNodes();
        try {
            for (int i = 0; i < count; i++) {
                RedisServer server = RedisServers.startManaged();
                nodes.servers.add(server);
                RedisClient inspector = RedisClient.create(server.uri());
                nodes.inspectors.add(inspector);
                nodes.redis.add(inspector.connect(StringCodec.UTF8).sync());
            }
        } catch (RuntimeException | Error e) {
            nodes.close();
            throw e;
        }
        return nodes;
    }

    /** The servers, in node order. */
    List<RedisServer> servers() {
        return servers;
    }

    /** One connection per node, in node order, for inspecting and tampering. */
    List<RedisCommands<String, String>> redis() {
        return redis;
    }

    /** The nodes' URIs, in node order, as {@code Redlock.Builder.nodes} takes them. */
    String[] uris() {
        return servers.stream().map(RedisServer::uri).toArray(String[]::new);
    }

    /** Closes the connections and stops the servers. */
    @Override
    public void close() {
        inspectors.forEach(inspector -> inspector.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        servers.forEach(RedisServer::close);
    }
}
