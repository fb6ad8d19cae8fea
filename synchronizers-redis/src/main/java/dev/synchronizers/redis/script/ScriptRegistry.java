package dev.synchronizers.redis.script;

import dev.synchronizers.redis.metrics.Recorder;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Runs the scripts of {@link Script} by SHA1. The text of every script is read from the classpath
 * and hashed once, when the registry is created, with no network call.
 *
 * <p>Scripts run with EVALSHA. When the server answers NOSCRIPT (after {@code SCRIPT FLUSH}, a
 * restart or a failover to a server that never saw the script), the same call is sent again with
 * the script's text (EVAL), which also caches it on that server. The fallback repeats for every
 * call that meets NOSCRIPT, so no flush, however often it happens, reaches the caller.
 *
 * <p>Thread-safe; one registry per connection.
 */
public final class ScriptRegistry {

    private final RedisAsyncCommands<String, String> redis;
    private final Recorder recorder;
    private final Map<Script, String> texts = new EnumMap<>(Script.class);
    private final Map<Script, String> shas = new EnumMap<>(Script.class);

    /**
     * Reads and hashes every script.
     *
     * @param redis the connection's async commands, shared by all callers
     * @throws UncheckedIOException if a script is missing from the classpath
     */
    public ScriptRegistry(RedisAsyncCommands<String, String> redis) {
        this(redis, Recorder.NONE);
    }

    /**
     * Reads and hashes every script, and reports every call and NOSCRIPT fall-back to {@code recorder}.
     *
     * @param redis the connection's async commands, shared by all callers
     * @param recorder where calls are counted
     * @throws UncheckedIOException if a script is missing from the classpath
     */
    public ScriptRegistry(RedisAsyncCommands<String, String> redis, Recorder recorder) {
        this.redis = redis;
        this.recorder = recorder;
        for (Script script : Script.values()) {
            String text = text(script);
            texts.put(script, text);
            shas.put(script, sha1(text));
        }
    }

    /**
     * Runs a script: one EVALSHA, or on NOSCRIPT one EVAL with the script's text.
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
        recorder.scriptCalled(script);
        CompletionStage<T> bySha = redis.evalsha(shas.get(script), script.output, keys, args);
        return bySha.handle((reply, failure) -> {
            if (failure == null) {
                return CompletableFuture.completedFuture(reply);
            }
            if (unwrap(failure) instanceof RedisNoScriptException) {
                recorder.noScript(script);
                CompletionStage<T> byText = redis.eval(texts.get(script), script.output, keys, args);
                return byText;
            }
            return CompletableFuture.<T>failedFuture(unwrap(failure));
        }).thenCompose(stage -> stage);
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
