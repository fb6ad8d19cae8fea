package dev.synchronizers.redis.support;

import io.lettuce.core.RedisException;
import java.util.concurrent.CompletionException;

/**
 * The refusal of a command by a client that is not connected, so that the command never reached
 * Redis. Lettuce refuses that way when its connection is down and its
 * {@code DisconnectedBehavior} is {@code REJECT_COMMANDS}: a {@link RedisException} with the text
 * {@value #MESSAGE}. The library forges the same refusal where it stands in for a connection that
 * does not exist yet (a Redlock node that was down when the client started), so that callers
 * handle both alike. This class is the one place that knows the text: {@link #refusal()} makes
 * one and {@link #isRefusal(Throwable)} recognises one.
 *
 * <p>Telling a refusal apart matters because nothing happened in Redis: a write refused this way
 * needs no undo, unlike one that failed after it was sent (a timeout, a connection lost with the
 * command in flight).
 */
public final class Disconnected {

    /** The text of Lettuce's refusal of a command while disconnected, as Lettuce 7 writes it. */
    public static final String MESSAGE = "Currently not connected. Commands are rejected.";

    /**
     * What a refusal's message begins with: {@link #MESSAGE} without its final full stop, so that
     * the match does not hang on punctuation.
     */
    private static final String PREFIX = MESSAGE.substring(0, MESSAGE.length() - 1);

    private Disconnected() {
    }

    /**
     * A new refusal, as Lettuce gives it: a {@link RedisException} whose message is {@value #MESSAGE}.
     * {@link #isRefusal(Throwable)} recognises it.
     */
    public static RedisException refusal() {
        return new RedisException(MESSAGE);
    }

    /**
     * Whether a call failed because the client refused it while disconnected, so it never ran:
     * a {@link RedisException} whose message begins with the refusal's text, possibly wrapped in
     * {@link CompletionException}s.
     *
     * @param failure how the call failed; may be null (then false)
     * @return true for a refusal, false for any other failure
     */
    public static boolean isRefusal(Throwable failure) {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause instanceof RedisException && String.valueOf(cause.getMessage()).startsWith(PREFIX);
    }
}
