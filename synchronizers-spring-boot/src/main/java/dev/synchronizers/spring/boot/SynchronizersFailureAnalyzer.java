package dev.synchronizers.spring.boot;

import dev.synchronizers.SynchronizerUnavailableException;
import java.util.List;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.env.Environment;

/**
 * Turns a start-up that failed because Redis could not be reached (a
 * {@link SynchronizerUnavailableException} anywhere in the failure's causes) into Spring Boot's
 * "APPLICATION FAILED TO START" report: a description that names the server(s) as the client's
 * message does, the property the address came from and the root cause (e.g. "Connection refused"),
 * and an action: start Redis or correct the address, or set {@code synchronizers.fail-fast=false}.
 * When {@code fail-fast=false} is already set, the failure came from the application's own call
 * during start-up, and the action says so instead.
 *
 * <p>Registered in {@code META-INF/spring.factories}; Spring Boot creates it with the application's
 * {@link Environment}. Reads the {@code synchronizers.*} properties only; never prints a password
 * (the client's messages leave them out).
 */
final class SynchronizersFailureAnalyzer extends AbstractFailureAnalyzer<SynchronizerUnavailableException> {

    private final Environment environment;

    /**
     * Creates the analyzer; Spring Boot does, when a start-up fails.
     *
     * @param environment the failed application's environment, for the {@code synchronizers.*} properties
     */
    SynchronizersFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, SynchronizerUnavailableException cause) {
        SynchronizersProperties properties = properties();
        List<String> given = properties == null ? List.of() : RedisTarget.given(properties);
        boolean failFast = properties == null || properties.isFailFast();
        boolean redlock = given.contains("synchronizers.redlock.nodes");

        StringBuilder description = new StringBuilder();
        if (failFast || redlock) {
            description.append("The synchronizers client could not connect to Redis at start-up.\n\n");
        } else {
            description.append("A bean of the application called the synchronizers while the application was"
                    + " starting, and Redis could not be reached.\n\n");
        }
        description.append("    Reason: ").append(cause.getMessage()).append('\n');
        Throwable root = root(cause);
        if (root != cause && root.getMessage() != null && !cause.getMessage().contains(root.getMessage())) {
            description.append("    Root cause: ").append(root.getClass().getSimpleName()).append(": ")
                    .append(root.getMessage()).append('\n');
        }
        description.append("    Address from: ").append(given.isEmpty()
                ? "Spring Boot's Redis connection (spring.data.redis.*, a connection details bean, or its default"
                        + " localhost:6379), since no synchronizers.uri, synchronizers.sentinel.*,"
                        + " synchronizers.cluster.nodes or synchronizers.redlock.nodes is set"
                : String.join(", ", given));

        String action;
        if (redlock) {
            action = "Start the Redlock nodes, or correct synchronizers.redlock.nodes: a Redlock starts once a"
                    + " quorum of them answers (synchronizers.fail-fast=false does not apply to a Redlock).";
        } else if (!failFast) {
            action = "synchronizers.fail-fast=false is set, so the client itself does not fail start-up; the call"
                    + " came from the application (see the bean named in the trace). Do not call the synchronizers"
                    + " while the application starts (in a constructor, @PostConstruct or @Bean method): call them"
                    + " when the work is done, and handle SynchronizerUnavailableException there (e.g. answer 503).";
        } else {
            String where = given.isEmpty()
                    ? "Set synchronizers.uri (or Spring Boot's spring.data.redis.*) to where Redis runs, or start"
                            + " Redis there."
                    : "Start Redis at the address in " + given.get(0) + ", or correct " + given.get(0) + ".";
            action = where + " Or, to start without Redis, set synchronizers.fail-fast=false: the client then"
                    + " connects on first use, its calls throw SynchronizerUnavailableException and the"
                    + " synchronizers health indicator is DOWN until Redis answers.";
        }
        return new FailureAnalysis(description.toString(), action, cause);
    }

    /** The bound properties, or null if they cannot be bound (that failure is reported elsewhere). */
    private SynchronizersProperties properties() {
        try {
            return Binder.get(environment)
                    .bind("synchronizers", Bindable.ofInstance(new SynchronizersProperties()))
                    .orElseGet(SynchronizersProperties::new);
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static Throwable root(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root;
    }
}
