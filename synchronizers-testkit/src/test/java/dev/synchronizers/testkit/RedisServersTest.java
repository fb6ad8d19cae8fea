package dev.synchronizers.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The testkit's own fixture, against real redis-server processes on loopback. */
@Tag("redis")
class RedisServersTest {

    private static final String[] NO_AUTH = new String[0];

    /* --------------- start --------------- */

    /** "Starts ... a standalone server from the first available source, and returns once it answers PING." */
    @Test
    void start_default_answersPingOnLoopback() throws IOException {
        try (RedisServer server = RedisServers.start()) {
            assertEquals("PONG", server.call("PING"));
            assertEquals("127.0.0.1", server.host());
            assertTrue(server.uri().startsWith("redis://127.0.0.1:" + server.port()), server.uri());
            assertTrue(List.of("REDIS_URL", "PATH", "DOCKER", "BUNDLED").contains(server.source()));
            assertEquals(server.version(), Resp.infoField(server.info("server"), "redis_version"));
        }
    }

    /** "Extra arguments appended to the testkit's own." */
    @Test
    void start_extraArgs_areApplied() {
        try (RedisServer server = RedisServers.start("--maxmemory", "5mb")) {
            assertEquals("5242880", Resp.infoField(server.info("memory"), "maxmemory"));
        }
    }

    /** "A config file ... passed as the first argument." */
    @Test
    void start_configFile_isApplied() {
        try (RedisServer server = RedisServers.start(RedisServers.Options.defaults().configFile("maxmemory 7mb\n"))) {
            assertTrue(server.isManaged());
            assertEquals("7340032", Resp.infoField(server.info("memory"), "maxmemory"));
        }
    }

    /** "Forces one source, to test the fallbacks": the embedded-redis binary is Redis 6.2. */
    @Test
    void start_forcedBundled_runsRedis62() throws IOException {
        String before = System.setProperty(RedisServers.SOURCE_PROPERTY, "BUNDLED");
        try (RedisServer server = RedisServers.start()) {
            assertEquals("BUNDLED", server.source());
            assertTrue(server.isManaged());
            assertTrue(server.version().startsWith("6.2."), server.version());
            assertEquals("PONG", server.call("PING"));
        } finally {
            restore(before);
        }
    }

    /** "REDIS_URL ... must be on 127.0.0.1 or localhost." */
    @Test
    void fromUrl_nonLoopbackHost_isRejectedWithoutConnecting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RedisServers.fromUrl("redis://10.1.2.3:6379"));
        assertTrue(e.getMessage().contains("loopback"), e.getMessage());
    }

    /* --------------- fault controls --------------- */

    /** "Stops the server process with SIGSTOP, so that it accepts connections but answers nothing." */
    @Test
    void pause_managedServer_answersNothingUntilResumed() throws IOException {
        try (RedisServer server = RedisServers.startManaged()) {
            server.pause();
            assertTrue(server.isRunning());
            assertThrows(SocketTimeoutException.class,
                    () -> Resp.call(server.host(), server.port(), Duration.ofMillis(200), NO_AUTH, "PING"));
            server.resume();
            assertEquals("PONG", server.call("PING"));
        }
    }

    /** "Kills the server process with SIGKILL and returns once it has exited." */
    @Test
    void kill_managedServer_portRefusesConnections() {
        try (RedisServer server = RedisServers.startManaged()) {
            ProcessHandle process = ProcessHandle.of(server.pid()).orElseThrow();
            server.kill();
            assertFalse(process.isAlive());
            assertFalse(server.isRunning());
            assertThrows(ConnectException.class, () -> server.call("PING"));
        }
    }

    /** "Starts a new one on the same port with the same arguments, and returns once it answers PING." */
    @Test
    void restart_afterKill_answersOnSamePort() throws IOException {
        try (RedisServer server = RedisServers.startManaged()) {
            int port = server.port();
            long firstPid = server.pid();
            server.kill();
            server.restart();
            assertEquals(port, server.port());
            assertNotEquals(firstPid, server.pid());
            assertEquals("PONG", server.call("PING"));
            server.restart();   // kills the running process first
            assertEquals("PONG", server.call("PING"));
        }
    }

    /** "A server named by REDIS_URL ... is not managed, and the fault controls throw." */
    @Test
    void kill_unmanagedServer_throwsUnsupported() {
        try (RedisServer managed = RedisServers.startManaged()) {
            RedisServer external = RedisServer.external("REDIS_URL", managed.port(), managed.uri(), NO_AUTH);
            assertFalse(external.isManaged());
            assertEquals(-1, external.pid());
            assertThrows(UnsupportedOperationException.class, external::kill);
            assertThrows(UnsupportedOperationException.class, external::pause);
            assertThrows(UnsupportedOperationException.class, external::restart);
            external.close();
            assertTrue(managed.isRunning(), "closing an unmanaged server must not stop it");
        }
    }

    /* --------------- close --------------- */

    /** "A managed process is resumed if paused, sent SIGTERM ... Idempotent." */
    @Test
    void close_pausedServer_leavesNoProcess() {
        RedisServer server = RedisServers.startManaged();
        ProcessHandle process = ProcessHandle.of(server.pid()).orElseThrow();
        server.pause();
        server.close();
        assertFalse(process.isAlive());   // ProcessHandle compares start times, so a reused pid does not count
        assertFalse(server.isRunning());
        server.close();
        assertThrows(IllegalStateException.class, server::restart);
    }

    /* --------------- ChildJvm --------------- */

    /** "Reads the child's standard output until a line starting with prefix appears"; kill() ends it. */
    @Test
    void childJvm_printsReady_killEndsIt() throws InterruptedException {
        try (ChildJvm child = ChildJvm.start(Sleeper.class)) {
            String line = child.awaitLine("READY", Duration.ofSeconds(30));
            assertEquals("READY pid " + child.pid(), line);
            assertTrue(child.isAlive());
            child.kill();
            assertFalse(child.isAlive());
            assertFalse(ProcessHandle.of(child.pid()).map(ProcessHandle::isAlive).orElse(false));
        }
    }

    /** "Throws ... if the child's output ends (it exited); the message holds everything the child printed." */
    @Test
    void childJvm_exitsWithoutLine_throwsWithOutput() {
        try (ChildJvm child = ChildJvm.start(Sleeper.class.getName(), Map.of("sleeper.detail", "disk full"),
                List.of("fail"))) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> child.awaitLine("READY", Duration.ofSeconds(30)));
            assertTrue(e.getMessage().contains("starting"), e.getMessage());
            assertTrue(e.getMessage().contains("boom: disk full"), e.getMessage());
            assertTrue(e.getMessage().contains("exit status 3"), e.getMessage());
        }
    }

    private static void restore(String before) {
        if (before == null) {
            System.clearProperty(RedisServers.SOURCE_PROPERTY);
        } else {
            System.setProperty(RedisServers.SOURCE_PROPERTY, before);
        }
    }
}
