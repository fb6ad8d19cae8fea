package dev.synchronizers.examples.boot;

import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.SpringApplication;

/**
 * Starts {@link ExampleApplication} against {@code REDIS_URL} if set, else against a throwaway
 * {@code redis-server} that the testkit starts on a free loopback port and stops when the JVM exits.
 * Start a second one with {@code --server.port=8081} against the same {@code REDIS_URL} to see the
 * job run on one instance at a time and the export limit hold across both.
 */
public final class ExampleLauncher {

    private ExampleLauncher() {
    }

    /**
     * Starts Redis if needed, then the application.
     *
     * @param args passed to Spring Boot
     */
    public static void main(String[] args) {
        List<String> arguments = new ArrayList<>(List.of(args));
        String url = System.getenv("REDIS_URL");
        if (url == null || url.isBlank()) {
            RedisServer server = RedisServers.startManaged();
            Runtime.getRuntime().addShutdownHook(new Thread(server::close, "stop-redis"));
            url = server.uri();
            System.out.println("Started a throwaway redis-server at " + url);
        }
        arguments.add("--synchronizers.uri=" + url);
        SpringApplication.run(ExampleApplication.class, arguments.toArray(String[]::new));
    }
}
