package dev.synchronizers.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that gives a test class Redis servers and stops them after the class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisExtension redis = new RedisExtension();
 *
 * @Test
 * void something(RedisServer server) { ... }   // the shared server, also redis.server()
 * }</pre>
 *
 * or {@code @ExtendWith(RedisExtension.class)} with {@link RedisServer} parameters.
 *
 * <p>The shared server comes from {@link RedisServers#start()} in {@code beforeAll} (or on the
 * first call to {@link #server()}, whichever is earlier), so it may be the unmanaged server
 * named by {@code REDIS_URL}. Tests that kill, pause or restart a server take their own from
 * {@link #startManaged()}. Every server this extension started is closed in the {@code afterAll}
 * of the class that started the shared one; a {@code @Nested} class shares its enclosing class's
 * servers. The extension should be registered on a static field so that one instance serves the
 * whole class.
 */
public final class RedisExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentLinkedQueue<RedisServer> extra = new ConcurrentLinkedQueue<>();
    private RedisServer shared;   // guarded by lock
    private String owner;         // guarded by lock: unique id of the context that starts and stops

    /** Creates an extension with no server yet. */
    public RedisExtension() {
    }

    /** Starts the shared server if none runs yet, and remembers this class as the one to stop it. */
    @Override
    public void beforeAll(ExtensionContext context) {
        lock.lock();
        try {
            if (owner == null) {
                owner = context.getUniqueId();
            }
        } finally {
            lock.unlock();
        }
        server();
    }

    /**
     * Closes every server this extension started, if {@code context} is the class that started
     * them (a nested class's {@code afterAll} leaves them running). Failures to close are
     * reported together, after all were tried.
     */
    @Override
    public void afterAll(ExtensionContext context) {
        List<RedisServer> toClose = new ArrayList<>();
        lock.lock();
        try {
            if (owner != null && !owner.equals(context.getUniqueId())) {
                return;
            }
            owner = null;
            if (shared != null) {
                toClose.add(shared);
                shared = null;
            }
        } finally {
            lock.unlock();
        }
        for (RedisServer server; (server = extra.poll()) != null; ) {
            toClose.add(server);
        }
        RuntimeException failure = null;
        for (RedisServer server : toClose) {
            try {
                server.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Returns the shared server of this test class, starting it with {@link RedisServers#start()}
     * if needed.
     *
     * @throws IllegalStateException if no server can be started
     */
    public RedisServer server() {
        lock.lock();
        try {
            if (shared == null) {
                shared = RedisServers.start();
            }
            return shared;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Starts another, independent managed server ({@link RedisServers#startManaged()}) that this
     * extension closes after the class. Each call starts a new one.
     *
     * @throws IllegalStateException if no server can be started
     */
    public RedisServer startManaged() {
        RedisServer server = RedisServers.startManaged();
        extra.add(server);
        return server;
    }

    /** Returns true for parameters of type {@link RedisServer}. */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == RedisServer.class;
    }

    /** Returns the shared server ({@link #server()}). */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return server();
    }
}
