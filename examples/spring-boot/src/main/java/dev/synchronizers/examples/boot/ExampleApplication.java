package dev.synchronizers.examples.boot;

import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A Spring Boot application on {@code synchronizers-spring-boot-starter}: {@link ReportJob} runs on
 * one instance at a time across every instance started against the same Redis, and
 * {@link ExportController} serves at most {@code example.exports.permits} exports at once across
 * all of them. It defines no synchronizers bean: the starter makes the client from
 * {@code synchronizers.*} (see {@code application.properties}) and the ShedLock {@code LockProvider}.
 *
 * <p>Run it with {@link ExampleLauncher}, which starts a throwaway {@code redis-server} first, or
 * with {@code --synchronizers.uri=redis://host:6379} against your own.
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
public class ExampleApplication {

    /** Created by Spring. */
    public ExampleApplication() {
    }

    /**
     * Starts the application.
     *
     * @param args Spring Boot's command-line arguments, e.g. {@code --server.port=8081}
     */
    public static void main(String[] args) {
        SpringApplication.run(ExampleApplication.class, args);
    }
}
