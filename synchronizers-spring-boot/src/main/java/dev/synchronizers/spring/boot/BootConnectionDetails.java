package dev.synchronizers.spring.boot;

/**
 * Reads Spring Boot's Redis connection details ({@link BootRedisDetails}, from
 * {@code spring.data.redis.*}, or a bean that Testcontainers or Docker Compose support defines) as a
 * {@link RedisTarget}. The same rules on every Boot line.
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
     * Returns the target {@code details} name, or null if they name none.
     *
     * @throws IllegalStateException if they use a setting the library cannot follow (see the class comment)
     */
    static RedisTarget target(BootRedisDetails details) {
        String source = "Spring Boot's Redis connection details (" + details.type() + ")";
        if (details.usesSslBundle()) {
            throw unsupported(source, "an SSL bundle");
        }
        String username = details.username();
        String password = details.password();
        BootRedisDetails.Sentinel sentinel = details.sentinel();
        if (sentinel != null) {
            if (RedisTarget.hasText(sentinel.password())) {
                throw unsupported(source, "a password for the sentinels themselves");
            }
            return new RedisTarget(RedisTarget.sentinelUri(sentinel.nodes(), sentinel.database(), sentinel.master(),
                    username, password), null, source);
        }
        if (details.clusterNodes() != null) {
            return new RedisTarget(null, RedisTarget.nodeUris(details.clusterNodes(), username, password), source);
        }
        if (details.masterReplica()) {
            throw unsupported(source, "a static master/replica set");
        }
        BootRedisDetails.Standalone standalone = details.standalone();
        if (standalone == null) {
            return null;
        }
        return new RedisTarget(RedisTarget.serverUri(standalone.host(), standalone.port(), standalone.database(),
                username, password), null, source);
    }

    private static IllegalStateException unsupported(String source, String what) {
        return new IllegalStateException(source + " use " + what + ", which synchronizers cannot follow: set"
                + " synchronizers.uri (rediss:// for TLS), synchronizers.sentinel.* or synchronizers.cluster.nodes");
    }
}
