package dev.synchronizers.redis.wakeup;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.wakeup.WaitersByChannel.Channel;
import dev.synchronizers.redis.wakeup.WaitersByChannel.Waiter;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code WakeupDispatcher}'s subscriptions in Redis: a channel is subscribed when its first
 * local waiter joins ({@link #join}), confirmed within the timeout ({@link #awaitSubscribed}),
 * lingers after its last waiter leaves until the second {@link #sweep()} that finds it idle, and is
 * then unsubscribed, or unsubscribed on reconnect if the connection was down. Also the periodic
 * health check of the connections, and their closing. Thread-safe.
 */
final class ChannelSubscriptions {

    /** How often a waiter whose SUBSCRIBE was refused looks whether the Pub/Sub connection is back. */
    private static final long RESUBSCRIBE_PROBE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final PubSubTransport transport;
    private final Duration timeout;
    private final WaitersByChannel waiters;
    /** What a waiter parked while its SUBSCRIBE is refused is parked on, for thread dumps: the dispatcher. */
    private final Object blocker;
    /** Orders subscribe and unsubscribe per client, so that counts and commands agree. */
    private final ReentrantLock membership = new ReentrantLock();
    /**
     * Channels whose UNSUBSCRIBE could not be sent (disconnected): the client would subscribe them
     * again on reconnect, so they are unsubscribed then, unless a waiter needs them again.
     */
    private final Set<String> unsubscribeOnReconnect = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** A waiter's channel, as it joined it, and the confirmation of the channel's subscription then. */
    record Joined(Channel state, CompletableFuture<Void> confirmed) {
    }

    /**
     * @param transport the connections of the client's subscriptions
     * @param timeout how long to wait for a subscription to be confirmed, or a PING answered
     * @param waiters the registry of the channels and their waiters
     * @param blocker what a waiter parks on while its subscription is refused
     */
    ChannelSubscriptions(PubSubTransport transport, Duration timeout, WaitersByChannel waiters, Object blocker) {
        this.transport = transport;
        this.timeout = timeout;
        this.waiters = waiters;
        this.blocker = blocker;
    }

    /** Subscribes a standing channel, in order with the other subscriptions; returns its confirmation. */
    CompletableFuture<Void> subscribeStanding(String channel) {
        membership.lock();
        try {
            return transport.subscribe(channel);
        } finally {
            membership.unlock();
        }
    }

    /** Adds {@code waiter} to the channel's waiters, subscribing the channel unless a lingering subscription serves. */
    Joined join(String channel, Waiter waiter) {
        membership.lock();
        try {
            Channel state = waiters.getOrAdd(channel);
            // A lingering subscription is reused; a failed one, or one from before a reconnect, is
            // made again.
            if (state.confirmed == null || state.waiters.isEmpty()
                    && (state.confirmed.isCompletedExceptionally() || state.liveSinceNanos == Long.MAX_VALUE)) {
                Channel subscribed = state;
                state.liveSinceNanos = Long.MAX_VALUE;
                state.resubscribing = false;
                state.confirmed = transport.subscribe(channel);
                state.confirmed.thenRun(() -> subscribed.liveSinceNanos = System.nanoTime());
            }
            state.idle = false;
            state.waiters.add(waiter);
            return new Joined(state, state.confirmed);
        } finally {
            membership.unlock();
        }
    }

    /**
     * Waits, within the command timeout, until Redis confirms the channel's subscription. The
     * Pub/Sub connection reconnects on its own after an outage, possibly a moment after the command
     * connection: a SUBSCRIBE refused meanwhile is sent again once it is back, rather than failing
     * a waiter while Redis already answers. Only when the timeout is spent does the waiter fail.
     * Before it throws, {@code leave} is run: the waiter leaves the channel.
     */
    void awaitSubscribed(String channel, Channel state, CompletableFuture<Void> first, Runnable leave) {
        String what = "subscribe to wake-ups on '" + channel + "'";
        long deadline = System.nanoTime() + timeout.toNanos();
        CompletableFuture<Void> confirmed = first;
        while (true) {
            try {
                Replies.await(confirmed, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), what);
                return;
            } catch (SynchronizerUnavailableException e) {
                if (closed || deadline - System.nanoTime() <= 0) {
                    leave.run();
                    throw e;
                }
                // Refused while the Pub/Sub connection was down: wait for it (briefly, bounded by
                // the deadline), then subscribe again unless another waiter already did.
                LockSupport.parkNanos(blocker, RESUBSCRIBE_PROBE_NANOS);
                if (transport.isOpen(channel)) {
                    membership.lock();
                    try {
                        if (state.confirmed == confirmed) {
                            Channel subscribed = state;
                            state.liveSinceNanos = Long.MAX_VALUE;
                            state.confirmed = transport.subscribe(channel);
                            state.confirmed.thenRun(() -> subscribed.liveSinceNanos = System.nanoTime());
                        }
                        confirmed = state.confirmed;
                    } finally {
                        membership.unlock();
                    }
                }
            } catch (RuntimeException e) {
                leave.run();
                throw e;
            }
        }
    }

    /**
     * Unsubscribes the channels that had no waiter at this sweep and at the one before: called
     * periodically (every watchdog tick), so an idle channel lingers for one to two periods.
     */
    void sweep() {
        membership.lock();
        try {
            for (Map.Entry<String, Channel> entry : waiters.entries()) {
                Channel state = entry.getValue();
                // Records older than a sweep period cannot matter: a first try is followed by its
                // subscription within the command timeout, far shorter than a period.
                state.unclaimed.values().removeIf(arrived -> state.sweptNanos - arrived > 0);
                state.sweptNanos = System.nanoTime();
                if (!state.waiters.isEmpty()) {
                    continue;
                }
                if (state.idle) {
                    waiters.remove(entry.getKey());
                    unsubscribeUnlessNeeded(entry.getKey());
                } else {
                    state.idle = true;
                }
            }
        } finally {
            membership.unlock();
        }
    }

    /** The connection is back: unsubscribes the channels whose UNSUBSCRIBE could not be sent, unless needed again. */
    void reconnected() {
        for (String channel : unsubscribeOnReconnect) {
            unsubscribeUnlessNeeded(channel);
        }
    }

    /** Checks that the connections still carry messages; see {@link PubSubTransport#checkHealth}. */
    void checkHealth() {
        if (!closed) {
            transport.checkHealth(timeout);
        }
    }

    /** Removes {@code waiter} from the channel; a channel never confirmed is unsubscribed after its last waiter. */
    void leave(String channel, Waiter waiter) {
        membership.lock();
        try {
            Channel state = waiters.get(channel);
            if (state != null && state.waiters.remove(waiter) && state.waiters.isEmpty()
                    && state.confirmed.isCompletedExceptionally()) {
                // Never confirmed: nothing to linger on.
                waiters.remove(channel);
                unsubscribeUnlessNeeded(channel);
            }
        } finally {
            membership.unlock();
        }
    }

    private void unsubscribeUnlessNeeded(String channel) {
        membership.lock();
        try {
            unsubscribeOnReconnect.remove(channel);
            if (closed || waiters.contains(channel)) {
                return;
            }
            // Not awaited: commands on one connection run in order, so a later subscribe to the
            // same channel reaches Redis after this unsubscribe.
            transport.unsubscribe(channel).whenComplete((reply, failure) -> {
                if (failure != null) {
                    unsubscribeOnReconnect.add(channel);
                }
            });
        } finally {
            membership.unlock();
        }
    }

    /** Stops subscribing and unsubscribing, and closes the transport. */
    void close() {
        closed = true;
        transport.close();
    }
}
