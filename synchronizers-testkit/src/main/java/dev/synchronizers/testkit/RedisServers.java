package dev.synchronizers.testkit;

import java.io.File;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts Redis servers on loopback for tests, the demo and the benchmarks.
 *
 * <p>Sources, tried in this order:
 * <ol>
 *   <li>{@code REDIS_URL}: the environment variable, if set, names a running server, which must
 *       be on {@code 127.0.0.1} or {@code localhost}. It is not managed and is left running on
 *       close. Used only by {@link #start()}, never for managed servers or extra arguments.</li>
 *   <li>{@code PATH}: a {@code redis-server} binary on the {@code PATH}, started as a process.</li>
 *   <li>{@code DOCKER}: a {@code redis} container through Testcontainers, if a Docker engine
 *       answers within a few seconds (skipped at once when no Docker endpoint exists). Not
 *       managed; not used for managed servers or config files.</li>
 *   <li>{@code BUNDLED}: the Redis 6.2 binary inside the {@code com.github.codemonstur:embedded-redis}
 *       jar, copied to a temporary file once per JVM and started as a process.</li>
 * </ol>
 * The system property {@code synchronizers.redis.source} ({@code PATH}, {@code BUNDLED},
 * {@code DOCKER} or {@code REDIS_URL}) forces one source, to test the fallbacks.
 *
 * <p>Every server returned must be closed; a JVM shutdown hook closes the ones that were not.
 */
public final class RedisServers {

    /** The system property that forces a source. */
    public static final String SOURCE_PROPERTY = "synchronizers.redis.source";

    private static final Logger log = LoggerFactory.getLogger(RedisServers.class);
    private static final List<String> SOURCES = List.of("REDIS_URL", "PATH", "DOCKER", "BUNDLED");

    private RedisServers() {
    }

    /**
     * Starts (or, for {@code REDIS_URL}, connects to) a standalone server from the first
     * available source, and returns once it answers PING.
     *
     * @throws IllegalStateException if no source yields a server that answers within ten seconds,
     *     or {@code REDIS_URL} names a host other than loopback
     */
    public static RedisServer start() {
        return start(Options.defaults());
    }

    /**
     * Starts a standalone server whose process the testkit owns ({@code PATH}, else {@code
     * BUNDLED}), so that {@link RedisServer#kill()}, {@link RedisServer#pause()} and {@link
     * RedisServer#restart()} work. Each call starts a new, independent server.
     *
     * @throws IllegalStateException if neither source yields a server that answers within ten
     *     seconds, or the forced source cannot give a managed server
     */
    public static RedisServer startManaged() {
        return start(Options.defaults().managed());
    }

    /**
     * Starts a server with extra {@code redis-server} arguments appended to the testkit's own,
     * for example {@code start("--maxmemory", "10mb")}. Never uses {@code REDIS_URL}.
     *
     * @throws IllegalStateException as {@link #start()}
     */
    public static RedisServer start(String... extraArgs) {
        return start(Options.defaults().args(extraArgs));
    }

    /**
     * Starts a server as {@code options} describe.
     *
     * @throws IllegalStateException as {@link #start()}, or if the forced source cannot honour
     *     {@code options}
     */
    public static RedisServer start(Options options) {
        Objects.requireNonNull(options, "options");
        boolean external = !options.managed && options.args.isEmpty() && options.configFile == null;
        boolean docker = !options.managed && options.configFile == null;
        String forced = options.source != null ? options.source
                : System.getProperty(SOURCE_PROPERTY, "").trim().toUpperCase(Locale.ROOT);
        if (!forced.isEmpty()) {
            if (!SOURCES.contains(forced)) {
                throw new IllegalArgumentException(SOURCE_PROPERTY + "=" + forced + "; expected one of " + SOURCES);
            }
            if ((forced.equals("REDIS_URL") && !external) || (forced.equals("DOCKER") && !docker)) {
                throw new IllegalStateException(SOURCE_PROPERTY + "=" + forced + " cannot give a "
                        + (options.managed ? "managed server" : "server with extra arguments or a config file"));
            }
            return startFrom(forced, options);
        }
        if (external && System.getenv("REDIS_URL") != null && !System.getenv("REDIS_URL").isBlank()) {
            return startFrom("REDIS_URL", options);
        }
        if (findOnPath() != null) {
            return startFrom("PATH", options);
        }
        if (docker && dockerAvailable()) {
            return startFrom("DOCKER", options);
        }
        return startFrom("BUNDLED", options);
    }

    private static RedisServer startFrom(String source, Options options) {
        switch (source) {
            case "REDIS_URL":
                return fromUrl(System.getenv("REDIS_URL"));
            case "PATH": {
                Path binary = findOnPath();
                if (binary == null) {
                    throw new IllegalStateException("No redis-server on the PATH (" + System.getenv("PATH") + ")");
                }
                return RedisServer.launch(source, binary, options.args, options.configFile);
            }
            case "DOCKER":
                if (!dockerAvailable()) {
                    throw new IllegalStateException("No Docker engine answers");
                }
                return DockerRedis.start(options.args);
            default:
                return RedisServer.launch(source, BundledBinary.path(), options.args, options.configFile);
        }
    }

    /** Parses {@code redis://[[user]:password@]host[:port][/db]}; the host must be loopback. */
    static RedisServer fromUrl(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalStateException("REDIS_URL is not set");
        }
        URI parsed;
        try {
            parsed = new URI(url.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("REDIS_URL is not a URI: " + e.getMessage(), e);
        }
        if (!"redis".equalsIgnoreCase(parsed.getScheme()) || parsed.getHost() == null) {
            throw new IllegalArgumentException("REDIS_URL must look like redis://127.0.0.1:6379; got scheme "
                    + parsed.getScheme() + " and host " + parsed.getHost());
        }
        String host = parsed.getHost();
        if (!host.equals(RedisServer.LOOPBACK) && !host.equalsIgnoreCase("localhost")) {
            throw new IllegalArgumentException("REDIS_URL names host " + host
                    + "; the testkit talks to loopback only (127.0.0.1 or localhost)");
        }
        int port = parsed.getPort() < 0 ? 6379 : parsed.getPort();
        String[] auth = new String[0];
        String userInfo = parsed.getUserInfo();
        if (userInfo != null && !userInfo.isEmpty()) {
            int colon = userInfo.indexOf(':');
            auth = colon < 0 ? new String[] {userInfo}
                    : colon == 0 ? new String[] {userInfo.substring(1)}
                    : new String[] {userInfo.substring(0, colon), userInfo.substring(colon + 1)};
        }
        String uri = "redis://" + (parsed.getRawUserInfo() == null ? "" : parsed.getRawUserInfo() + "@")
                + RedisServer.LOOPBACK + ":" + port + (parsed.getRawPath() == null ? "" : parsed.getRawPath());
        return RedisServer.external("REDIS_URL", port, uri, auth);
    }

    private static Path findOnPath() {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Paths.get(dir, "redis-server");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    private static boolean dockerAvailable() {
        try {
            return DockerRedis.available();
        } catch (LinkageError e) {   // Testcontainers not on the class path
            log.debug("Testcontainers is not on the class path; not using Docker", e);
            return false;
        }
    }

    /**
     * How to start a server: extra arguments, a config file, and whether it must be managed.
     * Immutable; each method returns a new instance.
     */
    public static final class Options {

        private final List<String> args;
        private final String configFile;
        private final boolean managed;
        /** A source this server must come from, or null for the usual order. */
        private final String source;

        private Options(List<String> args, String configFile, boolean managed, String source) {
            this.args = args;
            this.configFile = configFile;
            this.managed = managed;
            this.source = source;
        }

        /** Returns the options of {@link RedisServers#start()}: no extra arguments, any source. */
        public static Options defaults() {
            return new Options(List.of(), null, false, null);
        }

        /**
         * Returns these options with {@code extraArgs} appended to the {@code redis-server}
         * command line, after the testkit's own arguments (so they win). With
         * {@code "--cluster-enabled", "yes"} the port is chosen so that the bus port
         * {@code port + 10000} is free as well. {@code "--requirepass", pw} is used by the
         * testkit's own PING and INFO.
         */
        public Options args(String... extraArgs) {
            List<String> all = new ArrayList<>(args);
            all.addAll(Arrays.asList(extraArgs));
            return new Options(List.copyOf(all), configFile, managed, source);
        }

        /**
         * Returns these options with a config file of the given contents, written to the
         * server's temporary directory and passed as the first argument (as Sentinel needs:
         * {@code configFile("sentinel monitor ...").args("--sentinel")}). Implies a process the
         * testkit starts ({@code PATH} or {@code BUNDLED}).
         */
        public Options configFile(String contents) {
            return new Options(args, Objects.requireNonNull(contents, "contents"), managed, source);
        }

        /**
         * Returns these options requiring a managed server: one whose process the testkit
         * starts and may kill, pause and restart ({@code PATH} or {@code BUNDLED}).
         */
        public Options managed() {
            return new Options(args, configFile, true, source);
        }

        /**
         * Returns these options requiring the bundled binary (Redis 6.2), whatever else this
         * machine has and whatever {@value RedisServers#SOURCE_PROPERTY} says: for tests of what
         * only that version does.
         */
        public Options bundled() {
            return new Options(args, configFile, managed, "BUNDLED");
        }

        /** Returns the extra arguments, the config file's size and the managed flag. */
        @Override
        public String toString() {
            return "Options[args=" + args + ", configFile=" + (configFile == null ? "none" : configFile.length()
                    + " chars") + ", managed=" + managed + (source == null ? "" : ", source=" + source) + "]";
        }
    }
}
