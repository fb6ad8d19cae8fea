package dev.synchronizers.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal RESP2 client over a plain socket: one connection per call, one command, one reply.
 * Enough for readiness checks, {@code INFO} and the cluster fixture's {@code CLUSTER} commands;
 * not a Redis client.
 */
final class Resp {

    private Resp() {
    }

    /**
     * Sends {@code command} to {@code host:port} and returns its reply: a simple string, a bulk
     * string (null for a null bulk) or an integer as text.
     *
     * @param auth {@code AUTH} arguments to send first, or an empty array for none
     * @param timeout bound on connecting and on each read
     * @throws IOException if the connection fails or times out
     * @throws RedisReplyException if the server answers with an error
     */
    static String call(String host, int port, Duration timeout, String[] auth, String... command)
            throws IOException {
        Object reply = exchange(host, port, timeout, auth, command);
        if (reply instanceof List) {
            throw new IOException(command[0] + " answered with an array, not a single value");
        }
        return (String) reply;
    }

    /**
     * Sends {@code command} as {@link #call} does and returns its reply, which must be an array
     * of bulk strings (as {@code CLUSTER GETKEYSINSLOT} answers); a null array is empty.
     *
     * @throws IOException if the connection fails or times out, or the reply is not such an array
     * @throws RedisReplyException if the server answers with an error
     */
    static List<String> callList(String host, int port, Duration timeout, String[] auth, String... command)
            throws IOException {
        Object reply = exchange(host, port, timeout, auth, command);
        if (reply == null) {
            return List.of();
        }
        if (!(reply instanceof List<?> elements)) {
            throw new IOException(command[0] + " answered with a single value, not an array: " + reply);
        }
        List<String> strings = new ArrayList<>(elements.size());
        for (Object element : elements) {
            if (element instanceof List) {
                throw new IOException(command[0] + " answered with nested arrays");
            }
            strings.add((String) element);
        }
        return strings;
    }

    /**
     * Sends {@code command} as {@link #call} does and returns its reply, which must be an array of
     * flat field-value arrays (as {@code SENTINEL REPLICAS} answers), each as an ordered map.
     *
     * @throws IOException if the connection fails or times out, or the reply is not such an array
     * @throws RedisReplyException if the server answers with an error
     */
    static List<Map<String, String>> callMaps(String host, int port, Duration timeout, String[] auth,
            String... command) throws IOException {
        Object reply = exchange(host, port, timeout, auth, command);
        if (reply == null) {
            return List.of();
        }
        if (!(reply instanceof List<?> elements)) {
            throw new IOException(command[0] + " answered with a single value, not an array: " + reply);
        }
        List<Map<String, String>> maps = new ArrayList<>(elements.size());
        for (Object element : elements) {
            if (!(element instanceof List<?> fields) || fields.size() % 2 != 0) {
                throw new IOException(command[0] + " answered with an element that is no field-value array: "
                        + element);
            }
            Map<String, String> map = new LinkedHashMap<>();
            for (int i = 0; i < fields.size(); i += 2) {
                map.put(String.valueOf(fields.get(i)), String.valueOf(fields.get(i + 1)));
            }
            maps.add(map);
        }
        return maps;
    }

    private static Object exchange(String host, int port, Duration timeout, String[] auth, String... command)
            throws IOException {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            if (auth.length > 0) {
                String[] authCommand = new String[auth.length + 1];
                authCommand[0] = "AUTH";
                System.arraycopy(auth, 0, authCommand, 1, auth.length);
                write(out, authCommand);
                read(in);
            }
            write(out, command);
            return read(in);
        }
    }

    /** Writes {@code command} as a RESP array of bulk strings and flushes. */
    static void write(OutputStream out, String... command) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        buffer.writeBytes(("*" + command.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String part : command) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            buffer.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            buffer.writeBytes(bytes);
            buffer.writeBytes(new byte[] {'\r', '\n'});
        }
        out.write(buffer.toByteArray());
        out.flush();
    }

    /**
     * Reads one reply: a String for a simple string, a bulk string (null for a null bulk) or an
     * integer as text, or a List of replies for an array.
     *
     * @throws RedisReplyException if it is an error
     */
    static Object read(InputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("connection closed before a reply");
        }
        String line = readLine(in);
        switch (type) {
            case '+':
            case ':':
                return line;
            case '-':
                throw new RedisReplyException(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                if (bytes.length < length + 2) {
                    throw new EOFException("connection closed inside a bulk reply");
                }
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                if (count < 0) {
                    return null;
                }
                List<Object> elements = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    elements.add(read(in));
                }
                return elements;
            }
            default:
                throw new IOException("unsupported reply type '" + (char) type + "': " + line);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int previous = -1;
        while (true) {
            int next = in.read();
            if (next < 0) {
                throw new EOFException("connection closed inside a reply");
            }
            if (previous == '\r' && next == '\n') {
                byte[] bytes = line.toByteArray();
                return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
            }
            line.write(next);
            previous = next;
        }
    }

    /** Returns the value of {@code field} in an {@code INFO} reply, or null if absent. */
    static String infoField(String info, String field) {
        String prefix = field + ":";
        for (String line : info.split("\r\n")) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
        return null;
    }

    /** An error reply ({@code -ERR ...}) from the server. */
    static final class RedisReplyException extends IOException {
        RedisReplyException(String message) {
            super(message);
        }
    }
}
