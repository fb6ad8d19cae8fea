package dev.synchronizers.redis.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.SynchronizerException;
import dev.synchronizers.SynchronizerUnavailableException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How the client's failures reach the caller: error replies that mean "not now" (a cluster
 * resharding or failing over, a demoted master, a loading server) are
 * {@link SynchronizerUnavailableException}, as an unreachable Redis is; other error replies are
 * plain {@link SynchronizerException}s.
 */
class RepliesTest {

    @ParameterizedTest
    @ValueSource(strings = {
        "CLUSTERDOWN The cluster is down",
        "CLUSTERDOWN Hash slot not served",
        "TRYAGAIN Multiple keys request during rehashing of slot",
        "MOVED 3999 127.0.0.1:6381",
        "ASK 3999 127.0.0.1:6381",
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        "LOADING Redis is loading the dataset in memory",
        "READONLY You can't write against a read only replica.",
        "BUSY Redis is busy running a script."})
    void translate_notNowReply_isUnavailable(String reply) {
        SynchronizerException translated = Replies.translate(
                new CompletionException(new RedisCommandExecutionException(reply)), "acquire lock 'x'",
                Duration.ofSeconds(5));

        assertInstanceOf(SynchronizerUnavailableException.class, translated);
        assertTrue(translated.getMessage().contains(reply), translated.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ERR unknown command 'FOO'", "NOSCRIPT No matching script", "ERR value is not an integer"})
    void translate_otherErrorReply_isASynchronizerExceptionButNotUnavailable(String reply) {
        SynchronizerException translated = Replies.translate(new RedisCommandExecutionException(reply),
                "acquire lock 'x'", Duration.ofSeconds(5));

        assertEquals(SynchronizerException.class, translated.getClass());
    }

    /** What a write gets on a replica: directly, from a script on Redis 7, and from a script on Redis 6.2. */
    @ParameterizedTest
    @ValueSource(strings = {
        "READONLY You can't write against a read only replica.",
        "READONLY You can't write against a read only replica. script: ff967d0ae0e6, on @user_script:1.",
        "ERR Error running script (call to f_ff967d0ae0e6): @user_script:1: @user_script: 1:"
                + " -READONLY You can't write against a read only replica. "})
    void readOnly_replicaRefusesAWrite_true(String reply) {
        assertTrue(Replies.readOnly(new CompletionException(new RedisCommandExecutionException(reply))));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ERR unknown command 'FOO'", "LOADING Redis is loading the dataset in memory",
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."})
    void readOnly_otherErrorReply_false(String reply) {
        assertFalse(Replies.readOnly(new RedisCommandExecutionException(reply)));
    }

    @Test
    void readOnly_noReply_false() {
        assertFalse(Replies.readOnly(new CompletionException(new RedisCommandTimeoutException("READONLY"))));
    }
}
