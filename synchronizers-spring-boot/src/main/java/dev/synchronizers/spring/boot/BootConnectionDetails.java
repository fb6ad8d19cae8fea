package dev.synchronizers.spring.boot;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;

/**
 * Reads Spring Boot's {@link DataRedisConnectionDetails} (from {@code spring.data.redis.*}, or a
 * bean that Testcontainers or Docker Compose support defines) as a {@link RedisTarget}. Loaded only
 * when Spring Boot's Redis support is on the class path.
 *
 * <p>Only what the library's URIs can carry is taken: host, port, database, username and password
 * of a standalone server, a Sentinel set or a cluster. An SSL bundle, a Sentinel's own password and
 * a static master/replica set cannot be expressed that way; each fails start-up with a message that
 * says to set {@code synchronizers.uri} (or the node properties) instead, never a silent downgrade.
 */
final class BootConnectionDetails {

    private BootConnectionDetails() {
    }

    /**
     * Returns the target {@code details} name.
     *
     * @throws IllegalStateException if they use a setting the library cannot follow (see the class comment)
     */
    static RedisTarget target(DataRedisConnectionDetails details) {
        String source = "Spring Boot's Redis connection details (" + details.getClass().getSimpleName() + ")";
        if (details.getSslBundle() != null) {
            throw unsupported(source, "an SSL bundle");
        }
        String username = details.getUsername();
        String password = details.getPassword();
        DataRedisConnectionDetails.Sentinel sentinel = details.getSentinel();
        if (sentinel != null) {
            if (RedisTarget.hasText(sentinel.getPassword())) {
                throw unsupported(source, "a password for the sentinels themselves");
            }
            return new RedisTarget(RedisTarget.sentinelUri(hostPorts(sentinel.getNodes()), sentinel.getDatabase(),
                    sentinel.getMaster(), username, password), null, source);
        }
        DataRedisConnectionDetails.Cluster cluster = details.getCluster();
        if (cluster != null) {
            return new RedisTarget(null, RedisTarget.nodeUris(hostPorts(cluster.getNodes()), username, password), source);
        }
        if (details.getMasterReplica() != null) {
            throw unsupported(source, "a static master/replica set");
        }
        DataRedisConnectionDetails.Standalone standalone = details.getStandalone();
        if (standalone == null) {
            return null;
        }
        return new RedisTarget(RedisTarget.serverUri(standalone.getHost(), standalone.getPort(), standalone.getDatabase(),
                username, password), null, source);
    }

    private static List<String> hostPorts(List<DataRedisConnectionDetails.Node> nodes) {
        List<String> hostPorts = new ArrayList<>();
        for (DataRedisConnectionDetails.Node node : nodes) {
            hostPorts.add(node.host() + ":" + node.port());
        }
        return hostPorts;
    }

    private static IllegalStateException unsupported(String source, String what) {
        return new IllegalStateException(source + " use " + what + ", which synchronizers cannot follow: set"
                + " synchronizers.uri (rediss:// for TLS), synchronizers.sentinel.* or synchronizers.cluster.nodes");
    }
}
