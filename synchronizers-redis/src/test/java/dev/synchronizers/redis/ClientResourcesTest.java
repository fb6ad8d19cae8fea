package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code clientResources(ClientResources)} on both builders: the client's connections run on the
 * shared resources' threads, and closing the client leaves the resources running for their owner
 * (the way a Spring Boot application shares its {@code ClientResources} bean).
 */
@Tag("redis")
class ClientResourcesTest {

    private static final List<RedisServer> SERVERS = new ArrayList<>();

    /** Counts the threads the shared resources start: any count above zero means they were used. */
    private final AtomicInteger threadsStarted = new AtomicInteger();
    private ClientResources resources;

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 3; i++) {
            SERVERS.add(RedisServers.start());
        }
    }

    @AfterAll
    static void stopServers() {
        SERVERS.forEach(RedisServer::close);
    }

    @BeforeEach
    void createResources() {
        resources = DefaultClientResources.builder().ioThreadPoolSize(2).threadFactoryProvider(pool -> {
            ThreadFactory counting = runnable -> {
                threadsStarted.incrementAndGet();
                Thread thread = new Thread(runnable, "shared-" + pool);
                thread.setDaemon(true);
                return thread;
            };
            return counting;
        }).build();
    }

    @AfterEach
    void shutDownResources() {
        resources.shutdown();
    }

    /* --------------- RedisSynchronizers --------------- */

    /** "Shares resources with the Lettuce client this builder creates ... close() never shuts the resources down." */
    @Test
    void clientResources_standalone_connectsOnTheSharedThreadsAndLeavesThemRunning() {
        String uri = SERVERS.get(0).uri();
        try (RedisSynchronizers synchronizers = RedisSynchronizers.builder().uri(uri).clientResources(resources).build()) {
            DistributedLock lock = synchronizers.lock("client-resources");
            assertTrue(lock.tryLock());
            lock.unlock();
        }
        assertTrue(threadsStarted.get() > 0, "the client's connections ran on the shared resources' threads");
        assertFalse(resources.eventExecutorGroup().isShuttingDown(), "close() must not shut the shared resources down");
        // The owner's resources still serve a new client after the first one closed.
        try (RedisSynchronizers again = RedisSynchronizers.builder().uri(uri).clientResources(resources).build()) {
            DistributedLock lock = again.lock("client-resources");
            assertTrue(lock.tryLock());
            lock.unlock();
        }
    }

    /** "@throws NullPointerException if resources is null", before anything is connected. */
    @Test
    void clientResources_null_throwsNamingTheArgument() {
        NullPointerException e = assertThrows(NullPointerException.class,
                () -> RedisSynchronizers.builder().clientResources(null));
        assertTrue(e.getMessage().contains("clientResources"), e.getMessage());
        assertThrows(NullPointerException.class, () -> Redlock.builder().clientResources(null));
    }

    /* --------------- Redlock --------------- */

    /** Redlock's builder: every node's client on the shared resources, left running by close(). */
    @Test
    void clientResources_redlock_connectsEveryNodeOnTheSharedThreadsAndLeavesThemRunning() {
        try (Redlock redlock = Redlock.builder()
                .nodes(SERVERS.get(0).uri(), SERVERS.get(1).uri(), SERVERS.get(2).uri())
                .clientResources(resources)
                .build()) {
            DistributedLock lock = redlock.lock("client-resources-redlock");
            assertTrue(lock.tryLock());
            lock.unlock();
        }
        assertTrue(threadsStarted.get() > 0, "the nodes' connections ran on the shared resources' threads");
        assertFalse(resources.eventExecutorGroup().isShuttingDown(), "close() must not shut the shared resources down");
    }
}
