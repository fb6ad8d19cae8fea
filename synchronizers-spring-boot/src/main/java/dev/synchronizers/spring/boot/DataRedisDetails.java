package dev.synchronizers.spring.boot;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;

/**
 * Spring Boot 4's {@link DataRedisConnectionDetails} as {@link BootRedisDetails}. Loaded only when
 * Spring Boot's Redis support is on the class path.
 */
final class DataRedisDetails implements BootRedisDetails {

    private final DataRedisConnectionDetails details;

    private DataRedisDetails(DataRedisConnectionDetails details) {
        this.details = details;
    }

    /** Returns a view of {@code details}. */
    static BootRedisDetails of(DataRedisConnectionDetails details) {
        return new DataRedisDetails(details);
    }

    @Override
    public String type() {
        return details.getClass().getSimpleName();
    }

    @Override
    public boolean usesSslBundle() {
        return details.getSslBundle() != null;
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
        DataRedisConnectionDetails.Sentinel sentinel = details.getSentinel();
        return sentinel == null ? null
                : new Sentinel(hostPorts(sentinel.getNodes()), sentinel.getDatabase(), sentinel.getMaster(),
                        sentinel.getPassword());
    }

    @Override
    public List<String> clusterNodes() {
        DataRedisConnectionDetails.Cluster cluster = details.getCluster();
        return cluster == null ? null : hostPorts(cluster.getNodes());
    }

    @Override
    public boolean masterReplica() {
        return details.getMasterReplica() != null;
    }

    @Override
    public Standalone standalone() {
        DataRedisConnectionDetails.Standalone standalone = details.getStandalone();
        return standalone == null ? null
                : new Standalone(standalone.getHost(), standalone.getPort(), standalone.getDatabase());
    }

    private static List<String> hostPorts(List<DataRedisConnectionDetails.Node> nodes) {
        List<String> hostPorts = new ArrayList<>();
        for (DataRedisConnectionDetails.Node node : nodes) {
            hostPorts.add(node.host() + ":" + node.port());
        }
        return hostPorts;
    }
}
