package dev.synchronizers.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link SynchronizersLockProvider#withInterruptOnLoss()}: a task run by ShedLock's own executor is
 * interrupted when its lock is lost (here forced by another client and found gone by the watchdog's
 * next renewal), its executor's unlock then throws {@link LostHoldException} and leaves the thread's
 * interrupt status clear; without the option, the task is not interrupted.
 */
@Tag("redis")
class SynchronizersLockProviderInterruptTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Short, so that the watchdog's next renewal (a third of it) finds the forced lock soon. */
    private static final Duration LEASE = Duration.ofMillis(1500);
    private static final long PATIENCE_SECONDS = 30;

    private final String prefix = "shedlock-" + UUID.randomUUID();
    private final String name = "job-" + UUID.randomUUID();
    private final BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
    private final List<RedisSynchronizers> clients = new ArrayList<>();

    @AfterEach
    void closeClients() {
        clients.forEach(RedisSynchronizers::close);
    }

    @Test
    void withInterruptOnLoss_forcedLock_interruptsTheTask_thenUnlockThrowsAndClearsTheInterrupt() throws Exception {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client()).withKeepAlive()
                .withInterruptOnLoss();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicBoolean interruptSetAfterwards = new AtomicBoolean(true);
        AtomicReference<Throwable> thrown = new AtomicReference<>();

        CompletableFuture<Void> run = CompletableFuture.runAsync(() -> {
            try {
                new DefaultLockingTaskExecutor(provider).executeWithLock((Runnable) () -> {
                    started.countDown();
                    try {
                        Thread.sleep(TimeUnit.SECONDS.toMillis(PATIENCE_SECONDS));
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                        Thread.currentThread().interrupt();   // as a task should: keep the status
                    }
                }, config());
            } catch (Throwable t) {
                thrown.set(t);
            }
            interruptSetAfterwards.set(Thread.currentThread().isInterrupted());
        });
        assertTrue(started.await(PATIENCE_SECONDS, TimeUnit.SECONDS));
        assertTrue(client().lock(name).forceUnlock());

        run.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertTrue(interrupted.get(), "the task was interrupted when its lock was lost");
        assertInstanceOf(LostHoldException.class, thrown.get(), "unlock() after the loss");
        assertFalse(interruptSetAfterwards.get(), "the interrupt the provider set is cleared by unlock()");
        assertEquals(LostHold.Cause.GONE, lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS).cause());
    }

    @Test
    void byDefault_forcedLock_doesNotInterruptTheTask() throws Exception {
        SynchronizersLockProvider provider = new SynchronizersLockProvider(client()).withKeepAlive();
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<LostHold> seen = new AtomicReference<>();
        AtomicBoolean interrupted = new AtomicBoolean();

        CompletableFuture<Void> run = CompletableFuture.runAsync(() -> {
            try {
                new DefaultLockingTaskExecutor(provider).executeWithLock((Runnable) () -> {
                    started.countDown();
                    try {
                        // The loss is reported to the listener: the task is still not interrupted then.
                        seen.set(lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS));
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                    }
                }, config());
            } catch (LostHoldException expected) {
                // unlock() after the loss
            }
        });
        assertTrue(started.await(PATIENCE_SECONDS, TimeUnit.SECONDS));
        assertTrue(client().lock(name).forceUnlock());

        run.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertNotNull(seen.get(), "the loss was reported while the task ran");
        assertFalse(interrupted.get(), "not interrupted without withInterruptOnLoss()");
    }

    private RedisSynchronizers client() {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lease(LEASE).lostHoldListener(lost::add).build();
        clients.add(client);
        return client;
    }

    private LockConfiguration config() {
        return new LockConfiguration(ClockProvider.now(), name, Duration.ofMinutes(5), Duration.ZERO);
    }
}
