package dev.synchronizers.examples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.synchronizers.LockHandle;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example application, started whole (web server, scheduler, actuator) against a throwaway
 * redis-server: the job runs under the starter's ShedLock provider with a fencing token, the export
 * endpoint answers 429 while every permit of the fleet is taken and 200 once one is free, and the
 * {@code synchronizers} health indicator is in the health endpoint but not in the liveness group,
 * and an instance that finds the job's lock held by another instance logs that it skipped the run.
 */
// The job every 2 s: it keeps its lock for 1 s (lockAtLeastFor), so another client that waits for
// the lock gets it within a second, rather than racing each run at the lock's expiry.
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "example.report.cron=*/2 * * * * *", "example.exports.wait=PT0.2S", "example.exports.work=PT0S"})
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
class ExampleApplicationTest {

    private static RedisServer server;

    @LocalServerPort
    int port;

    @Autowired
    ReportJob job;

    @Autowired
    Synchronizers synchronizers;

    @Autowired
    LockProvider lockProvider;

    @Autowired
    HealthEndpointGroups groups;

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startRedis() {
        server = RedisServers.start();
    }

    @AfterAll
    static void stopRedis() {
        server.close();
    }

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("synchronizers.uri", () -> server.uri());
    }

    @Test
    void job_runsUnderTheStartersLockProvider_withAFencingToken() throws Exception {
        assertThat(lockProvider.getClass().getSimpleName()).isEqualTo("SynchronizersLockProvider");
        assertThat(job.awaitFirstRun(Duration.ofSeconds(60))).isTrue();
        assertThat(job.lastToken()).isPositive();
    }

    /**
     * Another instance (a second client on the same Redis and key prefix) holds the job's lock: this
     * instance logs the skipped run, the line docs/spring-boot.md's two-instance walkthrough shows.
     */
    @Test
    void job_lockHeldByAnotherInstance_logsTheSkippedRun(CapturedOutput output) throws Exception {
        try (RedisSynchronizers otherInstance = RedisSynchronizers.builder().uri(server.uri()).keyPrefix("example")
                .build()) {
            LockHandle held = otherInstance.lock("example-report").tryAcquire(Duration.ofSeconds(60)).orElseThrow();
            try {
                String line = "example-report skipped on this instance: its lock is held by another instance";
                Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
                while (!output.getOut().contains(line) && Instant.now().isBefore(deadline)) {
                    Thread.sleep(50);   // polling the log, which has no event to wait on
                }
                assertThat(output.getOut()).contains(line);
            } finally {
                held.release();
            }
        }
    }

    @Test
    void export_allPermitsTaken_429_thenOneFree_200() throws Exception {
        assertThat(get("/exports/a").statusCode()).isEqualTo(200);
        Optional<PermitHandle> all = synchronizers.semaphore("exports").tryAcquirePermits(2, Duration.ofSeconds(10));
        assertThat(all).isPresent();
        PermitHandle held = all.get();
        try {
            assertThat(get("/exports/b").statusCode()).isEqualTo(429);
        } finally {
            held.release();
        }
        assertThat(get("/exports/c").statusCode()).isEqualTo(200);
    }

    @Test
    void health_listsSynchronizersUp_andLivenessLeavesItOut() throws Exception {
        HttpResponse<String> health = get("/actuator/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).containsPattern("\"synchronizers\":\\{\"details\":\\{[^}]*\\},\"status\":\"UP\"");
        assertThat(groups.getPrimary().isMember("synchronizers")).isTrue();
        assertThat(groups.get("liveness").isMember("synchronizers")).isFalse();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
