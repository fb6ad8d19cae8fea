package dev.synchronizers.redis.wakeup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The dispatcher over a real Pub/Sub connection, with a fault proxy in front of the server. */
@Tag("redis")
class WakeupDispatcherTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened = new Opened();

    @AfterEach
    void close() throws Exception {
        opened.closeAll();
    }

    /**
     * After a reconnect, once Redis confirms the re-subscription, a channel is live again: a
     * message published after it reaches the waiter, and a waiter whose first try was sent after
     * it may trust that no wake-up since was missed.
     */
    @Test
    void reconnect_afterResubscribeConfirmed_channelIsLiveAgain() throws Exception {
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        RedisClient client = RedisClient.create();
        opened.add(client::shutdown);
        StatefulRedisPubSubConnection<String, String> pubSub =
                opened.add(client.connectPubSub(StringCodec.UTF8, RedisURI.create(proxy.uri())));
        WakeupDispatcher dispatcher = new WakeupDispatcher(pubSub, Duration.ofSeconds(5), "c:");
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        try (WakeupDispatcher.Subscription first = dispatcher.subscribe("ch", "c:1")) {
            proxy.cutAll();
            // Published until one arrives: only a message sent after the re-subscription can.
            Await.until("a grant published after the reconnect arrives", () -> {
                admin.publish("ch", WakeupMessage.GRANTED_PREFIX + "c:1=after");
                return first.granted() != null;
            });
            assertEquals("after", first.granted());
            long firstTrySent = System.nanoTime();
            try (WakeupDispatcher.Subscription second = dispatcher.subscribe("ch", "c:2", firstTrySent)) {
                assertTrue(second.liveSinceFirstTry(), "the channel counts as live again after the reconnect");
            }
        }
    }
}
