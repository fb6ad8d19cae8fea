package dev.synchronizers.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redis server that the testkit provides, on {@code 127.0.0.1}. Obtain one from {@link
 * RedisServers}; close it when done.
 *
 * <p>A server is <em>managed</em> when the testkit started its {@code redis-server} process
 * itself (sources {@code PATH} and {@code BUNDLED}). Only a managed server supports the fault
 * controls {@link #kill()}, {@link #pause()}, {@link #resume()} and {@link #restart()}; they
 * signal the pid this object started and no other. A server named by {@code REDIS_URL} or run in
 * a Docker container is not managed, and the fault controls throw {@link
 * UnsupportedOperationException}.
 *
 * <p>A managed server runs {@code redis-server --port P --bind 127.0.0.1 --protected-mode yes
 * --save "" --appendonly no --daemonize no --dir D} plus any extra arguments, with its own
 * temporary directory {@code D}, and writes its output to {@code D/redis.log}. It keeps no data
 * across {@link #restart()}.
 *
 * <p>Thread-safe: lifecycle methods are serialised by a lock. {@link #close()} is idempotent, and
 * a JVM shutdown hook closes every server that is still open when the JVM exits.
 */
public final class RedisServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisServer.class);

    static final String LOOPBACK = "127.0.0.1";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);
    private static final int PORT_ATTEMPTS = 5;
    private static final String[] NO_AUTH = new String[0];

    private final String source;
    private final int port;
    private final String uri;
    private final String[] auth;
    private final List<String> command;   // managed only: the redis-server command line
    private final Path dir;               // managed only: --dir, the log and any config file
    private final AutoCloseable stopper;  // DOCKER only: stops the container
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Process process;     // written under lock
    private volatile boolean paused;      // written under lock
    private volatile String version;

    private RedisServer(String source, int port, String uri, String[] auth, List<String> command,
            Path dir, AutoCloseable stopper) {
        this.source = source;
        this.port = port;
        this.uri = uri;
        this.auth = auth;
        this.command = command;
        this.dir = dir;
        this.stopper = stopper;
    }

    /* --------------- creation (package-private; see RedisServers) --------------- */

    /**
     * Starts {@code binary} as a managed server on a free loopback port, retrying with another
     * port when the chosen one is taken before the server binds it.
     */
    static RedisServer launch(String source, Path binary, List<String> extraArgs, String configFile) {
        Path dir;
        try {
            dir = Files.createTempDirectory("synchronizers-redis-");
        } catch (IOException e) {
            throw new UncheckedIOException("Could not create a temporary directory for redis-server", e);
        }
        try {
            List<String> prefix = new ArrayList<>();
            prefix.add(binary.toString());
            if (configFile != null) {
                // A config file must be the first argument; Sentinel rewrites it, so it lives in dir.
                Path conf = dir.resolve("redis.conf");
                Files.writeString(conf, configFile, StandardCharsets.UTF_8);
                prefix.add(conf.toString());
            }
            boolean clusterBus = extraArgs.contains("--cluster-enabled")
                    || (configFile != null && configFile.contains("cluster-enabled"));
            String[] auth = requirePass(extraArgs);
            IllegalStateException portTaken = null;
            for (int attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
                int port = freePort(clusterBus);
                List<String> command = new ArrayList<>(prefix);
                command.addAll(List.of("--port", Integer.toString(port), "--bind", LOOPBACK,
                        "--protected-mode", "yes", "--save", "", "--appendonly", "no",
                        "--daemonize", "no", "--dir", dir.toString()));
                command.addAll(extraArgs);
                RedisServer server = new RedisServer(source, port, "redis://" + LOOPBACK + ":" + port,
                        auth, List.copyOf(command), dir, null);
                Cleanup.register(server);
                try {
                    server.lock.lock();
                    try {
                        server.startProcess();
                    } finally {
                        server.lock.unlock();
                    }
                    log.debug("Started {}", server);
                    return server;
                } catch (PortTakenException e) {
                    Cleanup.forget(server);
                    portTaken = new IllegalStateException(e.getMessage());
                    log.debug("Port {} was taken; retrying with another", port);
                } catch (RuntimeException e) {
                    Cleanup.forget(server);
                    throw e;
                }
            }
            throw new IllegalStateException("redis-server could not bind a free loopback port in "
                    + PORT_ATTEMPTS + " attempts", portTaken);
        } catch (IOException e) {
            Cleanup.deleteTree(dir);
            throw new UncheckedIOException("Could not write the redis-server config file in " + dir, e);
        } catch (RuntimeException e) {
            Cleanup.deleteTree(dir);
            throw e;
        }
    }

    /** Wraps a server that something else runs (REDIS_URL); checks that it answers. */
    static RedisServer external(String source, int port, String uri, String[] auth) {
        RedisServer server = new RedisServer(source, port, uri, auth, null, null, null);
        server.version = server.checkAnswers();
        return server;
    }

    /** Wraps a server in a container that {@code stopper} stops; checks that it answers. */
    static RedisServer container(String source, int port, AutoCloseable stopper) {
        RedisServer server = new RedisServer(source, port, "redis://" + LOOPBACK + ":" + port, NO_AUTH,
                null, null, stopper);
        Cleanup.register(server);
        try {
            server.version = server.checkAnswers();
            return server;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /* --------------- what it is --------------- */

    /** Returns the host to connect to: {@code "127.0.0.1"}. */
    public String host() {
        return LOOPBACK;
    }

    /** Returns the TCP port; it stays the same across {@link #restart()}. */
    public int port() {
        return port;
    }

    /**
     * Returns a URI for Redis clients: {@code "redis://127.0.0.1:<port>"}. For a server named by
     * {@code REDIS_URL} it keeps that URL's user info and database path.
     */
    public String uri() {
        return uri;
    }

    /** Returns the server's {@code redis_version} from {@code INFO server}, e.g. {@code "7.0.15"}. */
    public String version() {
        return version;
    }

    /**
     * Returns the pid of the {@code redis-server} process this object started, or -1 when the
     * server is not managed. After {@link #restart()} it is the new process's pid.
     */
    public long pid() {
        Process current = process;
        return current == null ? -1 : current.pid();
    }

    /**
     * Returns whether the testkit started this server's process itself, and so may kill, pause
     * and restart it.
     */
    public boolean isManaged() {
        return command != null;
    }

    /**
     * Returns where the server came from: {@code "REDIS_URL"}, {@code "PATH"}, {@code "DOCKER"}
     * or {@code "BUNDLED"}.
     */
    public String source() {
        return source;
    }

    /**
     * Returns whether the server is up: for a managed server, whether its process is alive
     * (a paused process is alive); for any other server, whether it has not been closed.
     */
    public boolean isRunning() {
        if (closed.get()) {
            return false;
        }
        if (!isManaged()) {
            return true;
        }
        Process current = process;
        return current != null && current.isAlive();
    }

    /**
     * Returns the reply to {@code INFO <section>} as text, over a fresh connection.
     *
     * @param section an INFO section such as {@code "server"}, or {@code ""} for the default set
     * @throws UncheckedIOException if the server does not answer within two seconds
     */
    public String info(String section) {
        try {
            return section.isEmpty() ? call("INFO") : call("INFO", section);
        } catch (IOException e) {
            throw new UncheckedIOException("INFO " + section + " failed on " + this, e);
        }
    }

    /* --------------- fault controls (managed only) --------------- */

    /**
     * Kills the server process with SIGKILL and returns once it has exited. Does nothing if the
     * process is not running. A paused process is killed too.
     *
     * @throws UnsupportedOperationException if the server is not managed
     * @throws IllegalStateException if the server is closed
     */
    public void kill() {
        requireManaged("kill");
        lock.lock();
        try {
            requireOpen();
            killProcess();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops the server process with SIGSTOP, so that it accepts connections but answers nothing,
     * and returns once the process is stopped. Does nothing if already paused.
     *
     * @throws UnsupportedOperationException if the server is not managed
     * @throws IllegalStateException if the server is closed or its process is not running
     */
    public void pause() {
        requireManaged("pause");
        lock.lock();
        try {
            requireOpen();
            Process current = requireAlive("pause");
            if (!paused) {
                signal(current, "STOP");
                awaitStopped(current, true);
                paused = true;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Continues a paused server process with SIGCONT. Does nothing if not paused.
     *
     * @throws UnsupportedOperationException if the server is not managed
     * @throws IllegalStateException if the server is closed
     */
    public void resume() {
        requireManaged("resume");
        lock.lock();
        try {
            requireOpen();
            resumeIfPaused();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Kills the server process if it is running, then starts a new one on the same port with the
     * same arguments, and returns once it answers PING. The data set is empty afterwards.
     *
     * @throws UnsupportedOperationException if the server is not managed
     * @throws IllegalStateException if the server is closed, or the new process does not answer
     *     within ten seconds (the message includes its output), or another process took the port
     */
    public void restart() {
        requireManaged("restart");
        lock.lock();
        try {
            requireOpen();
            killProcess();
            try {
                startProcess();
            } catch (PortTakenException e) {
                throw new IllegalStateException("Cannot restart " + this + ": " + e.getMessage(), e);
            }
            log.debug("Restarted {}", this);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops the server and releases what it holds. A managed process is resumed if paused, sent
     * SIGTERM, and sent SIGKILL if it has not exited within five seconds; its temporary directory
     * is deleted. A container is stopped. A server named by {@code REDIS_URL} is left running.
     * Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            if (isManaged()) {
                lock.lock();
                try {
                    stopProcess();
                } finally {
                    lock.unlock();
                    Cleanup.deleteTree(dir);
                }
            } else if (stopper != null) {
                try {
                    stopper.close();
                } catch (Exception e) {
                    log.warn("Could not stop the container of {}", this, e);
                }
            }
        } finally {
            Cleanup.forget(this);
        }
    }

    /** Returns the source, version, URI and pid, for logs and assertion messages. */
    @Override
    public String toString() {
        return "RedisServer[" + source + " " + version + " " + LOOPBACK + ":" + port
                + (isManaged() ? " pid " + pid() : "") + "]";
    }

    /* --------------- process control (caller holds lock) --------------- */

    private void startProcess() {
        Path logFile = dir.resolve("redis.log");
        long logStart = logFile.toFile().length();   // 0 if absent; earlier runs' output stays above
        Process started;
        try {
            started = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("Could not run " + command.get(0), e);
        }
        process = started;
        paused = false;
        try {
            version = awaitReady(started, logFile, logStart);
        } catch (RuntimeException e) {
            killProcess();
            throw e;
        }
    }

    /**
     * Polls until the process answers PING and {@code INFO server} reports its own pid (so that a
     * server of someone else holding the port is never mistaken for ours). Returns the version.
     */
    private String awaitReady(Process started, Path logFile, long logStart) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        IOException lastFailure = null;
        while (true) {
            if (!started.isAlive()) {
                String output = readLog(logFile, logStart);
                if (output.contains("Address already in use")) {
                    throw new PortTakenException("port " + port + " is already in use");
                }
                throw new IllegalStateException("redis-server exited with status " + started.exitValue()
                        + " before answering PING; command: " + command + "\n--- output ---\n" + output);
            }
            try {
                String info = call("INFO", "server");
                String pid = Resp.infoField(info, "process_id");
                if (!Long.toString(started.pid()).equals(pid)) {
                    throw new PortTakenException("port " + port + " is served by another process (pid "
                            + pid + ")");
                }
                if ("PONG".equals(call("PING"))) {
                    return Resp.infoField(info, "redis_version");
                }
            } catch (IOException e) {
                lastFailure = e;   // not listening yet, or LOADING
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("redis-server did not answer PING on port " + port + " within "
                        + START_TIMEOUT.toSeconds() + " s; command: " + command + "\n--- output ---\n"
                        + readLog(logFile, logStart), lastFailure);
            }
            sleep(20);
        }
    }

    private void killProcess() {
        Process current = process;
        if (current != null && current.isAlive()) {
            current.destroyForcibly();
            awaitExit(current, null);
        }
        paused = false;
    }

    private void stopProcess() {
        Process current = process;
        if (current == null || !current.isAlive()) {
            return;
        }
        resumeIfPaused();
        current.destroy();
        if (!awaitExit(current, STOP_TIMEOUT)) {
            log.warn("{} ignored SIGTERM for {} s; sending SIGKILL", this, STOP_TIMEOUT.toSeconds());
            current.destroyForcibly();
            awaitExit(current, null);
        }
    }

    private void resumeIfPaused() {
        Process current = process;
        if (paused && current != null && current.isAlive()) {
            signal(current, "CONT");
            awaitStopped(current, false);
        }
        paused = false;
    }

    /** Sends {@code SIG<name>} to our own process with {@code /bin/kill}. */
    private static void signal(Process target, String name) {
        if (!target.isAlive()) {
            throw new IllegalStateException("Process " + target.pid() + " has exited; not sending SIG" + name);
        }
        String kill = Files.isExecutable(Paths.get("/bin/kill")) ? "/bin/kill" : "kill";
        try {
            Process signaller = new ProcessBuilder(kill, "-" + name, Long.toString(target.pid()))
                    .redirectErrorStream(true)
                    .start();
            String output = new String(signaller.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!awaitExit(signaller, SIGNAL_TIMEOUT) || signaller.exitValue() != 0) {
                throw new IllegalStateException(kill + " -" + name + " " + target.pid() + " failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Could not run " + kill + " -" + name, e);
        }
    }

    /**
     * Waits until the process's state in {@code /proc} is stopped ({@code T}) or not, as asked.
     * Returns at once where there is no {@code /proc}; the signal is then in flight.
     */
    private static void awaitStopped(Process target, boolean stopped) {
        Path stat = Paths.get("/proc", Long.toString(target.pid()), "stat");
        long deadline = System.nanoTime() + SIGNAL_TIMEOUT.toNanos();
        while (Files.isReadable(stat) && target.isAlive()) {
            String text;
            try {
                text = Files.readString(stat, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return;   // exited meanwhile
            }
            int afterName = text.lastIndexOf(')');
            char state = afterName > 0 && afterName + 2 < text.length() ? text.charAt(afterName + 2) : '?';
            if ((state == 'T' || state == 't') == stopped) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("Process " + target.pid() + " is in state " + state
                        + " after SIG" + (stopped ? "STOP" : "CONT"));
            }
            sleep(5);
        }
    }

    /** Waits for exit, at most {@code timeout} (null: until it exits); keeps the interrupt flag. */
    private static boolean awaitExit(Process target, Duration timeout) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (timeout == null) {
                        target.waitFor();
                        return true;
                    }
                    return target.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /* --------------- helpers --------------- */

    /** Sends one command over a fresh connection, with this server's credentials. */
    String call(String... args) throws IOException {
        return Resp.call(LOOPBACK, port, COMMAND_TIMEOUT, auth, args);
    }

    /** Sends one command whose reply is an array of strings, as {@link #call} does. */
    List<String> callList(String... args) throws IOException {
        return Resp.callList(LOOPBACK, port, COMMAND_TIMEOUT, auth, args);
    }

    /** Sends one command whose reply is an array of field-value arrays, as {@link #call} does. */
    List<Map<String, String>> callMaps(String... args) throws IOException {
        return Resp.callMaps(LOOPBACK, port, COMMAND_TIMEOUT, auth, args);
    }

    /** Returns whether {@link #pause()} stopped the process and nothing has continued it since. */
    boolean isPaused() {
        return paused;
    }

    private String checkAnswers() {
        try {
            String pong = call("PING");
            if (!"PONG".equals(pong)) {
                throw new IllegalStateException("Redis at " + redactedUri() + " answered PING with " + pong);
            }
            return Resp.infoField(call("INFO", "server"), "redis_version");
        } catch (IOException e) {
            throw new IllegalStateException("Redis at " + redactedUri() + " (" + source + ") does not answer: "
                    + e.getMessage(), e);
        }
    }

    private String redactedUri() {
        return uri.replaceFirst("//[^@/]*@", "//***@");
    }

    private void requireManaged(String operation) {
        if (!isManaged()) {
            throw new UnsupportedOperationException("Cannot " + operation + " " + this + ": the testkit did not"
                    + " start its process (source " + source + "); use RedisServers.startManaged()");
        }
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private Process requireAlive(String operation) {
        Process current = process;
        if (current == null || !current.isAlive()) {
            throw new IllegalStateException("Cannot " + operation + " " + this + ": its process is not running");
        }
        return current;
    }

    /** Reads the server's output from byte {@code from} on, for error messages; at most 8 KiB. */
    private static String readLog(Path logFile, long from) {
        try {
            byte[] bytes = Files.readAllBytes(logFile);
            int start = (int) Math.max(Math.min(from, bytes.length), bytes.length - 8192L);
            String text = new String(bytes, start, bytes.length - start, StandardCharsets.UTF_8);
            return start > from ? "..." + text : text;
        } catch (IOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }

    /**
     * Returns a loopback port that was free a moment ago (and, for a cluster node, whose bus port
     * {@code port + 10000} was free too). The caller must cope with losing the race for it.
     */
    static int freePort(boolean clusterBus) {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = bindAndRelease(0);
            if (!clusterBus || (port + 10000 <= 65535 && bindAndRelease(port + 10000) > 0)) {
                return port;
            }
        }
        throw new IllegalStateException("No free loopback port with a free cluster bus port (+10000)");
    }

    /** Binds {@code port} (0: any) on loopback and closes it; returns the port, or -1 if taken. */
    private static int bindAndRelease(int port) {
        try (ServerSocket socket = new ServerSocket(port, 0, InetAddress.getByName(LOOPBACK))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            if (port == 0) {
                throw new UncheckedIOException("Could not bind any port on " + LOOPBACK, e);
            }
            return -1;
        }
    }

    private static String[] requirePass(List<String> args) {
        int at = args.indexOf("--requirepass");
        return at >= 0 && at + 1 < args.size() ? new String[] {args.get(at + 1)} : NO_AUTH;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for redis-server", e);
        }
    }

    /** The chosen port was taken by someone else before the server bound it. */
    private static final class PortTakenException extends RuntimeException {
        PortTakenException(String message) {
            super(message);
        }
    }
}
