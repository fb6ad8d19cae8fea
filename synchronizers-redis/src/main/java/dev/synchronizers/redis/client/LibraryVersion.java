package dev.synchronizers.redis.client;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The version of this library, as the build wrote it into {@code synchronizers-version.properties}. */
public final class LibraryVersion {

    /** The version, or {@code "unknown"} if the resource is missing or unreadable. */
    public static final String VERSION = read();

    private LibraryVersion() {
    }

    private static String read() {
        try (InputStream in = LibraryVersion.class.getResourceAsStream("/dev/synchronizers/redis/synchronizers-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties properties = new Properties();
            properties.load(in);
            String version = properties.getProperty("version", "unknown");
            return version.startsWith("${") ? "unknown" : version;
        } catch (IOException e) {
            return "unknown";
        }
    }
}
