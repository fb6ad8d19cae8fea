package dev.synchronizers.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.Synchronizers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A Spring Boot application started with Redis down ends in Spring Boot's "APPLICATION FAILED TO
 * START" report, written by {@link SynchronizersFailureAnalyzer}: what could not be reached, where the
 * address came from, and what to set. Real {@link SpringApplication} runs against a loopback port
 * that nothing listens on; the report is read from what the run wrote to {@code System.out} and
 * {@code System.err} (copied, and still written through), as a user reads it.
 */
class SynchronizersFailureAnalyzerTest {

    private int closedPort;

    @BeforeEach
    void findAClosedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
    }

    /** fail-fast (the default), synchronizers.uri set: the report names the server and says what to set. */
    @Test
    void failFast_uriSet_redisDown_reportsTheServerAndTheActions() {
        String uri = "redis://127.0.0.1:" + closedPort;
        String output = runFailing(App.class, "--synchronizers.uri=" + uri);
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("Description:")
                .contains("could not connect to Redis at start-up")
                .contains("127.0.0.1:" + closedPort)
                .contains("Address from: synchronizers.uri")
                .contains("Action:")
                .contains("Start Redis at the address in synchronizers.uri, or correct synchronizers.uri")
                .contains("synchronizers.fail-fast=false");
    }

    /** No address anywhere: the report says it was Boot's default, and to set synchronizers.uri or spring.data.redis.*. */
    @Test
    void failFast_noAddress_reportsBootsDefaultAndWhereToSetOne() {
        // Boot's connection details, from spring.data.redis.*: a port of the test's, where nothing answers.
        String output = runFailing(BootRedisApp.class, "--spring.data.redis.host=127.0.0.1",
                "--spring.data.redis.port=" + closedPort);
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains(":" + closedPort)
                .contains("Set synchronizers.uri (or Spring Boot's spring.data.redis.*)")
                .contains("synchronizers.fail-fast=false");
    }

    /**
     * fail-fast=false, and a bean of the application calls Redis while the context starts: the
     * report says so, rather than suggesting the fail-fast=false that is already set.
     */
    @Test
    void lenient_aBeanCallsRedisInItsConstructor_reportsThatTheCallIsTheApplicationsAtStartUp() {
        String uri = "redis://127.0.0.1:" + closedPort;
        String output = runFailing(EagerApp.class, "--synchronizers.uri=" + uri, "--synchronizers.fail-fast=false");
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("127.0.0.1:" + closedPort)
                .contains("synchronizers.fail-fast=false is set")
                .contains("Do not call the synchronizers while the application starts");
    }

    /**
     * Runs the application, expects its start-up to fail with a SynchronizerUnavailableException,
     * and returns what it printed meanwhile.
     */
    private static String runFailing(Class<?> source, String... args) {
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        PrintStream out = System.out;
        PrintStream err = System.err;
        System.setOut(tee(out, copy));
        System.setErr(tee(err, copy));
        try {
            SpringApplication application = new SpringApplication(source);
            application.setWebApplicationType(WebApplicationType.NONE);
            assertThatThrownBy(() -> application.run(args).close())
                    .hasStackTraceContaining(SynchronizerUnavailableException.class.getName());
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        return copy.toString(StandardCharsets.UTF_8);
    }

    private static PrintStream tee(PrintStream original, OutputStream copy) {
        return new PrintStream(new OutputStream() {
            @Override
            public synchronized void write(int b) throws IOException {
                original.write(b);
                copy.write(b);
            }

            @Override
            public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
                original.write(bytes, offset, length);
                copy.write(bytes, offset, length);
            }
        }, true, StandardCharsets.UTF_8);
    }

    /** An application with the auto-configuration and nothing else. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(SynchronizersAutoConfiguration.class)
    static class App {
    }

    /** An application with Spring Boot's Redis support and the auto-configuration. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({DataRedisAutoConfiguration.class, SynchronizersAutoConfiguration.class})
    static class BootRedisApp {
    }

    /** An application whose bean takes a semaphore's permits count in its constructor. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(SynchronizersAutoConfiguration.class)
    static class EagerApp {

        @Bean
        Object eager(Synchronizers synchronizers) {
            return synchronizers.semaphore("eager").availablePermits();
        }
    }
}
