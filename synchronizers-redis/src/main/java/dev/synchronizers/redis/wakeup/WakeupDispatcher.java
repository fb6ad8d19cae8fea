package dev.synchronizers.redis.wakeup;

import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.support.Replies;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;
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

    /** The channels' waiters, and the delivery of wake-ups to them. */
    private final WaitersByChannel waiters;
    /** Subscribing and unsubscribing the channels, their sweep, and the health check. */
    private final ChannelSubscriptions subscriptions;
    private final Duration timeout;
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
        this.timeout = timeout;
        this.waiters = new WaitersByChannel(ownerPrefix);
        this.subscriptions = new ChannelSubscriptions(transport, timeout, waiters, this);
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
                waiters.resubscribed(channel);
            }

            @Override
            public void interrupted(Collection<String> affected) {
                waiters.notLive(affected);
            }

            @Override
            public void reconnected() {
                wakeAll();
                subscriptions.reconnected();
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
        CompletableFuture<Void> confirmed = subscriptions.subscribeStanding(channel);
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
        ChannelSubscriptions.Joined joined = subscriptions.join(channel, subscription);
        WaitersByChannel.Channel state = joined.state();
        subscriptions.awaitSubscribed(channel, state, joined.confirmed(), subscription::close);
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
     * Returns the number of channels with local waiters, for leak checks; lingering channels
     * without waiters do not count.
     *
     * @return how many channels have waiters
     */
    public int subscribedChannels() {
        return waiters.withWaiters();
    }

    /**
     * Unsubscribes the channels that had no waiter at this sweep and at the one before: called
     * periodically (every watchdog tick), so an idle channel lingers for one to two periods.
     */
    public void sweep() {
        subscriptions.sweep();
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
        subscriptions.checkHealth();
    }

    /** Wakes every waiter of every channel; used after a reconnect, when the connection stops answering, and on close. */
    public void wakeAll() {
        waiters.wakeAll();
    }

    /**
     * Wakes the waiters of a channel in this client as a message would.
     *
     * @param channel the channel
     * @param message {@link WakeupMessage#RELEASED}, the owner string of the one waiter to wake, or
     *     {@link #GRANTED} followed by the owner string of the one waiter served
     */
    public void wake(String channel, String message) {
        waiters.wake(channel, message);
    }

    /** Wakes every waiter so that it notices the client closing; the connection is closed by its owner. */
    @Override
    public void close() {
        subscriptions.close();
        waiters.wakeAll();
    }

    /**
     * A thread's subscription to one channel; {@link #close()} ends it. Only the subscribing
     * thread calls {@link #reset()}, {@link #await(long)} and {@link #close()}; anyone may
     * {@link #wake()} it.
     */
    public final class Subscription implements AutoCloseable, WaitersByChannel.Waiter {

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
         * Returns the owner string this waiter subscribed as.
         *
         * @return the waiter's owner string
         */
        @Override
        public String owner() {
            return owner;
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
        @Override
        public void grant(String detail) {
            grant = detail;
            wake();
        }

        /** Forgets a grant the waiter could not use, so that it waits for the next one. */
        public void forgetGrant() {
            grant = null;
        }

        /** Wakes the subscribed thread, now or at its next {@link #await(long)}. */
        @Override
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
                subscriptions.leave(channel, this);
            }
        }
    }
}
