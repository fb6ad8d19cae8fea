package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LockHandle;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import dev.synchronizers.testkit.TlsCertificates;
import io.lettuce.core.SslOptions;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A {@code rediss://} URI: a {@code redis-server} started with TLS on, with a certificate the test
 * generates (signed by a CA of its own), reached with {@code sslOptions} trusting that CA. A lock
 * and a semaphore work over it; a client that trusts another CA fails with a
 * {@link SynchronizerUnavailableException} naming the server.
 */
@Tag("redis")
class TlsTest {

    private static TlsCertificates tls;
    private static RedisServer server;
    private static int tlsPort;

    private final List<AutoCloseable> opened = new ArrayList<>();
    private final String prefix = "tls-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void startTlsServer() throws IOException {
        tls = TlsCertificates.generate();
        try (ServerSocket free = new ServerSocket(0)) {
            tlsPort = free.getLocalPort();
        }
        server = RedisServers.start(tls.serverArgs(tlsPort));
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private String uri() {
        return "rediss://127.0.0.1:" + tlsPort;
    }

    private RedisSynchronizers client(TlsCertificates trusted) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(uri()).keyPrefix(prefix)
                .sslOptions(SslOptions.builder().trustManager(trusted.caCertificate().toFile()).build()).build();
        opened.add(client);
        return client;
    }

    @Test
    void redissUri_caTrusted_lockAndSemaphoreWork() throws Exception {
        RedisSynchronizers client = client(tls);
        RedisSynchronizers other = client(tls);
        DistributedLock lock = client.lock("orders");
        lock.lock();
        try {
            assertTrue(other.lock("orders").isLocked());
            assertTrue(other.lock("orders").tryAcquire(Duration.ZERO).isEmpty());
        } finally {
            lock.unlock();
        }
        try (LockHandle handle = other.lock("orders").acquire()) {
            assertTrue(handle.verify());
        }
        DistributedSemaphore semaphore = client.semaphore("pool");
        assertTrue(semaphore.trySetPermits(2));
        try (PermitHandle permits = other.semaphore("pool").acquirePermits(2)) {
            assertEquals(2, permits.permits());
            assertEquals(0, semaphore.availablePermits());
            assertFalse(semaphore.tryAcquire(1, 0, TimeUnit.SECONDS));
        }
        assertTrue(semaphore.tryAcquire(2, 5, TimeUnit.SECONDS));
        semaphore.release(2);
    }

    @Test
    void redissUri_anotherCaTrusted_unavailableNamingTheServer() {
        TlsCertificates stranger = TlsCertificates.generate();

        SynchronizerUnavailableException e = assertThrows(SynchronizerUnavailableException.class,
                () -> client(stranger));

        assertTrue(e.getMessage().contains("rediss://127.0.0.1:" + tlsPort), e.getMessage());
        assertTrue(e.getMessage().contains("TLS handshake failed"), e.getMessage());
        System.out.println("a client trusting another CA: " + e.getMessage());
    }
}
