package dev.synchronizers.redis.wakeup;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;

/**
 * The connections that carry a client's wake-up subscriptions, for the {@link WakeupDispatcher}:
 * one Pub/Sub connection on a standalone server ({@link SingleConnectionTransport}), one per
 * master on a cluster, each channel subscribed on the master that owns its slot
 * ({@link ClusterPubSubTransport}). Either subscribes with {@code SUBSCRIBE} or, on Redis 7 and
 * later, with {@code SSUBSCRIBE} (sharded Pub/Sub), as the scripts publish.
 *
 * <p>Thread-safe. The listener is called on the client's I/O threads and must only wake threads.
 */
public interface PubSubTransport {

    /** What the transport tells the dispatcher. */
    interface Listener {

        /**
         * A message arrived.
         *
         * @param channel the channel
         * @param message the message
         */
        void message(String channel, String message);

        /**
         * Redis confirmed a subscription to {@code channel}: one the dispatcher asked for, the
         * client's own after a reconnect, or one moved to another node.
         *
         * @param channel the channel
         */
        void subscribed(String channel);

        /**
         * From now until each one's next {@link #subscribed}, messages on these channels may be
         * lost: their connection dropped or stopped answering, or they are moving to another node.
         *
         * @param channels the channels, or null for every channel
         */
        void interrupted(Collection<String> channels);

        /** A connection is established again: whatever was published while it was down is lost. */
        void reconnected();
    }

    /**
     * Sets the one listener; called once, before any subscription.
     *
     * @param listener the dispatcher's listener
     */
    void listen(Listener listener);

    /**
     * Subscribes to a channel.
     *
     * @param channel the channel
     * @return completes when Redis confirms the subscription, exceptionally if it refuses or the
     *     connection is down
     */
    CompletableFuture<Void> subscribe(String channel);

    /**
     * Unsubscribes from a channel; not awaited by the dispatcher: a later subscription to the same
     * channel goes over the same connection, after it.
     *
     * @param channel the channel
     * @return completes when sent and answered, exceptionally if it could not be sent
     */
    CompletableFuture<Void> unsubscribe(String channel);

    /**
     * Tells whether the connection that carries {@code channel} is open, so that a refused
     * subscription is worth sending again.
     *
     * @param channel the channel
     * @return true if it is open (as far as the client knows)
     */
    boolean isOpen(String channel);

    /**
     * Checks that the connections still carry messages: a PING on each (allowed while subscribed),
     * at most one outstanding per connection. One whose reply does not come within {@code timeout}
     * has its channels {@linkplain Listener#interrupted interrupted} and is closed, so that the
     * client connects again and re-subscribes. On a cluster, also moves channels whose slot has a
     * new master to that master. Called periodically, on the watchdog thread (a Redlock's events
     * thread); must not block.
     *
     * @param timeout how long a PING may take
     */
    void checkHealth(Duration timeout);

    /** Stops using the connections; the topology closes them. */
    void close();
}
