/**
 * Internal: may change without notice. Throwaway Redis servers on loopback for the tests, the
 * demo and the benchmarks.
 *
 * <p>{@link dev.synchronizers.testkit.RedisServers} starts a {@link
 * dev.synchronizers.testkit.RedisServer}, taking in order: the server named by the {@code
 * REDIS_URL} environment variable (loopback only), a {@code redis-server} binary on the {@code
 * PATH}, a Docker engine through Testcontainers if one answers, and the Redis 6.2 binary bundled
 * in the {@code com.github.codemonstur:embedded-redis} jar. {@link
 * dev.synchronizers.testkit.RedisExtension} hands servers to JUnit 5 test classes, {@link
 * dev.synchronizers.testkit.RedisCluster} forms a Redis Cluster of such servers (3 masters and 3
 * replicas by default) and fails over, kills, pauses, restarts and reshards its nodes, and {@link
 * dev.synchronizers.testkit.ChildJvm} runs a main class in a second JVM for tests that kill a
 * client process. {@link dev.synchronizers.testkit.FaultProxy} sits between a client and a server
 * to drop, hold or delay replies, cut connections and partition one client.
 *
 * <p>The testkit only ever signals processes it started itself, identified by the pid of the
 * {@link java.lang.Process} it created, and it only ever talks to {@code 127.0.0.1}. A JVM
 * shutdown hook stops whatever this JVM started and did not stop.
 *
 * <p>Tests that need more than one server (Cluster, Sentinel, Redlock) are
 * tagged {@code topology} and run only under the {@code topologies} profile, e.g. {@code ./mvnw
 * -pl synchronizers-testkit verify -Ptopologies -Dtest=RedisClusterTest}; see {@code
 * docs/getting-started.md}.
 *
 * <p>Only {@code RedisExtension} needs JUnit on the class path; the rest runs in a plain
 * program such as the demo or a JMH benchmark.
 */
package dev.synchronizers.testkit;
