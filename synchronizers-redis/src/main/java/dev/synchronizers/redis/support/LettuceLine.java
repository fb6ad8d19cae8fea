package dev.synchronizers.redis.support;

import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Lettuce on the class path, checked against the oldest one this library supports
 * ({@value #MINIMUM}), so that a build with an older one fails when a client is built, with a
 * message that names both versions, rather than with a {@link LinkageError} later, on whichever
 * path first touches what the older Lettuce lacks.
 *
 * <p>The version is read from the manifest of the jar that holds Lettuce's classes (its
 * {@code Implementation-Title} is {@code Lettuce}), else from the Maven metadata Lettuce's jar
 * carries ({@code META-INF/maven/io.lettuce/lettuce-core/pom.properties}), which a shaded jar
 * usually keeps. A version that cannot be read, or read but not understood, is let through.
 */
public final class LettuceLine {

    /** The oldest Lettuce this library supports: the one Spring Boot 3.5 manages. */
    public static final String MINIMUM = "6.6.0";

    private static final String POM_PROPERTIES = "META-INF/maven/io.lettuce/lettuce-core/pom.properties";
    private static final Pattern NUMBERS = Pattern.compile("^(\\d+)\\.(\\d+)(?:\\.(\\d+))?");

    private LettuceLine() {
    }

    /**
     * Checks the Lettuce on the class path.
     *
     * @throws IllegalStateException if it is older than {@value #MINIMUM}; the message names the
     *     version found and the oldest supported
     */
    public static void check() {
        check(version());
    }

    /**
     * Checks a Lettuce version as {@link #check()} does.
     *
     * @param found the version, such as {@code 6.8.2.RELEASE}; null if unknown
     * @throws IllegalStateException if it is older than {@value #MINIMUM}
     */
    static void check(String found) {
        if (found != null && isOlder(found, MINIMUM)) {
            throw new IllegalStateException("Lettuce " + found + " is on the class path, but synchronizers-redis needs"
                    + " io.lettuce:lettuce-core " + MINIMUM + " or later: upgrade lettuce-core (Spring Boot 3.5 and"
                    + " later manage a Lettuce it supports)");
        }
    }

    /**
     * The version of the Lettuce on the class path, such as {@code 7.7.0.RELEASE} (the manifest's
     * may carry a commit after a slash), or null if it cannot be read.
     */
    static String version() {
        Package lettuce = RedisClient.class.getPackage();
        if (lettuce != null && "Lettuce".equals(lettuce.getImplementationTitle()) && lettuce.getImplementationVersion() != null) {
            return lettuce.getImplementationVersion();
        }
        return pomVersion(RedisClient.class.getClassLoader());
    }

    /** The version in Lettuce's Maven metadata as {@code loader} finds it, or null. */
    static String pomVersion(ClassLoader loader) {
        try (InputStream in = loader == null ? ClassLoader.getSystemResourceAsStream(POM_PROPERTIES)
                : loader.getResourceAsStream(POM_PROPERTIES)) {
            if (in == null) {
                return null;
            }
            Properties pom = new Properties();
            pom.load(in);
            return pom.getProperty("version");
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Whether {@code version} is older than {@code minimum}, comparing major, minor and patch (a
     * missing patch counts as 0); false if either does not begin with numbers.
     */
    static boolean isOlder(String version, String minimum) {
        int[] found = numbers(version);
        int[] least = numbers(minimum);
        if (found == null || least == null) {
            return false;
        }
        for (int i = 0; i < 3; i++) {
            if (found[i] != least[i]) {
                return found[i] < least[i];
            }
        }
        return false;
    }

    private static int[] numbers(String version) {
        Matcher matcher = NUMBERS.matcher(version.trim());
        if (!matcher.find()) {
            return null;
        }
        try {
            return new int[] {Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2)),
                    matcher.group(3) == null ? 0 : Integer.parseInt(matcher.group(3))};
        } catch (NumberFormatException e) {   // more digits than an int holds
            return null;
        }
    }
}
