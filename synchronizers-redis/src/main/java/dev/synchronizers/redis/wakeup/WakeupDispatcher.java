package dev.synchronizers.redis.wakeup;

import dev.synchronizers.redis.support.Replies;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Wakes waiting threads when a message arrives on the channel they wait on.
 *
 * <p>One Pub/Sub connection serves every waiter of the client. A channel is subscribed when its
 * first local waiter arrives and unsubscribed when its last one leaves; {@link #subscribe} returns
 * only once Redis has confirmed the subscription, so a waiter that subscribes and then checks the
 * state in Redis cannot miss a wake-up published after that check. A wake-up is
 * {@link LockSupport#unpark(Thread)}: it is remembered if it arrives before the waiter parks.
 *
 * <p>After the connection is re-established (a Redis restart, a network blip, a failover) every
 * waiter of every channel is woken, because messages published while it was down are lost; the
 * client re-subscribes the channels itself. Waiters must in any case bound every sleep (by the
 * lease they were told), so a lost message costs time, never liveness.
 *
 * <p>Thread-safe. Messages are handled on the client's I/O thread, which only unparks threads.
 */
public final class WakeupDispatcher implements AutoCloseable {

    private final StatefulRedisPubSubConnection<String, String> connection;
    private final Duration timeout;
    /** channel -> its local waiters; a channel is in the map exactly while it has waiters. */
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();
    /** Orders subscribe and unsubscribe per client, so that counts and commands agree. */
    private final ReentrantLock membership = new ReentrantLock();

    /**
     * Starts dispatching the messages of a connection.
     *
     * @param connection the client's Pub/Sub connection, used only by this dispatcher
     * @param timeout how long to wait for a subscription to be confirmed
     */
    public WakeupDispatcher(StatefulRedisPubSubConnection<String, String> connection, Duration timeout) {
        this.connection = connection;
        this.timeout = timeout;
        connection.addListener(new RedisPubSubAdapter<String, String>() {
            @Override
            public void message(String channel, String message) {
                wake(channel);
            }
        });
        connection.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                wakeAll();
            }
        });
    }

    /**
     * Subscribes the current thread to a channel and waits until Redis confirms the subscription.
     * The caller must close the returned subscription when it stops waiting.
     *
     * @param channel the channel to wait on
     * @return the subscription; closing it unsubscribes the thread
     * @throws dev.synchronizers.SynchronizerUnavailableException if the subscription is not
     *     confirmed within the timeout; the thread is then not subscribed
     */
    public Subscription subscribe(String channel) {
        Thread waiter = Thread.currentThread();
        CompletableFuture<Void> confirmed;
        membership.lock();
        try {
            Channel state = channels.computeIfAbsent(channel, c -> new Channel());
            if (state.waiters.isEmpty()) {
                state.confirmed = connection.async().subscribe(channel).toCompletableFuture();
            }
            state.waiters.add(waiter);
            confirmed = state.confirmed;
        } finally {
            membership.unlock();
        }
        Subscription subscription = new Subscription(channel, waiter);
        try {
            Replies.await(confirmed, timeout, "subscribe to wake-ups on '" + channel + "'");
        } catch (RuntimeException e) {
            subscription.close();
            throw e;
        }
        return subscription;
    }

    /**
     * Returns the number of channels with local waiters, for leak checks.
     *
     * @return how many channels are subscribed
     */
    public int subscribedChannels() {
        return channels.size();
    }

    /** Wakes every waiter of every channel; used after a reconnect and on close. */
    public void wakeAll() {
        for (Channel state : channels.values()) {
            state.waiters.forEach(LockSupport::unpark);
        }
    }

    private void wake(String channel) {
        Channel state = channels.get(channel);
        if (state != null) {
            state.waiters.forEach(LockSupport::unpark);
        }
    }

    private void leave(String channel, Thread waiter) {
        membership.lock();
        try {
            Channel state = channels.get(channel);
            if (state != null && state.waiters.remove(waiter) && state.waiters.isEmpty()) {
                channels.remove(channel);
                if (connection.isOpen()) {
                    // Not awaited: commands on one connection run in order, so a later subscribe
                    // to the same channel reaches Redis after this unsubscribe.
                    connection.async().unsubscribe(channel);
                }
            }
        } finally {
            membership.unlock();
        }
    }

    /** Wakes every waiter so that it notices the client closing; the connection is closed by its owner. */
    @Override
    public void close() {
        wakeAll();
    }

    /** A thread's subscription to one channel; {@link #close()} ends it. Not thread-safe. */
    public final class Subscription implements AutoCloseable {
        private final String channel;
        private final Thread waiter;
        private boolean closed;

        private Subscription(String channel, Thread waiter) {
            this.channel = channel;
            this.waiter = waiter;
        }

        /** Unsubscribes the thread; the channel itself is unsubscribed after its last waiter. Idempotent. */
        @Override
        public void close() {
            if (!closed) {
                closed = true;
                leave(channel, waiter);
            }
        }
    }

    private static final class Channel {
        final Set<Thread> waiters = ConcurrentHashMap.newKeySet();
        CompletableFuture<Void> confirmed;
    }
}
