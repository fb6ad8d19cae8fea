package dev.synchronizers.redis.wakeup;

import dev.synchronizers.redis.support.Disconnected;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The wake-up transport of a server that may not be connected yet (a Redlock node that was down
 * when the client started): refuses subscriptions until {@link #attach} gives it the server's own
 * transport, then passes everything to it and tells the dispatcher that a connection is
 * established, so that every waiter tries again.
 */
public final class LazyTransport implements PubSubTransport {

    private volatile Listener listener;
    private volatile PubSubTransport delegate;
    private volatile boolean closed;
    /** Orders {@link #listen} and {@link #attach}, so that the delegate gets the listener exactly once. */
    private final java.util.concurrent.locks.ReentrantLock guard = new java.util.concurrent.locks.ReentrantLock();

    @Override
    public void listen(Listener listener) {
        PubSubTransport current;
        guard.lock();
        try {
            this.listener = listener;
            current = delegate;
        } finally {
            guard.unlock();
        }
        if (current != null) {
            current.listen(listener);
        }
    }

    /**
     * Starts passing calls to {@code transport}, the server's transport once it is connected.
     *
     * @param transport the connected server's transport, used only through this one
     */
    public void attach(PubSubTransport transport) {
        Listener told;
        guard.lock();
        try {
            told = listener;
            delegate = transport;
        } finally {
            guard.unlock();
        }
        if (told != null) {
            transport.listen(told);
        }
        if (closed) {
            transport.close();
        } else if (told != null) {
            told.reconnected();
        }
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        PubSubTransport current = delegate;
        return current != null ? current.subscribe(channel) : CompletableFuture.failedFuture(Disconnected.refusal());
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        PubSubTransport current = delegate;
        return current != null ? current.unsubscribe(channel) : CompletableFuture.completedFuture(null);
    }

    @Override
    public boolean isOpen(String channel) {
        PubSubTransport current = delegate;
        return current != null && current.isOpen(channel);
    }

    @Override
    public void checkHealth(Duration timeout) {
        PubSubTransport current = delegate;
        if (current != null) {
            current.checkHealth(timeout);
        }
    }

    @Override
    public void close() {
        closed = true;
        PubSubTransport current = delegate;
        if (current != null) {
            current.close();
        }
    }
}
