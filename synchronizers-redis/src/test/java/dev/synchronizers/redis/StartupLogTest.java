package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * "Start-up says what it connected to: one INFO line per client with the library version, the
 * topology, the servers and the client id. The client id is reachable from the Synchronizers."
 * The log goes to slf4j-simple's standard error, which the test copies while the client is built.
 */
@Tag("redis")
class StartupLogTest {

    private static final List<RedisServer> SERVERS = new ArrayList<>();

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 3; i++) {
            SERVERS.add(RedisServers.start());
        }
    }

    @AfterAll
    static void stopServers() {
        SERVERS.forEach(RedisServer::close);
    }

    /** One INFO line naming the version, "standalone", the server and the id; the id owns the holds. */
    @Test
    void build_standalone_logsOneInfoLineAndTheIdIsTheHoldersId() throws Exception {
        RedisServer server = SERVERS.get(0);
        Synchronizers[] built = new Synchronizers[1];
        String lines = capturingStandardError(() -> built[0] = RedisSynchronizers.create(server.uri()));
        try (Synchronizers client = built[0]) {
            String id = client.clientId();
            List<String> info = infoLinesNaming(lines, id);
            assertEquals(1, info.size(), lines);
            String line = info.get(0);
            assertTrue(line.contains("standalone") && line.contains(server.host() + ":" + server.port()), line);
            assertTrue(line.matches(".*synchronizers \\d+\\.\\d+[^ ]*: .*"), "names the library version: " + line);

            DistributedLock lock = client.lock("startup-log-test");
            lock.lock();
            try {
                assertEquals(id, lock.snapshot().holders().get(0).clientId(), "the id owns the client's holds");
            } finally {
                lock.unlock();
            }
        }
    }

    /** A Redlock client logs one INFO line too, naming every node. */
    @Test
    void build_redlock_logsOneInfoLineNamingEveryNode() throws Exception {
        Redlock[] built = new Redlock[1];
        String lines = capturingStandardError(() -> built[0] = Redlock.create(
                SERVERS.stream().map(RedisServer::uri).toArray(String[]::new)));
        try (Redlock client = built[0]) {
            List<String> info = infoLinesNaming(lines, client.clientId());
            assertEquals(1, info.size(), lines);
            for (RedisServer server : SERVERS) {
                assertTrue(info.get(0).contains(server.host() + ":" + server.port()), info.get(0));
            }
        }
    }

    private static List<String> infoLinesNaming(String lines, String clientId) {
        return lines.lines().filter(line -> line.contains(" INFO ") && line.contains(clientId)).toList();
    }

    /** Runs {@code build} and returns what was written to standard error meanwhile. */
    private static String capturingStandardError(Supplier<?> build) {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, log), true, StandardCharsets.UTF_8));
        try {
            build.get();
        } finally {
            System.setErr(stderr);
        }
        return log.toString(StandardCharsets.UTF_8);
    }

    /** Writes to two streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        Tee(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public synchronized void write(int b) throws IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
            first.write(bytes, offset, length);
            second.write(bytes, offset, length);
        }
    }
}
