package dev.synchronizers.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Enumeration;
import java.util.Locale;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code redis-server} binary that the {@code com.github.codemonstur:embedded-redis} jar
 * ships as a top-level resource (for version 1.4.3 on Linux x86-64:
 * {@code redis-server-6.2.6-v5-linux-amd64}). It is copied to a temporary file once per JVM and
 * then run as a plain process, like a binary on the PATH.
 */
final class BundledBinary {

    /** A class file of the embedded-redis jar, used to find the jar without loading its classes. */
    private static final String MARKER = "redis/embedded/Redis.class";

    private static final ReentrantLock lock = new ReentrantLock();
    private static Path extracted;

    private BundledBinary() {
    }

    /**
     * Returns the path of the extracted, executable binary, extracting it on the first call.
     *
     * @throws IllegalStateException if the jar is not on the class path or has no binary for this
     *     operating system and architecture
     */
    static Path path() {
        lock.lock();
        try {
            if (extracted == null || !Files.isExecutable(extracted)) {
                extracted = extract();
            }
            return extracted;
        } finally {
            lock.unlock();
        }
    }

    private static Path extract() {
        String suffix = platformSuffix();
        String resource = findResource(suffix);
        try {
            Path dir = Files.createTempDirectory("synchronizers-redis-bin-");
            dir.toFile().deleteOnExit();
            Path binary = dir.resolve(resource);
            try (InputStream in = BundledBinary.class.getClassLoader().getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException("Resource " + resource + " disappeared from the class path");
                }
                Files.copy(in, binary, StandardCopyOption.REPLACE_EXISTING);
            }
            binary.toFile().deleteOnExit();
            Files.setPosixFilePermissions(binary, PosixFilePermissions.fromString("rwx------"));
            return binary;
        } catch (IOException e) {
            throw new UncheckedIOException("Could not extract the bundled " + resource, e);
        }
    }

    /** The name ending of the embedded-redis binary for this platform, e.g. {@code -linux-amd64}. */
    private static String platformSuffix() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osPart = os.contains("linux") ? "linux" : os.contains("mac") ? "darwin" : null;
        String archPart = switch (arch) {
            case "amd64", "x86_64" -> "amd64";
            case "aarch64", "arm64" -> "arm64";
            default -> null;
        };
        if (osPart == null || archPart == null) {
            throw new IllegalStateException("No bundled redis-server for " + os + "/" + arch
                    + "; put redis-server on the PATH or set REDIS_URL");
        }
        return "-" + osPart + "-" + archPart;
    }

    /** Finds the top-level {@code redis-server-<version>-<os>-<arch>} entry next to the marker. */
    private static String findResource(String suffix) {
        URL marker = BundledBinary.class.getClassLoader().getResource(MARKER);
        if (marker == null) {
            throw new IllegalStateException("com.github.codemonstur:embedded-redis is not on the class path;"
                    + " put redis-server on the PATH or set REDIS_URL");
        }
        try {
            if (marker.openConnection() instanceof JarURLConnection connection) {
                connection.setUseCaches(false);
                try (JarFile jar = connection.getJarFile()) {
                    for (Enumeration<JarEntry> entries = jar.entries(); entries.hasMoreElements(); ) {
                        String name = entries.nextElement().getName();
                        if (name.startsWith("redis-server-") && name.endsWith(suffix) && !name.contains("/")) {
                            return name;
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read the embedded-redis jar at " + marker, e);
        }
        throw new IllegalStateException("No redis-server-*" + suffix + " next to " + marker);
    }
}
