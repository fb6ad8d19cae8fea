package dev.synchronizers.redis.script;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Runs the scripts of {@link Script}, by SHA1 or with their text. The text of every script is read
 * from the classpath and hashed once, when the registry is created, with no network call.
 *
 * <p>Scripts run as their {@link Script#sending} says. {@link Script.Sending#BY_SHA} runs with
 * EVALSHA; when the server answers NOSCRIPT (after {@code SCRIPT FLUSH}, a restart or a failover to
 * a server that never saw the script), the same call is sent again with the script's text (EVAL),
 * which also caches it on that server. The fallback repeats for every call that meets NOSCRIPT, so
 * no flush, however often it happens, reaches the caller. That EVAL goes out when the NOSCRIPT
 * answer arrives, behind whatever this client sent on the connection meanwhile: such scripts are
 * safe when overtaken (see {@link Script}). Once the call's command timeout has passed since it was
 * sent, its caller may have given up on it and sent its follow-up: a NOSCRIPT answer that arrives
 * later is not followed by the EVAL, and the call fails as an unanswered one, having never run.
 * {@link Script.Sending#WITH_TEXT} runs with EVAL every time, so it never meets NOSCRIPT and runs
 * in the order it was sent.
 *
 * <p>On a cluster, the call goes to the master of its first key's slot, NOSCRIPT there (a
 * promoted replica, a restarted node) falls back to EVAL there, and a call refused with
 * {@code TRYAGAIN} (a multi-key call during a slot migration) or {@code CLUSTERDOWN} (the slot has
 * no master during a failover) is sent again every {@value #RETRY_MILLIS} ms until it runs or
 * the retry window (the command timeout) is spent: such a refusal means it did not run, so
 * sending it again is safe. What exceeds the window fails as any unanswered call does. A batch
 * sent with {@link #runBatch} is not sent again after {@code TRYAGAIN}: its caller splits it.
 *
 * <p>Thread-safe; one registry per connection.
 */
public final class ScriptRegistry {

    /** How long a call refused with TRYAGAIN or CLUSTERDOWN waits before it is sent again. */
    static final long RETRY_MILLIS = 50;

    private final RedisScriptingAsyncCommands<String, String> redis;
    private final ScriptCalls recorder;
    private final long retryNanos;
    private final Map<Script, String> texts = new EnumMap<>(Script.class);
    private final Map<Script, String> shas = new EnumMap<>(Script.class);

    /**
     * Reads and hashes every script.
     *
     * @param redis the connection's async commands, shared by all callers
     * @throws UncheckedIOException if a script is missing from the classpath
     */
    public ScriptRegistry(RedisScriptingAsyncCommands<String, String> redis) {
        this(redis, ScriptCalls.NONE, Duration.ZERO);
    }

    /**
     * Reads and hashes every script, reports every call and NOSCRIPT fall-back to {@code recorder},
     * and sends a call refused with TRYAGAIN or CLUSTERDOWN again within {@code retryFor}.
     *
     * @param redis the connection's async commands, shared by all callers
     * @param recorder where calls are counted
     * @param retryFor the command timeout: how long to keep sending a call that a cluster refused
     *     for now, and how long after a call was sent its NOSCRIPT answer is still followed by the
     *     EVAL; zero: never send a refused call again, and always follow NOSCRIPT
     * @throws UncheckedIOException if a script is missing from the classpath
     */
    public ScriptRegistry(RedisScriptingAsyncCommands<String, String> redis, ScriptCalls recorder, Duration retryFor) {
        this.redis = redis;
        this.recorder = recorder;
        this.retryNanos = retryFor.toNanos();
        for (Script script : Script.values()) {
            String text = text(script);
            texts.put(script, text);
            shas.put(script, sha1(text));
        }
    }

    /**
     * Runs a script: one EVALSHA, or on NOSCRIPT one EVAL with the script's text; or, for a script
     * sent {@link Script.Sending#WITH_TEXT}, one EVAL.
     *
     * @param <T> the reply type, as the script's {@link Script#output} decodes it
     * @param script the script
     * @param keys its keys, as many as its header declares
     * @param args its arguments, as many as its header declares
     * @return the reply; completes exceptionally with the client's exception on failure
     * @throws IllegalArgumentException if the number of keys or arguments is wrong (a bug)
     */
    public <T> CompletionStage<T> run(Script script, String[] keys, String... args) {
        script.checkArity(keys.length, args.length);
        return send(script, keys, args, System.nanoTime() + retryNanos, true);
    }

    /**
     * Runs a batched script as {@link #run} does, except that a call refused with {@code TRYAGAIN}
     * fails at once instead of being sent again. {@code TRYAGAIN} refuses a call whose keys a slot
     * migration has split, some on the slot's old master and some on its new one, for as long as
     * the migration stays half done. A batch of several items can be split so where each item
     * alone is served, and the caller then sends the items one by one ({@link #tryAgain} tells the
     * failure).
     *
     * @param <T> the reply type, as the script's {@link Script#output} decodes it
     * @param script the script
     * @param keys its keys, as many as its header declares
     * @param args its arguments, as many as its header declares
     * @return the reply; completes exceptionally with the client's exception on failure
     * @throws IllegalArgumentException if the number of keys or arguments is wrong (a bug)
     */
    public <T> CompletionStage<T> runBatch(Script script, String[] keys, String... args) {
        script.checkArity(keys.length, args.length);
        return send(script, keys, args, System.nanoTime() + retryNanos, false);
    }

    /**
     * Tells whether a call failed because a cluster refused it with {@code TRYAGAIN}: it did not
     * run.
     *
     * @param failure how the call's stage completed, possibly wrapped in a
     *     {@link CompletionException}
     * @return true for {@code TRYAGAIN}
     */
    public static boolean tryAgain(Throwable failure) {
        Throwable cause = unwrap(failure);
        return cause instanceof RedisCommandExecutionException && cause.getMessage() != null
                && cause.getMessage().startsWith("TRYAGAIN");
    }

    private <T> CompletionStage<T> send(Script script, String[] keys, String[] args, long retryUntil,
            boolean retryTryAgain) {
        recorder.scriptCalled(script);
        if (script.sending == Script.Sending.WITH_TEXT) {
            CompletionStage<T> byText = redis.eval(texts.get(script), script.output, keys, args);
            return byText.handle((reply, failure) -> failure == null
                    ? CompletableFuture.completedFuture(reply)
                    : this.<T>retryIfRefused(unwrap(failure), script, keys, args, retryUntil, retryTryAgain))
                    .thenCompose(stage -> stage);
        }
        CompletionStage<T> bySha = redis.evalsha(shas.get(script), script.output, keys, args);
        return bySha.handle((reply, failure) -> {
            if (failure == null) {
                return CompletableFuture.completedFuture(reply);
            }
            Throwable cause = unwrap(failure);
            if (cause instanceof RedisNoScriptException) {
                recorder.noScript(script);
                if (tooLateToSendAgain(retryUntil)) {
                    return CompletableFuture.<T>failedFuture(answeredTooLate(script, cause));
                }
                CompletionStage<T> byText = redis.eval(texts.get(script), script.output, keys, args);
                return byText.handle((again, evalFailure) -> evalFailure == null
                        ? CompletableFuture.completedFuture(again)
                        : this.<T>retryIfRefused(unwrap(evalFailure), script, keys, args, retryUntil, retryTryAgain))
                        .thenCompose(stage -> stage);
            }
            return this.<T>retryIfRefused(cause, script, keys, args, retryUntil, retryTryAgain);
        }).thenCompose(stage -> stage);
    }

    /**
     * Whether a NOSCRIPT answer came too late to send the call again: its caller, who waits a
     * command timeout from after the call was first sent, may have given up and sent the call's
     * follow-up, which the EVAL must not overtake. Checked where the answer is handled, on the
     * connection's I/O thread, before anything the caller sends after giving up can be written.
     */
    private boolean tooLateToSendAgain(long sentPlusTimeout) {
        return retryNanos > 0 && sentPlusTimeout - System.nanoTime() <= 0;
    }

    private static RedisCommandTimeoutException answeredTooLate(Script script, Throwable noScript) {
        RedisCommandTimeoutException e = new RedisCommandTimeoutException(script.file
                + ": NOSCRIPT arrived after the command timeout; the call did not run and is not sent again");
        e.addSuppressed(noScript);
        return e;
    }

    /** Sends again, after a pause, a call a cluster refused for now; fails with {@code cause} otherwise. */
    private <T> CompletionStage<T> retryIfRefused(Throwable cause, Script script, String[] keys, String[] args,
            long retryUntil, boolean retryTryAgain) {
        if (refusedForNow(cause) && (retryTryAgain || !tryAgain(cause))
                && retryUntil - System.nanoTime() > TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS)) {
            // Checked again when the pause is over: past the window, the caller may have sent the
            // call's follow-up, which this call must not overtake.
            return CompletableFuture.supplyAsync(() -> null,
                            CompletableFuture.delayedExecutor(RETRY_MILLIS, TimeUnit.MILLISECONDS))
                    .thenCompose(ignored -> retryUntil - System.nanoTime() > 0
                            ? this.<T>send(script, keys, args, retryUntil, retryTryAgain)
                            : CompletableFuture.<T>failedFuture(cause));
        }
        return CompletableFuture.failedFuture(cause);
    }

    /**
     * Runs a script as {@link #run} does, followed on the same connection by {@code followUp}
     * (a {@code WAIT}), sent before the script's reply is awaited, so that both take one round
     * trip. If the script meets NOSCRIPT, the follow-up is sent again after the EVAL that runs it
     * instead, so that it always follows the write it is meant to follow (unless the NOSCRIPT answer
     * came after the command timeout: then neither is sent again, as for {@link #run}).
     *
     * @param <T> the script's reply type
     * @param followUp sends the follow-up command
     * @return the script's reply and the follow-up's
     */
    public <T> CompletionStage<Followed<T>> runFollowedBy(Script script, String[] keys, String[] args,
            Supplier<CompletionStage<Long>> followUp) {
        script.checkArity(keys.length, args.length);
        return sendFollowedBy(script, keys, args, followUp, System.nanoTime() + retryNanos);
    }

    private <T> CompletionStage<Followed<T>> sendFollowedBy(Script script, String[] keys, String[] args,
            Supplier<CompletionStage<Long>> followUp, long retryUntil) {
        recorder.scriptCalled(script);
        boolean withText = script.sending == Script.Sending.WITH_TEXT;
        CompletionStage<T> first = withText
                ? redis.eval(texts.get(script), script.output, keys, args)
                : redis.evalsha(shas.get(script), script.output, keys, args);
        CompletionStage<Long> firstFollowUp = followUp.get();
        return first.handle((reply, failure) -> {
            if (failure == null) {
                return firstFollowUp.thenApply(acked -> new Followed<>(reply, acked));
            }
            Throwable cause = unwrap(failure);
            if (!withText && cause instanceof RedisNoScriptException) {
                recorder.noScript(script);
                if (tooLateToSendAgain(retryUntil)) {
                    return CompletableFuture.<Followed<T>>failedFuture(answeredTooLate(script, cause));
                }
                CompletionStage<T> byText = redis.eval(texts.get(script), script.output, keys, args);
                CompletionStage<Long> again = followUp.get();
                return byText.thenCombine(again, Followed::new);
            }
            if (refusedForNow(cause) && retryUntil - System.nanoTime() > TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS)) {
                return CompletableFuture.supplyAsync(() -> null,
                                CompletableFuture.delayedExecutor(RETRY_MILLIS, TimeUnit.MILLISECONDS))
                        .thenCompose(ignored -> retryUntil - System.nanoTime() > 0
                                ? this.<T>sendFollowedBy(script, keys, args, followUp, retryUntil)
                                : CompletableFuture.<Followed<T>>failedFuture(cause));
            }
            return CompletableFuture.<Followed<T>>failedFuture(cause);
        }).thenCompose(stage -> stage);
    }

    /**
     * A script's reply and the reply of the command that followed it.
     *
     * @param <T> the script's reply type
     * @param reply the script's reply
     * @param followUp the follow-up's reply, e.g. how many replicas acknowledged
     */
    public record Followed<T>(T reply, long followUp) {
    }

    /**
     * TRYAGAIN and CLUSTERDOWN: the call did not run, and may once the cluster settles. A call the
     * client refused because its connection is down is not sent again here: the follow-ups that
     * settle unknown outcomes rely on the commands of one connection running in the order they
     * were sent, and a call sent again later could overtake a newer one (a retried hand-over after
     * its waiter's own try); such a call fails at once, and its caller's follow-up settles it.
     */
    static boolean refusedForNow(Throwable cause) {
        String message = cause.getMessage();
        return cause instanceof RedisCommandExecutionException && message != null
                && (message.startsWith("TRYAGAIN") || message.startsWith("CLUSTERDOWN"));
    }


    /**
     * Returns the SHA1 under which the server caches a script, as 40 lower-case hex digits.
     *
     * @param script the script
     * @return its SHA1
     */
    public String sha(Script script) {
        return shas.get(script);
    }

    /**
     * Reads a script's text from the classpath.
     *
     * @param script the script
     * @return its text
     * @throws UncheckedIOException if it cannot be read
     */
    public static String text(Script script) {
        String path = Script.RESOURCE_FOLDER + script.file;
        try (InputStream in = ScriptRegistry.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new UncheckedIOException(new IOException("script not on the classpath: " + path));
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script " + path, e);
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause()
                : failure;
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-1", e);
        }
    }
}
