package dev.synchronizers.redis.support;

import dev.synchronizers.SynchronizerException;
import dev.synchronizers.SynchronizerUnavailableException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits for replies within a bound and translates failures into {@link SynchronizerException}s.
 *
 * <p>Waiting is uninterruptible on purpose: a command that is already on its way to Redis may take
 * effect there whatever the caller does, so the caller must learn its outcome (an acquisition it
 * got must be kept or undone, never forgotten). An interrupt that arrives meanwhile is kept and the
 * thread's interrupt status is set again before returning. The bound is the command timeout.
 */
public final class Replies {

    /** Error replies that mean "not now" rather than "wrong"; see {@link #unavailableForNow}. */
    private static final String[] UNAVAILABLE_PREFIXES = {
        "TRYAGAIN", "CLUSTERDOWN", "MOVED", "ASK", "MASTERDOWN", "LOADING", "READONLY", "BUSY"};

    private Replies() {
    }

    /**
     * Waits for a reply.
     *
     * @param <T> the reply type
     * @param reply the pending reply
     * @param timeout the longest time to wait
     * @param what what the command does, for example {@code "acquire lock 'orders'"}
     * @return the reply
     * @throws SynchronizerUnavailableException if Redis cannot be reached or does not answer in time
     * @throws SynchronizerException if Redis answers with an error
     */
    public static <T> T await(CompletionStage<T> reply, Duration timeout, String what) {
        CompletableFuture<T> future = reply.toCompletableFuture();
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw translate(e.getCause(), what, timeout);
                } catch (CancellationException e) {
                    throw translate(e, what, timeout);
                } catch (TimeoutException e) {
                    throw new SynchronizerUnavailableException(
                            what + ": no reply from Redis within " + timeout.toMillis() + " ms", e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Translates a failure of the Redis client into this library's exceptions.
     *
     * @param failure what the client reported
     * @param what what the command does
     * @param timeout the command timeout, for the message
     * @return the exception to throw
     */
    public static SynchronizerException translate(Throwable failure, String what, Duration timeout) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof SynchronizerException already) {
            return already;
        }
        if (cause instanceof RedisCommandExecutionException error) {
            String message = String.valueOf(error.getMessage());
            if (message.contains("WRONGTYPE")) {
                return new SynchronizerException(what + ": a key of this name holds a value of another"
                        + " Redis type (WRONGTYPE); it was left untouched. Use another name or key prefix", error);
            }
            if (unavailableForNow(message)) {
                return new SynchronizerUnavailableException(what + ": Redis cannot serve it now: " + message, error);
            }
            return new SynchronizerException(what + ": Redis answered with an error: " + message, error);
        }
        if (cause instanceof RedisCommandTimeoutException) {
            return new SynchronizerUnavailableException(
                    what + ": no reply from Redis within " + timeout.toMillis() + " ms", cause);
        }
        if (cause instanceof RedisConnectionException || cause instanceof RedisException
                || cause instanceof CancellationException || cause instanceof java.io.IOException) {
            return new SynchronizerUnavailableException(what + ": Redis is unreachable: " + cause.getMessage(), cause);
        }
        return new SynchronizerException(what + ": unexpected failure: " + cause, cause);
    }

    /**
     * Tells whether a command failed because the server it went to is a replica now: a
     * {@code READONLY} error reply, as a write gets on a replica, and as a script's write gets
     * there (Redis 7 passes the script's error on as it is; Redis 6.2 wraps it in an
     * {@code ERR Error running script} reply that quotes {@code -READONLY}). The caller still gets
     * it as any reply that means "not now" ({@link SynchronizerUnavailableException}, from {@link
     * #translate}); this only lets a topology that follows a moving master notice that the server
     * it takes for the master is not one.
     *
     * @param failure what the client reported, possibly wrapped in a {@link CompletionException}
     *     or an {@link ExecutionException}
     * @return true for a {@code READONLY} error reply
     */
    public static boolean readOnly(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (!(cause instanceof RedisCommandExecutionException error)) {
            return false;
        }
        String message = String.valueOf(error.getMessage());
        return message.startsWith("READONLY") || message.contains("-READONLY ");
    }

    /**
     * Error replies that say the server cannot serve the command now, not that it is wrong: a
     * cluster resharding or failing over ({@code TRYAGAIN}, {@code CLUSTERDOWN}, {@code MOVED} and
     * {@code ASK} beyond the redirections the client follows), a replica without its master
     * ({@code MASTERDOWN}), a server loading its data ({@code LOADING}), a write sent to a replica
     * ({@code READONLY}, after a demotion), or a script that blocks the server ({@code BUSY}).
     */
    private static boolean unavailableForNow(String message) {
        for (String prefix : UNAVAILABLE_PREFIXES) {
            if (message.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

}
