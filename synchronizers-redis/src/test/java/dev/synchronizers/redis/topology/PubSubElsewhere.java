package dev.synchronizers.redis.topology;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

/**
 * A Lettuce client whose Pub/Sub connections go elsewhere than its command connections: commands
 * through a fault proxy and Pub/Sub straight to the server (or the other way round), so that a
 * fault hits one kind alone. {@link #shutdown()} also shuts down the client resources it made.
 */
public final class PubSubElsewhere extends RedisClient implements AutoCloseable {
    private final RedisURI pubSub;
    private final ClientResources resources;

    private PubSubElsewhere(ClientResources resources, RedisURI pubSub) {
        super(resources, pubSub);
        this.resources = resources;
        this.pubSub = pubSub;
    }

    /**
     * A client whose Pub/Sub connections go to {@code pubSub}, whatever URI they are asked for.
     *
     * @param pubSub where Pub/Sub connections go
     * @return the client, which the caller closes
     */
    public static PubSubElsewhere to(String pubSub) {
        return new PubSubElsewhere(DefaultClientResources.create(), RedisURI.create(pubSub));
    }

    @Override
    public <K, V> StatefulRedisPubSubConnection<K, V> connectPubSub(RedisCodec<K, V> codec, RedisURI uri) {
        return super.connectPubSub(codec, pubSub);
    }

    @Override
    public void close() {
        shutdown();
        resources.shutdown();
    }
}
