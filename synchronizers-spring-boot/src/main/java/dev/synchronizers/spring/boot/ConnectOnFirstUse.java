package dev.synchronizers.spring.boot;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.RedisSynchronizers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Synchronizers} bean of {@code synchronizers.fail-fast=false}: tries to connect once when
 * created, and if Redis cannot be reached then, connects on the first call that needs it. Until a
 * connection succeeds every call (including {@code lock(name)}, which on a connected client makes
 * no network call) tries to connect and throws {@link SynchronizerUnavailableException} within the
 * command timeout if Redis still does not answer. Once connected, every call goes to one
 * {@link RedisSynchronizers}, and Redis going down later is handled by that client as usual.
 *
 * <p>Thread-safe: one caller connects at a time; the others wait for it up to the command timeout
 * and then throw. A caller interrupted while waiting throws {@link SynchronizerUnavailableException}
 * with its interrupt status set.
 */
final class ConnectOnFirstUse implements Synchronizers {

    private static final Logger log = LoggerFactory.getLogger(ConnectOnFirstUse.class);

    private final Supplier<RedisSynchronizers> connect;
    private final Duration timeout;
    private final String target;
    private final ReentrantLock connecting = new ReentrantLock();
    private volatile RedisSynchronizers client;
    private volatile boolean closed;

    ConnectOnFirstUse(Supplier<RedisSynchronizers> connect, Duration timeout, String target) {
        this.connect = connect;
        this.timeout = timeout;
        this.target = target;
        try {
            client();
        } catch (SynchronizerUnavailableException e) {
            log.warn("synchronizers: Redis ({}) cannot be reached at start-up; the client connects on first use: {}",
                    target, e.getMessage());
        }
    }

    /** The connected client, connecting it now if needed. */
    RedisSynchronizers client() {
        RedisSynchronizers connected = client;
        if (connected != null) {
            return connected;
        }
        try {
            if (!connecting.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new SynchronizerUnavailableException("Redis (" + target + ") is being connected to by another"
                        + " thread and did not answer within " + timeout.toMillis() + " ms", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SynchronizerUnavailableException("interrupted while waiting for the connection to Redis ("
                    + target + ")", e);
        }
        try {
            if (closed) {
                throw new IllegalStateException("this Synchronizers is closed");
            }
            if (client == null) {
                client = connect.get();
                log.info("synchronizers: connected to Redis ({})", target);
            }
            return client;
        } finally {
            connecting.unlock();
        }
    }

    /** Whether a connection was made; for tests and the health indicator's details. */
    boolean isConnected() {
        return client != null;
    }

    @Override
    public DistributedLock lock(String name) {
        return client().lock(name);
    }

    @Override
    public DistributedLock fairLock(String name) {
        return client().fairLock(name);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        return client().readWriteLock(name);
    }

    @Override
    public DistributedSemaphore semaphore(String name) {
        return client().semaphore(name);
    }

    @Override
    public DistributedCountDownLatch countDownLatch(String name) {
        return client().countDownLatch(name);
    }

    /**
     * Returns the connected client's id, connecting it first if needed.
     *
     * @throws SynchronizerUnavailableException if Redis cannot be reached yet
     */
    @Override
    public String clientId() {
        return client().clientId();
    }

    /** Closes the client if one was connected; later calls throw {@link IllegalStateException}. */
    @Override
    public void close() {
        connecting.lock();
        try {
            closed = true;
            RedisSynchronizers connected = client;
            if (connected != null) {
                connected.close();
            }
        } finally {
            connecting.unlock();
        }
    }

    @Override
    public String toString() {
        RedisSynchronizers connected = client;
        return "ConnectOnFirstUse[" + target + ", " + (connected != null ? connected : closed ? "closed" : "not connected yet")
                + "]";
    }
}
