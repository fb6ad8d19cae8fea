package dev.synchronizers.redis.wakeup;

import io.lettuce.core.pubsub.RedisPubSubAdapter;

/**
 * Passes a Pub/Sub connection's messages and subscription confirmations of one kind, classic or
 * sharded, to a transport's listener, and ignores the other kind. Shared by the transports.
 */
class TransportAdapter extends RedisPubSubAdapter<String, String> {

    private final boolean sharded;
    private final PubSubTransport.Listener listener;

    TransportAdapter(boolean sharded, PubSubTransport.Listener listener) {
        this.sharded = sharded;
        this.listener = listener;
    }

    @Override
    public void message(String channel, String message) {
        if (!sharded) {
            listener.message(channel, message);
        }
    }

    @Override
    public void smessage(String channel, String message) {
        if (sharded) {
            listener.message(channel, message);
        }
    }

    @Override
    public void subscribed(String channel, long count) {
        if (!sharded) {
            listener.subscribed(channel);
        }
    }

    @Override
    public void ssubscribed(String channel, long count) {
        if (sharded) {
            listener.subscribed(channel);
        }
    }
}
