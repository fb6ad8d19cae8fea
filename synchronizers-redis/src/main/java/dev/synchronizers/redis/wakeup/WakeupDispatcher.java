package dev.synchronizers.redis.wakeup;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.support.Replies;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Wakes waiting threads when a message arrives on the channel they wait on.
 *
 * <p>A message ({@link WakeupMessage}) is either {@value WakeupMessage#RELEASED}, which wakes every waiter of
 * the channel in this client, or the owner string of one waiter, which wakes that waiter only: a
 * fair lock wakes its next waiter by name, not the herd. A message {@value #GRANTED}{@code <owner>}, or
 * {@value #GRANTED}{@code <owner>=<detail>}, also wakes one waiter by name, and tells it that what
 * it waited for was handed to it in Redis ({@link Subscription#granted()}), with what it needs to
 * know of it (the fair lock's new fencing token): the semaphore and the fair lock serve their line
 * that way, without the waiter asking again. A grant that arrives before its waiter subscribed
 * only wakes it, and the waiter's next try finds what was handed to it.
 *
 * <p>One {@link PubSubTransport} serves every waiter of the client: one Pub/Sub connection on a
 * standalone server, one per master on a cluster. A channel is subscribed when its
 * first local waiter arrives; when its last one leaves it lingers, still subscribed, until the
 * second {@link #sweep()} that finds it idle, so that a lock handed from waiter to waiter under
 * contention does not subscribe and unsubscribe on every handoff. {@link #subscribe} returns
 * only once Redis has confirmed the subscription, so a waiter that subscribes and then checks the
 * state in Redis cannot miss a wake-up published after that check. A wake-up sets a flag on the
 * subscription and unparks its thread, so it is remembered however the thread is busy when it
 * arrives: a bare unpark permit would be used up by any other park, such as the wait for a reply.
 *
 * <p>A waiter whose first try already registered it in Redis (a queue place, a waiting mark) may
 * skip the usual second try after subscribing, if the channel was live before that first try was
 * sent: every wake-up published after the try then reached this dispatcher. To that end a message
 * is remembered, with its arrival time, before it is delivered, so that a waiter registering just
 * after it arrived still finds it ({@link #subscribe(String, String, long)}).
 *
 * <p>After the connection is re-established (a Redis restart, a network blip, a failover) every
 * waiter of every channel is woken, because messages published while it was down are lost; the
 * client re-subscribes the channels itself, and each channel is live again, and its waiters woken
 * once more, when Redis confirms its re-subscription (a try between the reconnect and that
 * confirmation could miss a release). A connection can also die without either end noticing (a
 * NAT or firewall that forgot it: a half-open socket), silently losing every message: {@link
 * #checkHealth()}, run periodically, sends PING and, if no reply comes within the timeout, closes
 * the connection so that the client makes it again, which wakes every waiter as above. Waiters
 * must in any case bound every sleep (by the lease they were told), so a lost message costs time,
 * never liveness; the health check bounds that time by its period plus the timeout, plus the
 * time Redis takes to accept the new connection.
 *
 * <p>Thread-safe. Messages are handled on the client's I/O thread, which only unparks threads.
 */
public final class WakeupDispatcher implements AutoCloseable {

    private final PubSubTransport transport;
    private final Duration timeout;
    /** Owner strings of this client start with it: only their named wake-ups are remembered. */
    private final String ownerPrefix;
    /** channel -> its local waiters; a channel is in the map exactly while it has waiters. */
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();
    /** Orders subscribe and unsubscribe per client, so that counts and commands agree. */
    private final ReentrantLock membership = new ReentrantLock();
    /**
     * Channels whose UNSUBSCRIBE could not be sent (disconnected): the client would subscribe them
     * again on reconnect, so they are unsubscribed then, unless a waiter needs them again.
     */
    private final Set<String> unsubscribeOnReconnect = ConcurrentHashMap.newKeySet();
    /** How often a waiter whose SUBSCRIBE was refused looks whether the Pub/Sub connection is back. */
    private static final long RESUBSCRIBE_PROBE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private volatile boolean closed;
    /**
     * Standing channels ({@link #listen}): channel -> what to do with each of its messages, which
     * carry data for the client rather than wake a waiter.
     */
    private final Map<String, Listening> standing = new ConcurrentHashMap<>();

    private record Listening(Consumer<String> handler, Executor executor) {
    }

    /**
     * Starts dispatching the messages of a connection.
     *
     * @param connection the client's Pub/Sub connection, used only by this dispatcher, subscribed
     *     with {@code SUBSCRIBE}
     * @param timeout how long to wait for a subscription to be confirmed
     * @param ownerPrefix the prefix of this client's owner strings
     */
    public WakeupDispatcher(StatefulRedisPubSubConnection<String, String> connection, Duration timeout,
            String ownerPrefix) {
        this(new SingleConnectionTransport(connection, false), timeout, ownerPrefix, Recorder.NONE);
    }

    /**
     * Dispatches the messages that {@code transport} delivers, and counts every one to
     * {@code recorder}.
     *
     * @param transport the connections of the client's subscriptions, used only by this dispatcher
     * @param timeout how long to wait for a subscription to be confirmed
     * @param ownerPrefix the prefix of this client's owner strings
     * @param recorder where received wake-ups are counted
     */
    public WakeupDispatcher(PubSubTransport transport, Duration timeout, String ownerPrefix, Recorder recorder) {
        this.transport = transport;
        this.timeout = timeout;
        this.ownerPrefix = ownerPrefix;
        transport.listen(new PubSubTransport.Listener() {
            @Override
            public void message(String channel, String message) {
                recorder.wakeupReceived();
                Listening listening = standing.get(channel);
                if (listening != null) {
                    hand(listening, message);
                    return;
                }
                wake(channel, message);
            }

            @Override
            public void subscribed(String channel) {
                resubscribed(channel);
            }

            @Override
            public void interrupted(Collection<String> affected) {
                notLive(affected);
            }

            @Override
            public void reconnected() {
                wakeAll();
                for (String channel : unsubscribeOnReconnect) {
                    unsubscribeUnlessNeeded(channel);
                }
            }
        });
    }

    /**
     * Subscribes to a standing channel, whose messages go to {@code handler} on {@code executor}
     * (never on a Lettuce I/O thread) for as long as the client lives, and waits until Redis
     * confirms the subscription. The channel is carried like every other: subscribed again after a
     * reconnect, moved with its slot on a cluster; messages published while it is interrupted are
     * lost, so what it carries must have a backstop. Used by lock caching: the client's ask channel.
     *
     * @param channel the channel, used for nothing else
     * @param handler told each message's text
     * @param executor where the handler runs
     * @throws dev.synchronizers.SynchronizerUnavailableException if the subscription is not
     *     confirmed within the timeout; the channel is then not listened to
     */
    public void listen(String channel, Consumer<String> handler, Executor executor) {
        standing.put(channel, new Listening(handler, executor));
        CompletableFuture<Void> confirmed;
        membership.lock();
        try {
            confirmed = transport.subscribe(channel);
        } finally {
            membership.unlock();
        }
        try {
            Replies.await(confirmed, timeout, "subscribe to '" + channel + "'");
        } catch (RuntimeException e) {
            standing.remove(channel);
            throw e;
        }
    }

    private static void hand(Listening listening, String message) {
        try {
            listening.executor().execute(() -> listening.handler().accept(message));
        } catch (RejectedExecutionException e) {
            // Closed: nothing listens any more.
        }
    }

    /**
     * Subscribes the current thread to a channel and waits until Redis confirms the subscription.
     * The caller must close the returned subscription when it stops waiting.
     *
     * @param channel the channel to wait on
     * @param owner the waiter's owner string, which a message may name to wake it alone
     * @return the subscription; closing it unsubscribes the thread
     * @throws dev.synchronizers.SynchronizerUnavailableException if the subscription is not
     *     confirmed within the timeout; the thread is then not subscribed
     */
    public Subscription subscribe(String channel, String owner) {
        return subscribe(channel, owner, Long.MAX_VALUE);
    }

    /**
     * Subscribes as {@link #subscribe(String, String)} does, and tells the subscription whether
     * the channel was live at {@code sinceNanos}, and whether a wake-up for this waiter arrived
     * since then, before the subscription existed (it then starts woken).
     *
     * @param channel the channel to wait on
     * @param owner the waiter's owner string
     * @param sinceNanos {@link System#nanoTime()} when the waiter's first try was sent
     * @return the subscription
     */
    public Subscription subscribe(String channel, String owner, long sinceNanos) {
        Subscription subscription = new Subscription(channel, owner, Thread.currentThread());
        CompletableFuture<Void> confirmed;
        Channel state;
        membership.lock();
        try {
            state = channels.computeIfAbsent(channel, c -> new Channel());
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
            state.waiters.add(subscription);
            confirmed = state.confirmed;
        } finally {
            membership.unlock();
        }
        awaitSubscribed(channel, state, confirmed, subscription);
        // Registered first, then the records read: a wake-up either finds the subscription or was
        // recorded before this reading (wake() records before it delivers).
        subscription.liveSinceFirstTry = state.liveSinceNanos <= sinceNanos;
        Long named = state.unclaimed.get(owner);
        if (state.everyoneNanos >= sinceNanos || named != null && named >= sinceNanos) {
            subscription.wake();
        }
        return subscription;
    }

    /**
     * Waits, within the command timeout, until Redis confirms the channel's subscription. The
     * Pub/Sub connection reconnects on its own after an outage, possibly a moment after the command
     * connection: a SUBSCRIBE refused meanwhile is sent again once it is back, rather than failing
     * a waiter while Redis already answers. Only when the timeout is spent does the waiter fail.
     */
    private void awaitSubscribed(String channel, Channel state, CompletableFuture<Void> first, Subscription subscription) {
        String what = "subscribe to wake-ups on '" + channel + "'";
        long deadline = System.nanoTime() + timeout.toNanos();
        CompletableFuture<Void> confirmed = first;
        while (true) {
            try {
                Replies.await(confirmed, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), what);
                return;
            } catch (SynchronizerUnavailableException e) {
                if (closed || deadline - System.nanoTime() <= 0) {
                    subscription.close();
                    throw e;
                }
                // Refused while the Pub/Sub connection was down: wait for it (briefly, bounded by
                // the deadline), then subscribe again unless another waiter already did.
                LockSupport.parkNanos(this, RESUBSCRIBE_PROBE_NANOS);
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
                subscription.close();
                throw e;
            }
        }
    }

    /**
     * Returns the number of channels with local waiters, for leak checks; lingering channels
     * without waiters do not count.
     *
     * @return how many channels have waiters
     */
    public int subscribedChannels() {
        return (int) channels.values().stream().filter(state -> !state.waiters.isEmpty()).count();
    }

    /**
     * Unsubscribes the channels that had no waiter at this sweep and at the one before: called
     * periodically (every watchdog tick), so an idle channel lingers for one to two periods.
     */
    public void sweep() {
        membership.lock();
        try {
            for (Map.Entry<String, Channel> entry : channels.entrySet()) {
                Channel state = entry.getValue();
                // Records older than a sweep period cannot matter: a first try is followed by its
                // subscription within the command timeout, far shorter than a period.
                state.unclaimed.values().removeIf(arrived -> state.sweptNanos - arrived > 0);
                state.sweptNanos = System.nanoTime();
                if (!state.waiters.isEmpty()) {
                    continue;
                }
                if (state.idle) {
                    channels.remove(entry.getKey());
                    unsubscribeUnlessNeeded(entry.getKey());
                } else {
                    state.idle = true;
                }
            }
        } finally {
            membership.unlock();
        }
    }

    /**
     * Checks that the connections still carry messages (see {@link PubSubTransport#checkHealth}):
     * one that does not answer a PING within the timeout is closed so that the client connects
     * again; every waiter is woken once it is back, and each channel's waiters again once its
     * re-subscription is confirmed, since any message since the last reply may be lost. On a
     * cluster, channels whose slot moved to another master follow it. Called periodically (every
     * watchdog tick); also keeps traffic on connections that middleboxes would otherwise drop as
     * idle.
     */
    public void checkHealth() {
        if (!closed) {
            transport.checkHealth(timeout);
        }
    }

    /** Messages on these channels (null: all) are lost from now until each one's re-subscription is confirmed. */
    private void notLive(Collection<String> affected) {
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
    private void resubscribed(String channel) {
        Channel state = channels.get(channel);
        if (state != null && state.resubscribing) {
            state.resubscribing = false;
            state.liveSinceNanos = System.nanoTime();
            state.waiters.forEach(Subscription::wake);
        }
    }

    /** Wakes every waiter of every channel; used after a reconnect, when the connection stops answering, and on close. */
    public void wakeAll() {
        for (Channel state : channels.values()) {
            state.waiters.forEach(Subscription::wake);
        }
    }

    /**
     * Wakes the waiters of a channel in this client as a message would.
     *
     * @param channel the channel
     * @param message {@link WakeupMessage#RELEASED}, the owner string of the one waiter to wake, or
     *     {@link #GRANTED} followed by the owner string of the one waiter served
     */
    public void wake(String channel, String message) {
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
        for (Subscription waiter : state.waiters) {
            if (everyone) {
                waiter.wake();
            } else if (waiter.owner.equals(named)) {
                if (grant) {
                    waiter.grant(detail);
                } else {
                    waiter.wake();
                }
            }
        }
    }

    private void leave(String channel, Subscription waiter) {
        membership.lock();
        try {
            Channel state = channels.get(channel);
            if (state != null && state.waiters.remove(waiter) && state.waiters.isEmpty()
                    && state.confirmed.isCompletedExceptionally()) {
                // Never confirmed: nothing to linger on.
                channels.remove(channel);
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
            if (closed || channels.containsKey(channel)) {
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

    /** Wakes every waiter so that it notices the client closing; the connection is closed by its owner. */
    @Override
    public void close() {
        closed = true;
        transport.close();
        wakeAll();
    }

    /**
     * A thread's subscription to one channel; {@link #close()} ends it. Only the subscribing
     * thread calls {@link #reset()}, {@link #await(long)} and {@link #close()}; anyone may
     * {@link #wake()} it.
     */
    public final class Subscription implements AutoCloseable {

        private final String channel;
        private final String owner;
        private final Thread waiter;
        private volatile boolean woken;
        /** What a grant message said after the owner, "" if nothing; null until granted. */
        private volatile String grant;
        private boolean closed;
        private boolean liveSinceFirstTry;

        private Subscription(String channel, String owner, Thread waiter) {
            this.channel = channel;
            this.owner = owner;
            this.waiter = waiter;
        }

        /**
         * Tells whether the channel was live when the waiter's first try was sent (see
         * {@link #subscribe(String, String, long)}): every wake-up since then has reached this
         * subscription or woken it already.
         *
         * @return true if no wake-up since the first try can have been missed
         */
        public boolean liveSinceFirstTry() {
            return liveSinceFirstTry;
        }

        /** Forgets earlier wake-ups; call it before each check of the state in Redis. */
        public void reset() {
            woken = false;
        }

        /**
         * Tells whether a {@value #GRANTED} message named this waiter: what it waits for is
         * already its own in Redis. Unlike a wake-up, {@link #reset()} does not forget it.
         *
         * @return what the message said after the owner and {@code =} ("" if nothing), or null if
         *     no grant arrived (or it was {@linkplain #forgetGrant() forgotten})
         */
        public String granted() {
            return grant;
        }

        /**
         * Marks the waiter as granted and wakes it.
         *
         * @param detail what the grant message said after the owner, "" if nothing
         */
        public void grant(String detail) {
            grant = detail;
            wake();
        }

        /** Forgets a grant the waiter could not use, so that it waits for the next one. */
        public void forgetGrant() {
            grant = null;
        }

        /** Wakes the subscribed thread, now or at its next {@link #await(long)}. */
        public void wake() {
            woken = true;
            LockSupport.unpark(waiter);
        }

        /**
         * Sleeps until woken (since the last {@link #reset()}), the time is up, or the thread is
         * interrupted; the interrupt status is left set for the caller to handle.
         *
         * @param nanos the longest time to sleep
         */
        public void await(long nanos) {
            long deadline = System.nanoTime() + nanos;
            while (!woken && !waiter.isInterrupted()) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return;
                }
                LockSupport.parkNanos(this, remaining);
            }
        }

        /** Unsubscribes the thread; the channel itself is unsubscribed after its last waiter. Idempotent. */
        @Override
        public void close() {
            if (!closed) {
                closed = true;
                leave(channel, this);
            }
        }
    }

    private static final class Channel {
        final Set<Subscription> waiters = ConcurrentHashMap.newKeySet();
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
}
