package dev.synchronizers.testkit;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * A child JVM running a main class with this JVM's class path and {@code java} binary, for tests
 * in which a client process dies. Its standard output is read line by line ({@link #awaitLine});
 * its standard error is collected; both are drained by daemon threads so that the child never
 * blocks on a full pipe. {@link #kill()} and {@link #close()} only ever signal this child.
 *
 * <p>Thread-safe. A JVM shutdown hook kills a child that is still running when this JVM exits.
 */
public final class ChildJvm implements AutoCloseable {

    private static final Object END = new Object();   // queued after the last stdout line

    private final String mainClass;
    private final Process process;
    private final BlockingQueue<Object> lines = new LinkedBlockingQueue<>();
    private final StringBuffer transcript = new StringBuffer();   // stdout and stderr, in arrival order
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread stdoutDrainer;
    private final Thread stderrDrainer;

    private ChildJvm(String mainClass, Process process) {
        this.mainClass = mainClass;
        this.process = process;
        this.stdoutDrainer = drain(process.getInputStream(), "out", true);
        this.stderrDrainer = drain(process.getErrorStream(), "err", false);
    }

    /**
     * Starts {@code mainClass} with {@code args}, without extra system properties.
     *
     * @throws UncheckedIOException if the java binary cannot be run
     */
    public static ChildJvm start(Class<?> mainClass, String... args) {
        return start(mainClass.getName(), Map.of(), List.of(args));
    }

    /**
     * Starts {@code java -D<k>=<v>... -cp <this JVM's class path> <mainClass> <args>}.
     *
     * @param mainClass the fully qualified name of a class with a {@code main} method
     * @param systemProperties passed as {@code -Dkey=value}, in iteration order
     * @param args the program arguments
     * @throws UncheckedIOException if the java binary cannot be run
     */
    public static ChildJvm start(String mainClass, Map<String, String> systemProperties, List<String> args) {
        return start(mainClass, systemProperties, args, entry -> true);
    }

    /**
     * Starts {@code java -D<k>=<v>... -cp <entries of this JVM's class path that keep> <mainClass>
     * <args>}: for a child that must run without some library, e.g. an optional dependency.
     *
     * @param mainClass the fully qualified name of a class with a {@code main} method
     * @param systemProperties passed as {@code -Dkey=value}, in iteration order
     * @param args the program arguments
     * @param keep tells which class path entries (jar or folder paths) the child gets
     * @throws UncheckedIOException if the java binary cannot be run
     */
    public static ChildJvm start(String mainClass, Map<String, String> systemProperties, List<String> args,
            Predicate<String> keep) {
        Objects.requireNonNull(mainClass, "mainClass");
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        systemProperties.forEach((key, value) -> command.add("-D" + key + "=" + value));
        command.add("-cp");
        command.add(Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(keep).collect(Collectors.joining(File.pathSeparator)));
        command.add(mainClass);
        command.addAll(args);
        Process process;
        try {
            process = new ProcessBuilder(command).start();
            process.getOutputStream().close();   // the child reads no input
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start a JVM for " + mainClass + ": " + command.get(0), e);
        }
        ChildJvm child = new ChildJvm(mainClass, process);
        Cleanup.register(child);
        return child;
    }

    /** Returns the child's pid. */
    public long pid() {
        return process.pid();
    }

    /** Returns whether the child is still running. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Reads the child's standard output until a line starting with {@code prefix} appears, and
     * returns that line. Lines before it are consumed (they stay in {@link #output()}).
     *
     * @throws IllegalStateException if the child's output ends (it exited) or {@code timeout}
     *     passes first; the message holds everything the child printed so far
     * @throws InterruptedException if interrupted while waiting
     */
    public String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Object next = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (next == null) {
                throw failure("printed no line starting with \"" + prefix + "\" within " + timeout);
            }
            if (next == END) {
                lines.add(END);   // later calls fail fast too
                stderrDrainer.join(1000);
                throw failure("ended its output without a line starting with \"" + prefix + "\""
                        + exitStatus());
            }
            if (((String) next).startsWith(prefix)) {
                return (String) next;
            }
        }
    }

    /**
     * Reads the child's standard output until a line starting with each of {@code prefixes} has
     * appeared, in whatever order (events of different threads of the child), and returns the first
     * such line of each. Other lines are consumed, as by {@link #awaitLine}.
     *
     * @return prefix to the first line starting with it, for every prefix
     * @throws IllegalStateException if the child's output ends (it exited) or {@code timeout}
     *     passes before every prefix was seen; the message holds everything the child printed so far
     * @throws InterruptedException if interrupted while waiting
     */
    public Map<String, String> awaitLines(Duration timeout, String... prefixes) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<String, String> found = new LinkedHashMap<>();
        while (found.size() < prefixes.length) {
            Object next = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (next == null || next == END) {
                if (next == END) {
                    lines.add(END);
                    stderrDrainer.join(1000);
                }
                throw failure("printed no lines starting with each of " + Arrays.toString(prefixes)
                        + " within " + timeout + " (seen: " + found.keySet() + ")" + (next == END ? exitStatus() : ""));
            }
            for (String prefix : prefixes) {
                if (!found.containsKey(prefix) && ((String) next).startsWith(prefix)) {
                    found.put(prefix, (String) next);
                    break;
                }
            }
        }
        return found;
    }

    /** Returns everything the child printed so far, standard error lines marked {@code [err]}. */
    public String output() {
        return transcript.toString();
    }

    /**
     * Stops the child with SIGSTOP, as a long GC pause or a frozen VM would: its threads and timers
     * stand still, its sockets stay open. Only ever signals this child.
     *
     * @throws IllegalStateException if the child has exited or the signal cannot be sent
     */
    public void pause() {
        signal("STOP");
    }

    /**
     * Continues a child stopped by {@link #pause()} with SIGCONT.
     *
     * @throws IllegalStateException if the child has exited or the signal cannot be sent
     */
    public void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        if (!process.isAlive()) {
            throw new IllegalStateException(mainClass + " has exited; cannot send SIG" + name);
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
                    .redirectErrorStream(true).start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot run kill -" + name, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted sending SIG" + name, e);
        }
    }

    /**
     * Kills the child with SIGKILL and returns once it has exited. Does nothing if it already has.
     */
    public void kill() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
        boolean interrupted = false;
        while (true) {
            try {
                process.waitFor();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Kills the child if it is still running. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                kill();
            } finally {
                Cleanup.forget(this);
            }
        }
    }

    /** Returns the main class and pid, for logs and assertion messages. */
    @Override
    public String toString() {
        return "ChildJvm[" + mainClass + " pid " + process.pid() + "]";
    }

    private IllegalStateException failure(String what) {
        return new IllegalStateException(this + " " + what + "\n--- output ---\n" + transcript);
    }

    private String exitStatus() {
        try {
            return process.waitFor(1, TimeUnit.SECONDS) ? " (exit status " + process.exitValue() + ")" : "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private Thread drain(InputStream stream, String name, boolean stdout) {
        Thread thread = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line; (line = reader.readLine()) != null; ) {
                    transcript.append(stdout ? "" : "[err] ").append(line).append('\n');
                    if (stdout) {
                        lines.add(line);
                    }
                }
            } catch (IOException e) {
                transcript.append("[testkit] reading std").append(name).append(" failed: ").append(e).append('\n');
            } finally {
                if (stdout) {
                    lines.add(END);
                }
            }
        }, "child-jvm-" + process.pid() + "-std" + name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static String javaBinary() {
        Path fromHome = Paths.get(System.getProperty("java.home"), "bin", "java");
        if (Files.isExecutable(fromHome)) {
            return fromHome.toString();
        }
        Optional<String> current = ProcessHandle.current().info().command();
        return current.orElse("java");
    }
}
