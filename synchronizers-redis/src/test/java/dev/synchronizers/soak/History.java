package dev.synchronizers.soak;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The history one soak worker JVM writes: one event per line, appended and written through at
 * once, so that a JVM killed with SIGKILL leaves every event it recorded before it died.
 *
 * <p>A line is {@code <seq> TAB <wall millis> TAB <type> TAB <field>...}. {@code seq} orders the
 * events of one JVM (it says nothing across JVMs); the wall-clock time is for people reading the
 * file. Fields never contain tabs or line breaks ({@link #clean}).
 *
 * <p>Event types and their fields:
 * <ul>
 *   <li>{@code START jvm clientId pid [cache|nocache]}: the worker's client is connected; whether
 *       it caches non-fair locks (not said by a Redlock worker).</li>
 *   <li>{@code OP hold thread op name waitMillis boundMillis threadId}: an operation begins.</li>
 *   <li>{@code ACQ hold token weight [cached|retake]}: it acquired ({@code token} -1 where the kind
 *       has none); a caching worker's non-fair lock hold taken from its client's cache says so, and
 *       {@code retake} if it was a local re-take.</li>
 *   <li>{@code NOACQ hold why}: it did not ({@code timeout} or {@code unavailable}).</li>
 *   <li>{@code REL hold outcome}: the release ended: {@code ok}, {@code lost:<cause>} (it threw
 *       {@code LostHoldException}), {@code unavailable} (no reply: the client retries it).</li>
 *   <li>{@code LOST name kind threadId token cause}: the lost-hold listener was told.</li>
 *   <li>{@code ERR hold exception}: an exception that no fault explains.</li>
 *   <li>{@code END hold elapsedMillis boundMillis}: the operation ended.</li>
 *   <li>{@code DONE}: every thread stopped and the client closed.</li>
 * </ul>
 *
 * <p>Thread-safe: writers are serialised, so each line is whole.
 */
final class History implements AutoCloseable {

    private final FileOutputStream out;
    private final ReentrantLock writing = new ReentrantLock();
    private long seq;

    private History(FileOutputStream out) {
        this.out = out;
    }

    /** Creates (or truncates) the history file at {@code file}. */
    static History create(Path file) {
        try {
            Files.createDirectories(file.getParent());
            return new History(new FileOutputStream(file.toFile()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the history " + file, e);
        }
    }

    /** Appends one event and returns its sequence number. */
    long record(String type, Object... fields) {
        writing.lock();
        try {
            long mine = ++seq;
            StringBuilder line = new StringBuilder().append(mine).append('\t').append(System.currentTimeMillis())
                    .append('\t').append(type);
            for (Object field : fields) {
                line.append('\t').append(clean(String.valueOf(field)));
            }
            out.write(line.append('\n').toString().getBytes(StandardCharsets.UTF_8));
            return mine;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the history", e);
        } finally {
            writing.unlock();
        }
    }

    @Override
    public void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close the history", e);
        }
    }

    /** Replaces what would break the line format. */
    static String clean(String text) {
        return text.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }

    /** One event read back. */
    record Event(String jvm, long seq, long wallMillis, String type, List<String> fields) {

        String field(int index) {
            return fields.get(index);
        }

        long longField(int index) {
            return Long.parseLong(fields.get(index));
        }
    }

    /**
     * Reads the history of the worker {@code jvm} from {@code file}. A last line cut short by a
     * SIGKILL is skipped.
     */
    static List<Event> read(String jvm, Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the history " + file, e);
        }
        List<Event> events = new ArrayList<>();
        for (String line : lines) {
            String[] parts = line.split("\t", -1);
            if (parts.length < 3) {
                continue;
            }
            try {
                events.add(new Event(jvm, Long.parseLong(parts[0]), Long.parseLong(parts[1]), parts[2],
                        List.copyOf(Arrays.asList(parts).subList(3, parts.length))));
            } catch (NumberFormatException e) {
                continue;   // a line torn by SIGKILL
            }
        }
        return events;
    }
}
