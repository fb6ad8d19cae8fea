package dev.synchronizers.redis.quorum;

import dev.synchronizers.redis.Redlock;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Standalone servers for the Redlock tests, each with a connection of its own to inspect and
 * tamper with it node by node: a JUnit extension, registered on a static field, that starts them
 * before a class's first test and stops them after its last, as the testkit's {@code
 * RedisExtension} does for one server.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedlockNodes nodes = new RedlockNodes(3);
 * }</pre>
 *
 * <p>The lists it returns are views: they fill when the nodes start and empty when they stop, so
 * a class may keep them in static fields. Test classes that share one instance (through a common
 * superclass) run one after another, each with nodes of its own.
 */
public final class RedlockNodes implements BeforeAllCallback, AfterAllCallback {

    private final int count;
    private final List<RedisServer> servers = new ArrayList<>();
    private final List<RedisClient> inspectors = new ArrayList<>();
    private final List<RedisCommands<String, String>> redis = new ArrayList<>();
    private String owner;   // unique id of the class context that started the nodes

    /**
     * Nodes that start with the class.
     *
     * @param count how many nodes
     */
    RedlockNodes(int count) {
        this.count = count;
    }

    /** Starts the managed servers on free loopback ports and connects to each, unless an enclosing class did. */
    @Override
    public void beforeAll(ExtensionContext context) {
        if (owner != null) {
            return;
        }
        owner = context.getUniqueId();
        try {
            for (int i = 0; i < count; i++) {
                RedisServer server = RedisServers.startManaged();
                servers.add(server);
                RedisClient inspector = RedisClient.create(server.uri());
                inspectors.add(inspector);
                redis.add(inspector.connect(StringCodec.UTF8).sync());
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Closes the connections and stops the servers, after the class that started them. */
    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getUniqueId().equals(owner)) {
            close();
        }
    }

    /** The servers, in node order. */
    List<RedisServer> servers() {
        return Collections.unmodifiableList(servers);
    }

    /** One connection per node, in node order, for inspecting and tampering. */
    List<RedisCommands<String, String>> redis() {
        return Collections.unmodifiableList(redis);
    }

    /** The nodes' URIs, in node order, as {@code Redlock.Builder.nodes} takes them. */
    String[] uris() {
        return servers.stream().map(RedisServer::uri).toArray(String[]::new);
    }

    private void close() {
        inspectors.forEach(inspector -> inspector.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        servers.forEach(RedisServer::close);
        inspectors.clear();
        redis.clear();
        servers.clear();
        owner = null;
    }
}
