package dev.synchronizers.testkit;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * Redis in a Docker container through Testcontainers, the third source. Testcontainers classes
 * are loaded only when a Docker engine looks present, so that a machine without one neither
 * waits for it nor prints Testcontainers' errors.
 */
final class DockerRedis {

    private static final Logger log = LoggerFactory.getLogger(DockerRedis.class);
    private static final String IMAGE = "redis:7.2";
    private static final int REDIS_PORT = 6379;
    private static final long CHECK_SECONDS = 3;

    private static volatile Boolean available;

    private DockerRedis() {
    }

    /**
     * Returns whether a Docker engine answers. Computed once per JVM; returns false at once when
     * no Docker endpoint is configured or present, and within a few seconds otherwise.
     */
    static boolean available() {
        Boolean known = available;
        if (known == null) {
            known = endpointPresent() && engineAnswers();
            available = known;
        }
        return known;
    }

    /**
     * Starts a container running {@code redis-server} with {@code extraArgs}, published on loopback
     * only. A cluster node ({@code --cluster-enabled} among the arguments) runs in the host's
     * network instead, see {@link #startOnHostNetwork}.
     */
    static RedisServer start(List<String> extraArgs) {
        if (extraArgs.contains("--cluster-enabled")) {
            return startOnHostNetwork(extraArgs);
        }
        List<String> command = new ArrayList<>(List.of("redis-server", "--save", "", "--appendonly", "no",
                "--protected-mode", "no"));   // the container's own network namespace; published on loopback
        command.addAll(extraArgs);
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withExposedPorts(REDIS_PORT)
                .withCommand(command.toArray(new String[0]))
                .withCreateContainerCmdModifier(create -> {
                    HostConfig hostConfig = create.getHostConfig();
                    if (hostConfig != null) {
                        hostConfig.withPortBindings(new PortBinding(
                                Ports.Binding.bindIp(RedisServer.LOOPBACK), ExposedPort.tcp(REDIS_PORT)));
                    }
                });
        container.start();
        String host = container.getHost();
        if (!"localhost".equals(host) && !RedisServer.LOOPBACK.equals(host)) {
            container.stop();
            throw new IllegalStateException("The Docker engine publishes ports on " + host
                    + ", not on loopback; the testkit talks to 127.0.0.1 only");
        }
        return RedisServer.container("DOCKER", container.getMappedPort(REDIS_PORT), container::stop);
    }

    /**
     * Starts a cluster node in the host's network namespace, bound to {@code 127.0.0.1} on a port
     * whose bus port ({@code + 10000}) was free too. Cluster nodes announce their own address to
     * each other and to clients, so behind a port mapping the other nodes and the clients would
     * be sent to the container's address; in the host's network that address is loopback itself.
     * Works where the engine shares the host's network (Docker Engine on Linux); elsewhere the
     * node does not come up and this throws.
     */
    private static RedisServer startOnHostNetwork(List<String> extraArgs) {
        int port = RedisServer.freePort(true);
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port),
                "--bind", RedisServer.LOOPBACK, "--protected-mode", "yes", "--save", "", "--appendonly", "no"));
        command.addAll(extraArgs);
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withNetworkMode("host")
                .withCommand(command.toArray(new String[0]))
                .waitingFor(Wait.forLogMessage(".*Ready to accept connections.*\\n", 1));
        container.start();
        return RedisServer.container("DOCKER", port, container::stop);
    }

    /** Whether any Docker endpoint that Testcontainers would try is configured or exists. */
    private static boolean endpointPresent() {
        if (System.getenv("DOCKER_HOST") != null || System.getProperty("docker.host") != null) {
            return true;
        }
        String home = System.getProperty("user.home", "");
        Path properties = Paths.get(home, ".testcontainers.properties");
        if (Files.isReadable(properties)) {
            Properties values = new Properties();
            try (InputStream in = Files.newInputStream(properties)) {
                values.load(in);
            } catch (IOException e) {
                // unreadable: ignore it as Testcontainers would
            }
            if (values.containsKey("docker.host") || values.containsKey("tc.host")) {
                return true;
            }
        }
        List<Path> sockets = new ArrayList<>(List.of(
                Paths.get("/var/run/docker.sock"),
                Paths.get(home, ".docker", "run", "docker.sock"),
                Paths.get(home, ".docker", "desktop", "docker.sock"),
                Paths.get(home, ".colima", "default", "docker.sock"),
                Paths.get(home, ".rd", "docker.sock")));
        String runtimeDir = System.getenv("XDG_RUNTIME_DIR");
        if (runtimeDir != null) {
            sockets.add(Paths.get(runtimeDir, "docker.sock"));
        }
        return sockets.stream().anyMatch(Files::exists);
    }

    /** Asks Testcontainers, on a daemon thread, bounded to a few seconds. */
    private static boolean engineAnswers() {
        CompletableFuture<Boolean> check = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                check.complete(DockerClientFactory.instance().isDockerAvailable());
            } catch (Throwable t) {   // includes NoClassDefFoundError when Testcontainers is absent
                check.completeExceptionally(t);
            }
        }, "testkit-docker-check");
        thread.setDaemon(true);
        thread.start();
        try {
            return check.get(CHECK_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            log.info("No Docker engine answered within {} s; not using Docker", CHECK_SECONDS);
            return false;
        } catch (ExecutionException e) {
            log.debug("Docker is not usable", e.getCause());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
