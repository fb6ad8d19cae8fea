package dev.synchronizers.redis.wakeup;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code WakeupDispatcher}'s waiters, by the channel they wait on, with what each channel
 * remembers of its subscription and of the wake-ups that arrived on it; and the delivery of a
 * wake-up to them. A channel is in the registry exactly while it has waiters, or lingers idle
 * ({@code ChannelSubscriptions} adds and removes channels). Thread-safe; wake-ups are delivered on
 * the client's I/O thread, which only unparks threads.
 */
final class WaitersByChannel {

    /** A thread waiting on a channel: the dispatcher's subscription. */
    interface Waiter {

        /** Returns the waiter's owner string, which a message may name to wake it alone. */
        String owner();

        /** Wakes the waiter, now or at its next wait. */
        void wake();

        /** Marks the waiter as granted, with what the grant message said after the owner, and wakes it. */
        void grant(String detail);
    }

    /** One channel: its local waiters and the state of its subscription. */
    static final class Channel {
        final Set<Waiter> waiters = ConcurrentHashMap.newKeySet();
        CompletableFuture<Void> confirmed;
        /** Found without waiters by the last sweep; guarded by the membership lock. */
        boolean idle;
        /** When the subscription was confirmed; Long.MAX_VALUE while it is not, or after a disconnect. */
        volatile long liveSinceNanos = Long.MAX_VALUE;
        /** Disconnected since the last confirmation: the client's re-subscription will make it live. */
        volatile boolean resubscribing;
        /** When the last wake-up for everyone arrived. */
        volatile long everyoneNanos = Long.MIN_VALUE;
        /** This client's owners named by a wake-up, with its arrival: recorded before delivery. */
        final Map<String, Long> unclaimed = new ConcurrentHashMap<>();
        /** When the last sweep ran; guarded by the membership lock. */
        long sweptNanos = System.nanoTime();
    }

    /** Owner strings of this client start with it: only their named wake-ups are remembered. */
    private final String ownerPrefix;
    /** channel -> its local waiters; a channel is in the map exactly while it has waiters. */
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();

    /** @param ownerPrefix the prefix of this client's owner strings */
    WaitersByChannel(String ownerPrefix) {
        this.ownerPrefix = ownerPrefix;
    }

    /** Returns the channel's state, or null if it has none. */
    Channel get(String channel) {
        return channels.get(channel);
    }

    /** Returns the channel's state, made if it has none. */
    Channel getOrAdd(String channel) {
        return channels.computeIfAbsent(channel, c -> new Channel());
    }

    void remove(String channel) {
        channels.remove(channel);
    }

    boolean contains(String channel) {
        return channels.containsKey(channel);
    }

    /** Every channel with its state; removing through it removes the channel. */
    Set<Map.Entry<String, Channel>> entries() {
        return channels.entrySet();
    }

    /** Returns the number of channels with local waiters; lingering channels without waiters do not count. */
    int withWaiters() {
        return (int) channels.values().stream().filter(state -> !state.waiters.isEmpty()).count();
    }

    /** Messages on these channels (null: all) are lost from now until each one's re-subscription is confirmed. */
    void notLive(Collection<String> affected) {
        if (affected == null) {
            for (Channel state : channels.values()) {
                state.liveSinceNanos = Long.MAX_VALUE;
                state.resubscribing = true;
            }
            return;
        }
        for (String channel : affected) {
            Channel state = channels.get(channel);
            if (state != null) {
                state.liveSinceNanos = Long.MAX_VALUE;
                state.resubscribing = true;
            }
        }
    }

    /**
     * Redis confirmed a subscription. If it is the client's own re-subscription after a reconnect,
     * the channel is live from now on, and its waiters are woken: a try they made before now may
     * have missed a release.
     */
    void resubscribed(String channel) {
        Channel state = channels.get(channel);
        if (state != null && state.resubscribing) {
            state.resubscribing = false;
            state.liveSinceNanos = System.nanoTime();
            state.waiters.forEach(Waiter::wake);
        }
    }

    /** Wakes every waiter of every channel; used after a reconnect, when the connection stops answering, and on close. */
    void wakeAll() {
        for (Channel state : channels.values()) {
            state.waiters.forEach(Waiter::wake);
        }
    }

    /**
     * Wakes the waiters of a channel in this client as a message would: every one for
     * {@link WakeupMessage#RELEASED}, else the one it names, granted if it is a grant; a wake-up
     * for this client's owners is remembered, with its arrival, before it is delivered.
     */
    void wake(String channel, String message) {
        Channel state = channels.get(channel);
        if (state == null) {
            return;
        }
        long now = System.nanoTime();
        WakeupMessage read = WakeupMessage.parse(message);
        boolean everyone = read.form() == WakeupMessage.Form.EVERYONE;
        boolean grant = read.form() == WakeupMessage.Form.GRANTED;
        String named = read.owner();
        String detail = read.detail();
        if (everyone) {
            state.everyoneNanos = now;
        } else if (named.startsWith(ownerPrefix)) {
            // A grant that came before its waiter subscribed only wakes it: its next try finds it.
            state.unclaimed.put(named, now);
        }
        for (Waiter waiter : state.waiters) {
            if (everyone) {
                waiter.wake();
            } else if (waiter.owner().equals(named)) {
                if (grant) {
                    waiter.grant(detail);
                } else {
                    waiter.wake();
                }
            }
        }
    }
}
