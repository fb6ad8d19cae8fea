package dev.synchronizers.examples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example application started with Redis down and {@code synchronizers.fail-fast=false}, as
 * docs/spring-boot.md says it can be: the context starts, the export endpoint answers 503 (the
 * client's {@code SynchronizerUnavailableException}, mapped), and health is DOWN. Redis is a loopback
 * port nothing listens on. {@link ExampleApplicationTest} is the same application with Redis up.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "synchronizers.fail-fast=false", "synchronizers.command-timeout=500ms"})
@DirtiesContext
class ExampleApplicationRedisDownTest {

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) throws IOException {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = socket.getLocalPort();
        }
        registry.add("synchronizers.uri", () -> "redis://127.0.0.1:" + closed);
    }

    @Test
    void export_redisDown_503WithTheReason() throws Exception {
        HttpResponse<String> export = get("/exports/a");
        assertThat(export.statusCode()).isEqualTo(503);
        assertThat(export.body()).contains("Redis");
    }

    @Test
    void health_redisDown_synchronizersDown() throws Exception {
        HttpResponse<String> health = get("/actuator/health");
        assertThat(health.statusCode()).isEqualTo(503);
        assertThat(health.body()).containsPattern("\"synchronizers\":\\{\"details\":\\{[^}]*\\},\"status\":\"DOWN\"");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
