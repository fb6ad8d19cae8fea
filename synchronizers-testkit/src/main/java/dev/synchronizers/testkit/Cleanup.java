package dev.synchronizers.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this JVM started and has not yet stopped: servers and child JVMs. One shutdown hook
 * closes them all, so a run that ends without closing them leaves no orphan processes. Only
 * objects registered here are touched.
 */
final class Cleanup {

    private static final Logger log = LoggerFactory.getLogger(Cleanup.class);
    private static final Set<AutoCloseable> live = ConcurrentHashMap.newKeySet();
    private static final AtomicBoolean hookInstalled = new AtomicBoolean();

    private Cleanup() {
    }

    /** Closes {@code resource} at JVM exit unless {@link #forget} is called first. */
    static void register(AutoCloseable resource) {
        if (hookInstalled.compareAndSet(false, true)) {
            Runtime.getRuntime().addShutdownHook(new Thread(Cleanup::closeAll, "testkit-cleanup"));
        }
        live.add(resource);
    }

    /** Stops tracking {@code resource}, which its owner has closed. */
    static void forget(AutoCloseable resource) {
        live.remove(resource);
    }

    private static void closeAll() {
        for (AutoCloseable resource : live.toArray(new AutoCloseable[0])) {
            try {
                resource.close();
            } catch (Exception e) {
                log.warn("Could not close {} at JVM exit", resource, e);
            }
        }
    }

    /** Deletes {@code dir} and everything below it; logs rather than throws. */
    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    log.debug("Could not delete {}", path, e);
                }
            });
        } catch (IOException e) {
            log.debug("Could not delete {}", dir, e);
        }
    }
}
