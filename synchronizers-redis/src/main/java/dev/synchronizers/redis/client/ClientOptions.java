package dev.synchronizers.redis.client;

import dev.synchronizers.LostHoldListener;
import dev.synchronizers.redis.metrics.MicrometerRecorder;
import dev.synchronizers.redis.metrics.Recorder;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * The settings both entry points share ({@code RedisSynchronizers.Builder} and
 * {@code Redlock.Builder}): key prefix, lease, command timeout, lost-hold listeners and meters, with
 * their defaults and their checks, so that the same bad value gets the same exception and message
 * from either builder. Each builder owns one and its shared setters delegate to it; the builders'
 * javadoc states the contract each setting has for its client.
 *
 * <p>Each setter checks its argument first and throws before anything changes. {@link #checkMeters()}
 * holds the check between settings that {@code build()} makes. The rest is what both entry points
 * make of the settings when they build: their URIs with the command timeout, the {@link Recorder}
 * and the {@link LostHoldListeners}.
 *
 * <p>Not thread-safe, as the builders are not.
 */
public final class ClientOptions {

    /** The shortest lease a client may use: a tick is a third of it. */
    static final long MIN_LEASE_MILLIS = 30;

    private String keyPrefix = "sync";
    private Duration lease = Duration.ofSeconds(30);
    private Duration commandTimeout = Duration.ofSeconds(5);
    /** In the order added; an executor of null stands for the entry point's default executor. */
    private final List<LostHoldListeners.Registration> listeners = new ArrayList<>();
    /** A MeterRegistry, typed Object so that this class never makes the JVM load Micrometer. */
    private Object meterRegistry;
    private Function<String, String> meterNameTag;
    /** Where async stages complete; null for the client's own small pool. */
    private Executor asyncExecutor;
    /** The Lettuce resources of the clients the entry point creates; null for resources of their own. */
    private ClientResources clientResources;

    /** Options with the defaults: key prefix {@code "sync"}, lease 30 s, command timeout 5 s, no listeners, no meters. */
    public ClientOptions() {
    }

    /** An independent copy: settings made on either afterwards do not reach the other. */
    public ClientOptions copy() {
        ClientOptions copy = new ClientOptions();
        copy.keyPrefix = keyPrefix;
        copy.lease = lease;
        copy.commandTimeout = commandTimeout;
        copy.listeners.addAll(listeners);
        copy.meterRegistry = meterRegistry;
        copy.meterNameTag = meterNameTag;
        copy.asyncExecutor = asyncExecutor;
        copy.clientResources = clientResources;
        return copy;
    }

    /* --------------- settings --------------- */

    /**
     * Sets the Lettuce resources (event loops, timers) of the clients the entry point creates.
     *
     * @throws NullPointerException if {@code resources} is null
     */
    public void clientResources(ClientResources resources) {
        this.clientResources = Objects.requireNonNull(resources, "clientResources must not be null");
    }

    /** The Lettuce resources of the clients the entry point creates, or null for resources of their own. */
    public ClientResources clientResources() {
        return clientResources;
    }

    /**
     * Sets where async stages complete ({@code releaseAsync()} and the like).
     *
     * @throws NullPointerException if {@code executor} is null
     */
    public void asyncExecutor(Executor executor) {
        this.asyncExecutor = Objects.requireNonNull(executor, "asyncExecutor must not be null");
    }

    /** Where async stages complete, or null for the client's own small pool. */
    public Executor asyncExecutor() {
        return asyncExecutor;
    }

    /**
     * Sets the prefix of every key and channel.
     *
     * @throws NullPointerException if {@code keyPrefix} is null
     * @throws IllegalArgumentException if it is empty or contains '{' or '}'
     */
    public void keyPrefix(String keyPrefix) {
        Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
        if (keyPrefix.isEmpty() || keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("keyPrefix must be non-empty and free of '{' and '}': \"" + keyPrefix + "\"");
        }
        this.keyPrefix = keyPrefix;
    }

    /**
     * Sets the lease of holds taken without a lease time.
     *
     * @throws NullPointerException if {@code lease} is null
     * @throws IllegalArgumentException if it is shorter than {@value #MIN_LEASE_MILLIS} ms
     */
    public void lease(Duration lease) {
        Objects.requireNonNull(lease, "lease must not be null");
        if (lease.toMillis() < MIN_LEASE_MILLIS) {
            throw new IllegalArgumentException("lease must be at least " + MIN_LEASE_MILLIS + " ms: " + lease.toMillis() + " ms");
        }
        this.lease = lease;
    }

    /**
     * Sets how long any single call waits for Redis, and each connection at start-up.
     *
     * @throws NullPointerException if {@code commandTimeout} is null
     * @throws IllegalArgumentException if it is not positive
     */
    public void commandTimeout(Duration commandTimeout) {
        Objects.requireNonNull(commandTimeout, "commandTimeout must not be null");
        if (commandTimeout.isNegative() || commandTimeout.isZero()) {
            throw new IllegalArgumentException("commandTimeout must be > 0: " + commandTimeout);
        }
        this.commandTimeout = commandTimeout;
    }

    /**
     * Adds a lost-hold listener that runs on the entry point's default executor, the one it passes
     * to {@link #lostHoldListeners}.
     *
     * @throws NullPointerException if {@code listener} is null
     */
    public void lostHoldListener(LostHoldListener listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        listeners.add(new LostHoldListeners.Registration(listener, null));
    }

    /**
     * Adds a lost-hold listener that runs on {@code executor}.
     *
     * @throws NullPointerException if either is null
     */
    public void lostHoldListener(LostHoldListener listener, Executor executor) {
        Objects.requireNonNull(listener, "listener must not be null");
        Objects.requireNonNull(executor, "executor must not be null");
        listeners.add(new LostHoldListeners.Registration(listener, executor));
    }

    /**
     * Sets where the client records its metrics.
     *
     * @throws NullPointerException if {@code registry} is null
     */
    public void meterRegistry(MeterRegistry registry) {
        this.meterRegistry = Objects.requireNonNull(registry, "registry must not be null");
    }

    /**
     * Sets the function that maps a synchronizer's name to its meters' {@code name} tag.
     *
     * @throws NullPointerException if {@code nameTag} is null
     */
    public void meterNameTag(Function<String, String> nameTag) {
        this.meterNameTag = Objects.requireNonNull(nameTag, "nameTag must not be null");
    }

    /**
     * Checks the settings that depend on each other; {@code build()} calls it before it connects.
     *
     * @throws IllegalStateException if a {@link #meterNameTag} is set without a {@link #meterRegistry}
     */
    public void checkMeters() {
        if (meterNameTag != null && meterRegistry == null) {
            throw new IllegalStateException("meterNameTag is set but meterRegistry is not: call meterRegistry(...)");
        }
    }

    /* --------------- what a client is built from --------------- */

    public String keyPrefix() {
        return keyPrefix;
    }

    public Duration lease() {
        return lease;
    }

    public Duration commandTimeout() {
        return commandTimeout;
    }

    /**
     * Parses {@code uri} into a fresh {@link RedisURI} whose timeout is the command timeout: one
     * per client, since a {@code RedisURI} is mutable and Lettuce's builder cannot copy a Sentinel
     * one.
     *
     * @throws IllegalArgumentException if {@code uri} is not a valid Redis URI
     */
    /** The schemes of a server, for messages. */
    public static final String SERVER_SCHEMES = "redis://host:port or rediss://host:port (TLS)";
    /** The schemes of {@code RedisSynchronizers.Builder.uri}, for messages. */
    public static final String CLIENT_SCHEMES = SERVER_SCHEMES + ", or redis-sentinel://host:port[,host:port]#master"
            + " (rediss-sentinel:// with TLS)";

    /**
     * Parses the URI given to {@code setting}, or throws an {@link IllegalArgumentException} that
     * names the setting, the URI (with any credentials left out) and the schemes accepted: a URI
     * without a scheme ({@code "127.0.0.1:6379"}) or with one Lettuce does not know.
     *
     * @param accepted the schemes accepted there, for the message, e.g. {@link #SERVER_SCHEMES}
     */
    public static RedisURI parseChecked(String setting, String uri, String accepted) {
        int scheme = uri.indexOf("://");
        RuntimeException failure = null;
        if (scheme > 0) {
            try {
                return RedisURI.create(uri);
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        String shown = uri.contains("@") ? uri.substring(0, Math.max(0, scheme) + (scheme > 0 ? 3 : 0)) + "<credentials>"
                + uri.substring(uri.lastIndexOf('@')) : uri;
        throw new IllegalArgumentException(setting + ": \"" + shown + "\" is not a Redis URI the client accepts; use "
                + accepted + (failure == null ? "" : " (" + failure.getMessage() + ")"), failure);
    }

    public RedisURI parseUri(String uri) {
        RedisURI parsed = RedisURI.create(uri);
        parsed.setTimeout(commandTimeout);
        return parsed;
    }

    /**
     * Returns where the client with id {@code clientId} reports what it does: {@link Recorder#NONE}
     * without a meter registry, else a {@link MicrometerRecorder} on it, with the meters of a
     * {@code Redlock}'s kind if {@code quorum}, else of a {@code RedisSynchronizers}' kinds.
     * Micrometer is touched only here, and only when the user passed a registry.
     */
    public Recorder recorder(String clientId, boolean quorum) {
        return meterRegistry == null ? Recorder.NONE : new MicrometerRecorder(meterRegistry, meterNameTag, clientId,
                quorum ? MicrometerRecorder.REDLOCK_KINDS : MicrometerRecorder.CLIENT_KINDS);
    }

    /**
     * Returns the client's lost-hold listeners, in the order added, each listener added without an
     * executor running on {@code defaultExecutor}.
     *
     * @param defaultExecutor the entry point's default, named in its builder's javadoc
     * @param metrics where lost holds are counted
     */
    public LostHoldListeners lostHoldListeners(Executor defaultExecutor, Recorder metrics) {
        List<LostHoldListeners.Registration> registrations = new ArrayList<>();
        for (LostHoldListeners.Registration registration : listeners) {
            registrations.add(registration.executor() != null
                    ? registration
                    : new LostHoldListeners.Registration(registration.listener(), defaultExecutor));
        }
        return new LostHoldListeners(registrations, metrics);
    }
}
