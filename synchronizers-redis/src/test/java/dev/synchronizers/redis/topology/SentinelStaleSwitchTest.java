package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisSentinels;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.sentinel.api.sync.RedisSentinelCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A sentinel that lags behind announces a switch the others have gone past, and its answer to the
 * client's question about it does not come within the command timeout (a fault proxy in front of
 * that sentinel delays everything it sends): the client follows the announcement with the
 * configuration epoch unknown, onto a server that is a replica now. History: a failover from
 * {@code previous} to {@code current}; the lagging sentinel then hears the configuration before
 * it and announces the switch from {@code current} back to {@code previous}, and catches up at
 * once, so that its announcement of the way back reaches the client while the client still waits
 * for the answer. The client must find the true master again: when the replica answers
 * {@code READONLY}, and when the announcing sentinel's answer finally comes.
 */
@Tag("topology")
class SentinelStaleSwitchTest extends SentinelTestBase {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** Longer than the command timeout, so that the lagging sentinel's answer never comes in time. */
    private static final Duration LAG = Duration.ofSeconds(3);

    /**
     * The client lands on the replica: every write there is refused with {@code READONLY}, and the
     * lagging sentinel still answers nothing. The replica's {@code READONLY} has the client ask
     * the sentinels again, and it goes back to the master they name with the configuration it
     * knew: a lock can be taken again, on the master, and the hold taken before the stale
     * announcement is still the holder's.
     */
    @Test
    void staleSwitchUnanswered_clientOnAReplicaGetsReadonly_itFindsTheMasterAgain() throws Exception {
        Stale stale = new Stale();
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        RedisClient lettuce = RedisClient.create();
        opened.add(lettuce::shutdown);
        String clientName = prefix + "-client";
        RedisURI uri = stale.uri();
        uri.setClientName(clientName);
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().client(lettuce, uri)
                .commandTimeout(TIMEOUT).lostHoldListener(lost::add, Runnable::run).build());
        DistributedLock held = client.lock(prefix + name);
        held.lock();
        RedisCommands<String, String> previousCommands = opened.commands(stale.previous.uri());

        stale.announce();
        Await.until("the client follows the stale announcement to " + stale.previous,
                () -> previousCommands.clientList().contains("name=" + clientName + " "));

        DistributedLock after = client.lock(prefix + name + "-after");
        Await.until("the client takes a lock again", () -> tryLockQuietly(after));
        assertEquals(1L, opened.commands(stale.current.uri()).exists(LockKeys.of("sync", prefix + name + "-after").lock()),
                "the hold lives on the master the sentinels name");
        after.unlock();
        assertTrue(held.isHeldByCurrentThread());
        held.unlock();
        assertEquals(List.of(), List.copyOf(lost), "no hold was lost: the client came back within the lease");
    }

    /**
     * The client lands on the replica and sends it nothing; the lagging sentinel, caught up, is
     * then answered again: its answer names the master of the configuration the client knew, and
     * the client moves back there. Its switches, in order, are to the replica and back.
     */
    @Test
    void staleSwitchUnanswered_theAnnouncersLaterAnswerMovesTheClientBack() throws Exception {
        Stale stale = new Stale();
        SentinelTopology topology = opened.add(SentinelTopology.connect(null, null, stale.uri(),
                StandaloneTopology.clientOptions(TIMEOUT), TIMEOUT));
        Queue<RedisFuture<String>> switches = new ConcurrentLinkedQueue<>();
        topology.onSwitch(() -> switches.add(topology.commands().info("server")));
        assertEquals(stale.current.port(), port(topology.commands().info("server").get()));

        stale.announce();
        Await.until("the client follows the stale announcement to " + stale.previous,
                () -> ports(switches).contains(stale.previous.port()));
        stale.proxy.pass();

        Await.until("the client moves back to " + stale.current, () -> ports(switches).size() == 2);
        assertEquals(List.of(stale.previous.port(), stale.current.port()), ports(switches),
                "the servers the client switched to, in order");
    }

    /**
     * The history of a stale announcement: a failover from {@code previous} to {@code current},
     * and a fault proxy in front of the third sentinel, the one that will lag behind.
     */
    private final class Stale {
        final RedisServer peer = sentinels.sentinels().get(0);
        final RedisServer lagging = sentinels.sentinels().get(2);
        final RedisSentinelCommands<String, String> laggingCommands = sentinelCommands(lagging);
        final RedisSentinelCommands<String, String> peerCommands = sentinelCommands(peer);
        final RedisServer previous;
        final long previousEpoch;
        final RedisServer current;
        final long currentEpoch;
        final FaultProxy proxy = opened.add(FaultProxy.start(lagging.port()));

        Stale() {
            if (LaggingSentinel.configEpoch(laggingCommands) < 1) {
                sentinels.failover();   // a previous configuration must have an epoch above a forgetful sentinel's 0
            }
            previous = sentinels.master();
            previousEpoch = LaggingSentinel.configEpoch(laggingCommands);
            current = sentinels.failover();   // sent to the peer, which knows the new epoch at once
            currentEpoch = LaggingSentinel.configEpoch(peerCommands);
        }

        /** The client's URI: the peer, the second sentinel, and the lagging one through the proxy. */
        RedisURI uri() {
            RedisServer second = sentinels.sentinels().get(1);
            return RedisURI.Builder.sentinel(peer.host(), peer.port(), RedisSentinels.MASTER_NAME)
                    .withSentinel(second.host(), second.port()).withSentinel("127.0.0.1", proxy.port())
                    .withTimeout(TIMEOUT).build();
        }

        /**
         * Delays everything the lagging sentinel sends, then has it announce the switch from
         * {@code current} to {@code previous} and, at once, hear the current configuration again
         * and announce the way back: both announcements reach the client one lag later, the
         * second while the client waits for its question about the first.
         */
        void announce() {
            // Its subscription first, then its connection to ask it: both made, the client listens.
            Await.until("the client listens to the lagging sentinel", () -> proxy.connections() >= 2);
            proxy.delay(LAG);
            LaggingSentinel.announceTheOlderConfiguration(laggingCommands, peer, current, previous, previousEpoch);
            LaggingSentinel.hello(laggingCommands, peer, current, currentEpoch);
        }
    }

    private static boolean tryLockQuietly(DistributedLock lock) {
        try {
            return lock.tryLock();
        } catch (SynchronizerUnavailableException e) {
            return false;
        }
    }

    private RedisSentinelCommands<String, String> sentinelCommands(RedisServer sentinel) {
        RedisClient client = RedisClient.create();
        opened.add(client::shutdown);
        return client.connectSentinel(StringCodec.UTF8, RedisURI.create(sentinel.uri())).sync();
    }

    /** The ports of the servers the client switched to, in order, as their INFO replies name them. */
    private static List<Integer> ports(Queue<RedisFuture<String>> switches) {
        List<Integer> ports = new ArrayList<>();
        for (RedisFuture<String> info : switches) {
            ports.add(port(info.toCompletableFuture().join()));
        }
        return ports;
    }

    private static int port(String info) {
        return Integer.parseInt(LaggingSentinel.infoField(info, "tcp_port"));
    }
}
