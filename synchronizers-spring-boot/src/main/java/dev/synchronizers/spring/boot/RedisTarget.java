package dev.synchronizers.spring.boot;

import dev.synchronizers.redis.RedisSynchronizers;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a {@link RedisSynchronizers} connects: one URI (standalone or Sentinel) or a cluster's seed
 * URIs. Built from the {@code synchronizers.*} properties, or from Spring Boot's connection details
 * when those name no address. The one place that turns {@code host:port} lists into URIs.
 *
 * @param uri the URI of a standalone server or Sentinel set, or null for a cluster
 * @param clusterSeeds the cluster's seed URIs, or null for a URI
 * @param source where it came from, for messages (never a password)
 */
record RedisTarget(String uri, List<String> clusterSeeds, String source) {

    /** Boot's default Redis, used when neither the properties nor Boot's connection details name one. */
    static final RedisTarget LOCALHOST = new RedisTarget("redis://localhost:6379", null, "Spring Boot's default");

    /** Applies this target to {@code builder}. */
    void applyTo(RedisSynchronizers.Builder builder) {
        if (clusterSeeds != null) {
            builder.cluster(clusterSeeds.toArray(String[]::new));
        } else {
            builder.uri(uri);
        }
    }

    /**
     * Returns the target the properties name, or null if they name none (no uri, no sentinel, no
     * cluster nodes). Redlock nodes are not a target of this kind: the caller checks them first.
     *
     * @throws IllegalStateException if they name more than one, naming the properties
     */
    static RedisTarget fromProperties(SynchronizersProperties properties) {
        List<String> given = given(properties);
        if (given.size() > 1) {
            throw new IllegalStateException("synchronizers: set only one of " + String.join(", ", given)
                    + " (each says where Redis is)");
        }
        SynchronizersProperties.Sentinel sentinel = properties.getSentinel();
        if (hasText(properties.getUri())) {
            return new RedisTarget(properties.getUri(), null, "synchronizers.uri");
        }
        if (hasText(sentinel.getMaster()) || !sentinel.getNodes().isEmpty()) {
            if (!hasText(sentinel.getMaster()) || sentinel.getNodes().isEmpty()) {
                throw new IllegalStateException("synchronizers.sentinel needs both master and nodes: master="
                        + sentinel.getMaster() + ", nodes=" + sentinel.getNodes());
            }
            return new RedisTarget(sentinelUri(sentinel.getNodes(), properties.getDatabase(), sentinel.getMaster(),
                    properties.getUsername(), properties.getPassword()), null, "synchronizers.sentinel");
        }
        if (!properties.getCluster().getNodes().isEmpty()) {
            return new RedisTarget(null, nodeUris(properties.getCluster().getNodes(), properties.getUsername(),
                    properties.getPassword()), "synchronizers.cluster.nodes");
        }
        return null;
    }

    /** The address properties that are set, by name; Redlock nodes included. */
    static List<String> given(SynchronizersProperties properties) {
        List<String> given = new ArrayList<>();
        if (hasText(properties.getUri())) {
            given.add("synchronizers.uri");
        }
        if (hasText(properties.getSentinel().getMaster()) || !properties.getSentinel().getNodes().isEmpty()) {
            given.add("synchronizers.sentinel");
        }
        if (!properties.getCluster().getNodes().isEmpty()) {
            given.add("synchronizers.cluster.nodes");
        }
        if (!properties.getRedlock().getNodes().isEmpty()) {
            given.add("synchronizers.redlock.nodes");
        }
        return given;
    }

    /** {@code host:port} entries as {@code redis://} URIs with the credentials; URIs are kept as given. */
    static List<String> nodeUris(List<String> nodes, String username, String password) {
        List<String> uris = new ArrayList<>();
        for (String node : nodes) {
            uris.add(node.contains("://") ? node : "redis://" + userInfo(username, password) + hostPort(node));
        }
        return uris;
    }

    /** A {@code redis-sentinel://} URI naming every sentinel, the database and the master. */
    static String sentinelUri(List<String> sentinels, int database, String master, String username, String password) {
        List<String> hosts = new ArrayList<>();
        for (String sentinel : sentinels) {
            hosts.add(hostPort(sentinel));
        }
        return "redis-sentinel://" + userInfo(username, password) + String.join(",", hosts) + "/" + database + "#"
                + master;
    }

    /** A {@code redis://} URI of one server. */
    static String serverUri(String host, int port, int database, String username, String password) {
        return "redis://" + userInfo(username, password) + host + ":" + port + "/" + database;
    }

    private static String hostPort(String node) {
        String trimmed = node.trim();
        int colon = trimmed.lastIndexOf(':');
        if (colon <= 0 || colon == trimmed.length() - 1) {
            throw new IllegalArgumentException("a Redis node must be host:port or a redis:// URI: \"" + node + "\"");
        }
        return trimmed;
    }

    private static String userInfo(String username, String password) {
        if (!hasText(password)) {
            // A username alone authenticates nobody (and Lettuce would read it as a password).
            return "";
        }
        return (hasText(username) ? encode(username) : "") + ":" + encode(password) + "@";
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static boolean hasText(String text) {
        return text != null && !text.isBlank();
    }
}
