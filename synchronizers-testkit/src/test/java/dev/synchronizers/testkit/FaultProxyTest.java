package dev.synchronizers.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** FaultProxy against a real redis-server, through raw sockets and through Lettuce. */
@Tag("redis")
@Timeout(30)
class FaultProxyTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private FaultProxy proxy;
    private RedisClient client;

    @BeforeEach
    void startProxy() throws IOException {
        redis.server().call("FLUSHALL");
        proxy = FaultProxy.start(redis.server().port());
        client = RedisClient.create();
        client.setOptions(ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(1)).build())
                .build());
    }

    @AfterEach
    void stopProxy() {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        proxy.close();
    }

    /** "Forward normally": commands and replies pass unchanged, one server connection per client connection. */
    @Test
    void pass_forwardsCommandsAndReplies() throws IOException {
        assertTrue(proxy.uri().equals("redis://127.0.0.1:" + proxy.port()), proxy.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(proxy.uri()))) {
            connection.sync().set("k", "v");
            assertEquals("v", connection.sync().get("k"));
            assertEquals(1, proxy.connections());
        }
        assertEquals("v", redis.server().call("GET", "k"));
    }

    /** "Forward the next N commands ... discard exactly their replies": the SET runs, its reply never comes. */
    @Test
    void dropReplies_namedCommand_runsButItsReplyIsLostAndTheNextArrives() throws IOException {
        proxy.dropReplies(1, "set");
        try (Socket socket = connect()) {
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            Resp.write(out, "PING");   // not named: not chosen
            Resp.write(out, "SET", "k", "v");
            Resp.write(out, "GET", "k");
            assertEquals("PONG", Resp.read(in));
            assertEquals("v", Resp.read(in), "the reply after the dropped one belongs to GET");
            Resp.write(out, "SET", "k", "w");
            assertEquals("OK", Resp.read(in), "only one reply is dropped");
        }
        assertEquals(1, proxy.droppedReplies());
        assertEquals("w", redis.server().call("GET", "k"));
    }

    /**
     * "Pub/Sub pushes are not replies to commands": on a RESP3 Pub/Sub connection a message
     * passes while a PING's reply is dropped, and the next PING's reply arrives.
     */
    @Test
    void dropReplies_onSubscribedResp3Connection_skipsPushesAndDropsTheReply() throws IOException {
        try (Socket socket = connect()) {
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            Resp.write(out, "HELLO", "3");
            assertTrue(readFrame(in).startsWith("%"), "HELLO 3 answers with a map");
            Resp.write(out, "SUBSCRIBE", "ch");
            assertEquals(">[subscribe, ch, 1]", readFrame(in));
            proxy.dropReplies(1, "PING");
            Resp.write(out, "PING");
            await(() -> proxy.droppedReplies() == 1);
            call("PUBLISH", "ch", "hello");
            Resp.write(out, "PING", "again");
            assertEquals(">[message, ch, hello]", readFrame(in));
            assertEquals("again", readFrame(in));
        }
    }

    /** "Only count replies on connections where you know the ordering": a RESP2 subscriber is never chosen. */
    @Test
    void dropReplies_onSubscribedResp2Connection_choosesNothingThere() throws IOException {
        try (Socket socket = connect()) {
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            Resp.write(out, "SUBSCRIBE", "ch");
            assertEquals("[subscribe, ch, 1]", readFrame(in));
            proxy.dropReplies(1);
            Resp.write(out, "PING");
            assertEquals("[pong, ]", readFrame(in));
            assertEquals(0, proxy.droppedReplies());
        }
        try (Socket socket = connect()) {
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            Resp.write(out, "PING", "first");
            Resp.write(out, "PING", "second");
            assertEquals("second", readFrame(in), "the drop is still to be chosen on another connection");
        }
    }

    /** "Buffer replies, deliver none until pass()": the command runs while its reply waits. */
    @Test
    void holdReplies_thenPass_deliversTheHeldRepliesInOrder() throws IOException {
        try (Socket socket = connect()) {
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            Resp.write(out, "PING");
            assertEquals("PONG", Resp.read(in));
            proxy.holdReplies();
            Resp.write(out, "SET", "k", "v");
            Resp.write(out, "INCR", "n");
            await(() -> "1".equals(call("GET", "n")));
            assertEquals(0, in.available(), "a held reply arrived");
            proxy.pass();
            assertEquals("OK", Resp.read(in));
            assertEquals("1", Resp.read(in));
        }
    }

    /** "Close every current connection (both sides)": Lettuce notices and reconnects on a new connection. */
    @Test
    void cutAll_closesConnections_andLettuceReconnects() {
        try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(proxy.uri()))) {
            long before = connection.sync().clientId();
            proxy.cutAll();
            long after = connection.sync().clientId();   // queued while disconnected, sent after the reconnect
            assertNotEquals(before, after);
            assertEquals(1, proxy.connections());
        }
    }

    /** "Accept new connections but never forward/answer": connects and commands time out; off: normal again. */
    @Test
    void blackhole_makesConnectsAndCommandsTimeOut_untilTurnedOff() {
        RedisURI uri = RedisURI.builder(RedisURI.create(proxy.uri())).withTimeout(Duration.ofMillis(500)).build();
        try (StatefulRedisConnection<String, String> connection = client.connect(uri)) {
            proxy.blackhole(true);
            assertThrows(RedisCommandTimeoutException.class, () -> connection.sync().ping());
            assertThrows(RedisConnectionException.class, () -> client.connect(uri).close());
            proxy.blackhole(false);
            // The timed-out PING's reply arrives now and is matched to it; this one gets its own.
            assertEquals("v", set(connection));
            try (StatefulRedisConnection<String, String> fresh = client.connect(uri)) {
                assertEquals("PONG", fresh.sync().ping());
            }
        }
    }

    /** "Delay every packet, both directions": pipelined replies all arrive, in order. */
    @Test
    void delay_keepsOrderAndDeliversEverything() throws IOException {
        proxy.delay(Duration.ofMillis(50));
        try (Socket socket = connect()) {
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            for (int i = 0; i < 20; i++) {
                Resp.write(out, "INCR", "n");
            }
            for (int i = 1; i <= 20; i++) {
                assertEquals(Integer.toString(i), Resp.read(in));
            }
        }
        assertEquals("20", call("GET", "n"));
    }

    /** Closing the proxy closes its connections and frees the port. */
    @Test
    void close_closesConnections() throws IOException {
        try (Socket socket = connect()) {
            socket.getOutputStream();
            await(() -> proxy.connections() == 1);
            proxy.close();
            assertEquals(-1, socket.getInputStream().read());
        }
        proxy.close();
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket("127.0.0.1", proxy.port());
        socket.setSoTimeout(10_000);
        return socket;
    }

    /**
     * Reads one RESP2/RESP3 frame as text: scalars as their value, aggregates as their type byte
     * (none for an array) and their elements in brackets.
     */
    private static String readFrame(InputStream in) throws IOException {
        int type = in.read();
        StringBuilder line = new StringBuilder();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new IOException("connection closed inside a frame");
            }
            line.append((char) c);
        }
        String value = line.substring(0, line.length() - 1);
        switch (type) {
            case '$': case '=': {
                int length = Integer.parseInt(value);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*': case '>': case '~': case '%': {
                int count = Integer.parseInt(value) * (type == '%' ? 2 : 1);
                List<String> elements = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    elements.add(readFrame(in));
                }
                return (type == '*' ? "" : String.valueOf((char) type)) + elements;
            }
            default:
                return value;
        }
    }

    private static String set(StatefulRedisConnection<String, String> connection) {
        connection.sync().set("k", "v");
        return connection.sync().get("k");
    }

    private static String call(String... command) {
        try {
            return redis.server().call(command);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Waits for a condition the test cannot be told of, polling; the class timeout bounds it. */
    private static void await(BooleanSupplier condition) {
        while (!condition.getAsBoolean()) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
