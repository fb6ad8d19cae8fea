package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * "Errors name the cause and the server": a wrong or missing password says so in the message of
 * the exception build() throws, naming the server, not two causes down; a URI without a scheme the
 * client accepts gets a message that lists the schemes it accepts.
 */
@Tag("redis")
class ConnectErrorsTest {

    private static RedisServer server;

    @BeforeAll
    static void startServer() {
        server = RedisServers.start(RedisServers.Options.defaults().managed().args("--requirepass", "right-secret"));
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private static String hostPort() {
        return server.host() + ":" + server.port();
    }

    /** A wrong password: the message says the password was refused, and names the server. */
    @Test
    void build_wrongPassword_messageSaysSoAndNamesTheServer() {
        SynchronizerUnavailableException e = assertThrows(SynchronizerUnavailableException.class,
                () -> RedisSynchronizers.create("redis://:wrong-secret@" + hostPort()).close());
        String message = e.getMessage();
        assertTrue(message.toLowerCase(Locale.ROOT).contains("password") && message.contains("WRONGPASS"), message);
        assertTrue(message.contains(hostPort()), message);
        assertTrue(!message.contains("wrong-secret"), "the password is not in the message: " + message);
    }

    /** No password where one is required: the message says authentication is required, naming the server. */
    @Test
    void build_noPassword_messageSaysAuthenticationIsRequired() {
        SynchronizerUnavailableException e = assertThrows(SynchronizerUnavailableException.class,
                () -> RedisSynchronizers.create("redis://" + hostPort()).close());
        String message = e.getMessage();
        assertTrue(message.contains("NOAUTH") && message.toLowerCase(Locale.ROOT).contains("password"), message);
        assertTrue(message.contains(hostPort()), message);
    }

    /** The right password connects. */
    @Test
    void build_rightPassword_connects() {
        RedisSynchronizers.create("redis://:right-secret@" + hostPort()).close();
    }

    /** A URI without a scheme, or with another one: the message lists the schemes accepted. */
    @Test
    void uri_withoutAcceptedScheme_messageListsTheSchemes() {
        for (String uri : new String[] {hostPort(), "http://" + hostPort()}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RedisSynchronizers.builder().uri(uri));
            String message = e.getMessage();
            assertTrue(message.contains("redis://") && message.contains("rediss://")
                    && message.contains("redis-sentinel://") && message.contains(uri), message);
        }
        for (String uri : new String[] {hostPort(), "http://" + hostPort()}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Redlock.create(uri, "redis://127.0.0.1:1", "redis://127.0.0.1:2"));
            assertTrue(e.getMessage().contains("redis://") && e.getMessage().contains(uri), e.getMessage());
        }
    }
}
