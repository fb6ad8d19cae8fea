package dev.synchronizers.spring.boot3;

import dev.synchronizers.spring.boot.BootRedisDetails;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails;

/**
 * Spring Boot 3's {@link RedisConnectionDetails} as {@link BootRedisDetails}. Boot 3.5 sets an SSL
 * bundle per part (standalone, Sentinel, cluster) where Boot 4 has one for all, and has no static
 * master/replica set.
 */
final class RedisConnectionDetailsView implements BootRedisDetails {

    private final RedisConnectionDetails details;

    RedisConnectionDetailsView(RedisConnectionDetails details) {
        this.details = details;
    }

    @Override
    public String type() {
        return details.getClass().getSimpleName();
    }

    @Override
    public boolean usesSslBundle() {
        RedisConnectionDetails.Standalone standalone = details.getStandalone();
        RedisConnectionDetails.Sentinel sentinel = details.getSentinel();
        RedisConnectionDetails.Cluster cluster = details.getCluster();
        return (standalone != null && standalone.getSslBundle() != null)
                || (sentinel != null && sentinel.getSslBundle() != null)
                || (cluster != null && cluster.getSslBundle() != null);
    }

    @Override
    public String username() {
        return details.getUsername();
    }

    @Override
    public String password() {
        return details.getPassword();
    }

    @Override
    public Sentinel sentinel() {
        RedisConnectionDetails.Sentinel sentinel = details.getSentinel();
        return sentinel == null ? null
                : new Sentinel(hostPorts(sentinel.getNodes()), sentinel.getDatabase(), sentinel.getMaster(),
                        sentinel.getPassword());
    }

    @Override
    public List<String> clusterNodes() {
        RedisConnectionDetails.Cluster cluster = details.getCluster();
        return cluster == null ? null : hostPorts(cluster.getNodes());
    }

    @Override
    public boolean masterReplica() {
        return false;
    }

    @Override
    public Standalone standalone() {
        RedisConnectionDetails.Standalone standalone = details.getStandalone();
        return standalone == null ? null
                : new Standalone(standalone.getHost(), standalone.getPort(), standalone.getDatabase());
    }

    private static List<String> hostPorts(List<RedisConnectionDetails.Node> nodes) {
        List<String> hostPorts = new ArrayList<>();
        for (RedisConnectionDetails.Node node : nodes) {
            hostPorts.add(node.host() + ":" + node.port());
        }
        return hostPorts;
    }
}
