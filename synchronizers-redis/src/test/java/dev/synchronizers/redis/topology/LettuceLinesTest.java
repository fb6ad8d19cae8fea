package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What this library's clients do alike on every supported Lettuce line (6.6 to 7.x), where a
 * Lettuce default or behaviour differs between the lines. CI runs this class on each line.
 */
@Tag("redis")
class LettuceLinesTest {

    /**
     * A command whose write fails because the connection drops as it is written never reached
     * Redis: the caller is refused at once ("not connected", an outcome known not to have taken
     * anything), never left to wait out the command timeout. Lettuce 7.7 refuses it by itself
     * under {@code REJECT_COMMANDS}; 6.x up to 7.5 left a command the replay filter keeps from
     * being written again pending until its timeout.
     */
    @Test
    void acquire_connectionDropsAsItIsWritten_refusedAtOnce_andTheLockStaysFree() throws Exception {
        AtomicBoolean dropNextEvalsha = new AtomicBoolean();
        AtomicInteger dropped = new AtomicInteger();
        ClientResources resources = DefaultClientResources.builder().nettyCustomizer(new NettyCustomizer() {
            @Override
            public void afterChannelInitialized(Channel channel) {
                channel.pipeline().addLast(new ChannelOutboundHandlerAdapter() {
                    @Override
                    public void write(ChannelHandlerContext ctx, Object message, ChannelPromise promise) throws Exception {
                        if (message instanceof RedisCommand<?, ?, ?> command && "EVALSHA".equals(command.getType().toString())
                                && dropNextEvalsha.compareAndSet(true, false)) {
                            ctx.channel().close();   // the connection drops; the write below fails on the closed channel
                            dropped.incrementAndGet();
                        }
                        super.write(ctx, message, promise);
                    }
                });
            }
        }).build();
        try (RedisServer server = RedisServers.start();
                RedisSynchronizers client = RedisSynchronizers.builder().uri(server.uri()).clientResources(resources)
                        // Far longer than this test: a command left pending fails it by its cause, not by time.
                        .commandTimeout(Duration.ofSeconds(20)).build()) {
            DistributedLock lock = client.lock("lines-dropped-write");
            assertTrue(lock.tryLock());
            lock.unlock();

            dropNextEvalsha.set(true);
            SynchronizerUnavailableException refused = assertThrows(SynchronizerUnavailableException.class, lock::tryLock);

            assertEquals(1, dropped.get());
            assertEquals("Currently not connected. Commands are rejected.", refused.getCause().getMessage(),
                    () -> "refused, not timed out: " + refused);
            DistributedLock other = client.lock("lines-dropped-write");
            Await.until("the client reconnects and takes the lock, which the refused acquire left free", () -> {
                try {
                    return other.tryLock(1, TimeUnit.SECONDS);
                } catch (SynchronizerUnavailableException | InterruptedException e) {
                    return false;
                }
            });
            other.unlock();
        } finally {
            resources.shutdown(0, 10, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    /**
     * An acquire in flight when the connection drops (it ran, its reply was lost) fails, and is
     * never written again once the client reconnects: Redis runs it once. Lettuce 6.8 and later
     * fail such commands by themselves under {@code REJECT_COMMANDS}; 6.6 kept them and wrote
     * them again on the new connection, so the caller got the reply of a second run.
     */
    @Test
    void acquire_inFlightWhenTheConnectionDrops_failsAndRedisRunsItOnce() throws Exception {
        Opened opened = new Opened();
        try {
            RedisServer server = opened.add(RedisServers.start());
            FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
            RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(proxy.uri())
                    .commandTimeout(Duration.ofSeconds(20)).build());
            RedisCommands<String, String> admin = opened.commands(server.uri());
            DistributedLock lock = client.lock("lines-in-flight");
            assertTrue(lock.tryLock());
            lock.unlock();
            admin.configResetstat();

            proxy.dropReplies(1, "EVALSHA");
            Background<Boolean> acquire = Background.start("acquire", lock::tryLock);
            Await.until("the acquire's reply is dropped", () -> proxy.droppedReplies() == 1);
            proxy.cutAll();

            assertInstanceOf(SynchronizerUnavailableException.class, acquire.failure(),
                    "the acquire fails; it is not answered by a second run");
            DistributedLock other = client.lock("lines-in-flight-other");
            Await.until("the client reconnects and takes another lock", () -> {
                try {
                    return other.tryLock();
                } catch (SynchronizerUnavailableException e) {
                    return false;
                }
            });
            other.unlock();
            assertEquals(3, RedisState.calls(admin.info("commandstats"), "evalsha"),
                    "the dropped acquire ran once, beside the other lock's take and release");
        } finally {
            opened.closeAll();
        }
    }

    /**
     * A cluster client refreshes its view of the slots on every adaptive trigger (the default
     * since Lettuce 7.0; none on 6.x) and may connect to a node not in its view yet (the default
     * since 7.0; 6.x refuses).
     */
    @Test
    void clusterClientOptions_everyAdaptiveTrigger_andNodesOutsideTheView_onEveryLine() {
        ClusterClientOptions options = ClusterTopology.clientOptions(Duration.ofSeconds(5));

        ClusterTopologyRefreshOptions refresh = options.getTopologyRefreshOptions();
        assertEquals(EnumSet.allOf(ClusterTopologyRefreshOptions.RefreshTrigger.class),
                Set.copyOf(refresh.getAdaptiveRefreshTriggers()));
        assertTrue(refresh.isPeriodicRefreshEnabled());
        assertFalse(options.isValidateClusterNodeMembership());
    }
}
