package dev.synchronizers.spring.boot;

import java.util.List;
import java.util.Objects;

/**
 * Spring Boot's Redis connection details as the synchronizers auto-configuration reads them, the
 * same on every Boot line although each line has its own type for them: Boot 4's
 * {@code org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails} (read by
 * this artifact) and Boot 3's
 * {@code org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails} (read by
 * {@code synchronizers-spring-boot3}).
 *
 * <p>{@link SynchronizersAutoConfiguration} connects where these point when the
 * {@code synchronizers.*} properties name no address. It finds them through the context's
 * {@link Lookup} bean, which the auto-configuration artifact of the application's Boot line defines;
 * applications have no need to implement either type. What the library's URIs cannot carry (an SSL
 * bundle, a password of the sentinels themselves, a static master/replica set) fails start-up with a
 * message that says which {@code synchronizers.*} property to set instead, never a silent downgrade.
 *
 * <p>Every method reads Boot's details at the time of the call; none returns a value that changes
 * afterwards.
 */
public interface BootRedisDetails {

    /**
     * Returns the simple name of the Boot class that holds the details (e.g.
     * {@code PropertiesDataRedisConnectionDetails}), for messages.
     *
     * @return the class name, never null
     */
    String type();

    /**
     * Returns whether the details ask for TLS through an SSL bundle, anywhere in them.
     *
     * @return true if an SSL bundle is set
     */
    boolean usesSslBundle();

    /**
     * Returns the user name for the data servers.
     *
     * @return the user name, or null for none
     */
    String username();

    /**
     * Returns the password for the data servers.
     *
     * @return the password, or null for none
     */
    String password();

    /**
     * Returns the Sentinel set, if the details name one.
     *
     * @return the sentinels, or null if the details name none
     */
    Sentinel sentinel();

    /**
     * Returns the cluster's seed nodes, if the details name a cluster.
     *
     * @return the nodes as {@code host:port}, or null if the details name no cluster
     */
    List<String> clusterNodes();

    /**
     * Returns whether the details name a static master/replica set (Boot 4 only).
     *
     * @return true if they do
     */
    boolean masterReplica();

    /**
     * Returns the standalone server, if the details name one.
     *
     * @return the server, or null if the details name none
     */
    Standalone standalone();

    /**
     * A standalone server.
     *
     * @param host its host
     * @param port its port
     * @param database the database index
     */
    record Standalone(String host, int port, int database) {

        /**
         * Checks the host.
         *
         * @param host its host
         * @param port its port
         * @param database the database index
         * @throws NullPointerException if {@code host} is null
         */
        public Standalone {
            Objects.requireNonNull(host, "host must not be null");
        }
    }

    /**
     * A Sentinel set.
     *
     * @param nodes the sentinels as {@code host:port}
     * @param database the database index
     * @param master the name of the master the sentinels watch
     * @param password the password of the sentinels themselves, or null for none
     */
    record Sentinel(List<String> nodes, int database, String master, String password) {

        /**
         * Copies the nodes.
         *
         * @param nodes the sentinels as {@code host:port}
         * @param database the database index
         * @param master the name of the master the sentinels watch
         * @param password the password of the sentinels themselves, or null for none
         * @throws NullPointerException if {@code nodes}, one of them, or {@code master} is null
         */
        public Sentinel {
            nodes = List.copyOf(nodes);
            Objects.requireNonNull(master, "master must not be null");
        }
    }

    /**
     * Finds the application's Boot connection details. The auto-configuration of a Boot line
     * defines one bean of this type; {@link SynchronizersAutoConfiguration} calls it once, when it
     * makes the client and the properties name no address.
     */
    @FunctionalInterface
    interface Lookup {

        /**
         * Returns the application's Boot connection details.
         *
         * @return them, or null if the context has no unique connection details bean
         */
        BootRedisDetails find();
    }
}
