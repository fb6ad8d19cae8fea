package dev.synchronizers.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** RedisExtension: one shared server per class, extra managed servers on request. */
@Tag("redis")
class RedisExtensionTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** "Returns the shared server" for RedisServer parameters. */
    @Test
    void resolveParameter_redisServer_isTheSharedServer(RedisServer server) throws IOException {
        assertSame(redis.server(), server);
        assertEquals("PONG", server.call("PING"));
    }

    /** "Starts another, independent managed server." */
    @Test
    void startManaged_returnsAnotherManagedServer() throws IOException {
        RedisServer extra = redis.startManaged();
        assertTrue(extra.isManaged());
        assertNotEquals(redis.server().port(), extra.port());
        assertEquals("PONG", extra.call("PING"));
    }

    /** "A @Nested class shares its enclosing class's servers." */
    @Nested
    class Inner {
        @Test
        void server_inNestedClass_isTheOuterServer(RedisServer server) throws IOException {
            assertSame(redis.server(), server);
            assertEquals("PONG", server.call("PING"));
        }
    }
}
