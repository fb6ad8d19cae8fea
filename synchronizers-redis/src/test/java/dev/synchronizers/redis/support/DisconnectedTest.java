package dev.synchronizers.redis.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.DefaultEndpoint;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Lettuce's refusal of a command while disconnected, made and recognised in one place. Needs no
 * Redis: the refusal comes from an endpoint that never connected.
 */
class DisconnectedTest {

    /** The text this library matches is the text the Lettuce on the class path writes. */
    @Test
    void isRefusal_lettucesOwnRefusal_isRecognised() throws InterruptedException {
        ClientResources resources = DefaultClientResources.create();
        try {
            DefaultEndpoint endpoint = new DefaultEndpoint(ClientOptions.builder()
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build(), resources);
            AsyncCommand<String, String, String> ping =
                    new AsyncCommand<>(new Command<>(CommandType.PING, new StatusOutput<>(StringCodec.UTF8)));
            endpoint.write(ping);
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> ping.get(10, TimeUnit.SECONDS));

            assertEquals(Disconnected.MESSAGE, refused.getCause().getMessage());
            assertTrue(Disconnected.isRefusal(refused.getCause()));
            assertTrue(Disconnected.isRefusal(new CompletionException(refused.getCause())));
            endpoint.close();
        } finally {
            resources.shutdown(0, 10, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void refusal_isRecognised_throughCompletionExceptions() {
        RedisException refusal = Disconnected.refusal();

        assertEquals(Disconnected.MESSAGE, refusal.getMessage());
        assertTrue(Disconnected.isRefusal(refusal));
        assertTrue(Disconnected.isRefusal(new CompletionException(new CompletionException(refusal))));
    }

    @Test
    void isRefusal_otherFailures_isFalse() {
        assertFalse(Disconnected.isRefusal(null));
        assertFalse(Disconnected.isRefusal(new RedisException("Connection closed")));
        assertFalse(Disconnected.isRefusal(new RedisException("Command timed out after 5 second(s)")));
        assertFalse(Disconnected.isRefusal(new RedisException((String) null)));
        assertFalse(Disconnected.isRefusal(new IllegalStateException(Disconnected.MESSAGE)), "not Lettuce's type");
        assertFalse(Disconnected.isRefusal(new CompletionException(null)));
    }

    /** Lettuce's connection failures are RedisExceptions too: with the refusal's text they count. */
    @Test
    void isRefusal_subtypeWithTheText_isTrue() {
        assertTrue(Disconnected.isRefusal(new RedisConnectionException(Disconnected.MESSAGE)));
    }
}
