package dev.synchronizers.redis.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.child.SemaphoreHolderMain;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What only the Redis semaphore promises: a shared pool bounded across clients, permits that come
 * back when their holder dies and are reported lost when Redis loses their lease, one waiter woken
 * per release, and a clear exception when Redis is down (for the latch's calls too). Lost or late
 * replies are in {@code SemaphoreUnknownOutcomesTest}.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class RedisSemaphoreTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    RedisSemaphoreTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /* --------------- resource pool --------------- */

    /**
     * 3 clients x 8 threads share 5 permits for 2,000 acquisitions; inside, each increments and
     * decrements a Redis counter: the highest value ever seen is exactly 5, never more.
     */
    @Test
    void acquire_24ThreadsIn3ClientsOn5Permits_neverMoreThan5Inside() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        String inside = prefix + ":inside";
        List<DistributedSemaphore> semaphores = List.of(
                client(uri, 30_000, new LinkedBlockingQueue<>()).semaphore(name),
                client(uri, 30_000, new LinkedBlockingQueue<>()).semaphore(name),
                client(uri, 30_000, new LinkedBlockingQueue<>()).semaphore(name));
        assertTrue(semaphores.get(0).trySetPermits(5));
        AtomicInteger remaining = new AtomicInteger(2_000);
        AtomicLong highest = new AtomicLong();
        // The first five inside wait for each other, so the pool is seen full once for certain;
        // a sixth could only join them by breaking the bound.
        AtomicInteger entries = new AtomicInteger();
        CountDownLatch fiveInside = new CountDownLatch(5);
        List<Background<Void>> workers = new ArrayList<>();
        for (int t = 0; t < 24; t++) {
            DistributedSemaphore semaphore = semaphores.get(t % 3);
            RedisCommands<String, String> counter = opened.commands(uri);
            workers.add(Background.start("worker-" + t, () -> {
                while (remaining.getAndDecrement() > 0) {
                    semaphore.acquire();
                    try {
                        highest.accumulateAndGet(counter.incr(inside), Math::max);
                        if (entries.incrementAndGet() <= 5) {
                            fiveInside.countDown();
                            assertTrue(fiveInside.await(30, TimeUnit.SECONDS), "five holders at once");
                        }
                        counter.decr(inside);
                    } finally {
                        semaphore.release();
                    }
                }
                return null;
            }));
        }
        for (Background<Void> worker : workers) {
            worker.get();
        }
        assertEquals(5, highest.get(), "the pool was used to the full, and never beyond");
        assertEquals(5, semaphores.get(1).availablePermits());
        admin.del(inside);
    }

    /* --------------- leak-free --------------- */

    /**
     * A child JVM holding 3 permits is SIGKILLed: availablePermits() returns to the total after its
     * lease, and a waiter blocked on those permits proceeds.
     */
    @Test
    void acquire_holderProcessKilled_permitsComeBackAfterItsLease() throws Exception {
        String uri = redis.server().uri();
        DistributedSemaphore semaphore = client(uri, 30_000, new LinkedBlockingQueue<>()).semaphore(name);
        assertTrue(semaphore.trySetPermits(4));
        try (ChildJvm child = ChildJvm.start(SemaphoreHolderMain.class, uri, prefix, name, "1000", "3")) {
            child.awaitLine("HOLDING", Duration.ofSeconds(60));
            assertEquals(1, semaphore.availablePermits());
            Background<Boolean> waiter = Background.start("waiter", () -> {
                semaphore.acquire(3);
                return true;
            });
            Await.parked(waiter.thread());
            child.kill();
            assertTrue(waiter.get(), "the waiter got the dead holder's permits");
            semaphore.release(3);
            assertEquals(4, semaphore.availablePermits());
        }
    }

    /** Permits whose lease Redis no longer has are reported lost, and their release throws LostHoldException. */
    @Test
    void acquire_leaseDeletedBehindItsBack_reportedLost() throws Exception {
        String uri = redis.server().uri();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = client(uri, 30_000, lost);
        DistributedSemaphore semaphore = client.semaphore(name);
        semaphore.trySetPermits(2);
        semaphore.acquire(2);
        opened.commands(uri).del(prefix + ":semaphore:{" + name + "}:leases");
        RedisInternals.renewNow(client);
        LostHold event = lost.poll(30, TimeUnit.SECONDS);
        assertNotNull(event);
        assertEquals(LostHold.Cause.GONE, event.cause());
        assertEquals("semaphore", event.kind());
        assertThrows(LostHoldException.class, semaphore::release, "lost permits cannot be released");
        assertEquals(0, RedisInternals.watchdogEntries(client));
        opened.commands(uri).del(prefix + ":semaphore:{" + name + "}:holds");
    }

    /* --------------- one waiter woken per release --------------- */

    /**
     * A release of 1 permit with 8 waiters in 2 clients serves the first waiter inside the release
     * script: one script call and one message in all, no acquire script, no herd; 7 stay queued.
     * Each client waits on its own channel, so the message reaches the served waiter's client only.
     */
    @Test
    void release_onePermitWith8Waiters_servesOneInTheSameCall() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        List<DistributedSemaphore> semaphores = List.of(
                client(server.uri(), 60_000, new LinkedBlockingQueue<>()).semaphore(name),
                client(server.uri(), 60_000, new LinkedBlockingQueue<>()).semaphore(name));
        DistributedSemaphore holder = client(server.uri(), 60_000, new LinkedBlockingQueue<>()).semaphore(name);
        holder.trySetPermits(1);
        holder.acquire();
        CountDownLatch firstAcquired = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        List<Background<Void>> waiters = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            DistributedSemaphore semaphore = semaphores.get(w % 2);
            waiters.add(Background.start("waiter-" + w, () -> {
                semaphore.acquire();
                try {
                    firstAcquired.countDown();
                    finish.await();
                } finally {
                    semaphore.release();
                }
                return null;
            }));
        }
        String queue = prefix + ":semaphore:{" + name + "}:queue";
        Await.until("8 waiters queued", () -> admin.zcard(queue) == 8);
        for (Background<Void> waiter : waiters) {
            Await.until(waiter.thread().getName() + " sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        }
        // Each waiting client listens on its own channel, so the one grant reaches one client.
        String wake = prefix + ":semaphore:{" + name + "}:wake";
        assertEquals(0, RedisState.subscribers(admin, wake), "nobody listens on the shared channel");
        List<String> channels = RedisState.shardedPubSub(admin) ? admin.pubsubShardChannels(wake + ":*")
                : admin.pubsubChannels(wake + ":*");
        assertEquals(2, channels.size(), () -> "one channel per waiting client: " + channels);
        admin.configResetstat();
        holder.release();
        assertTrue(firstAcquired.await(30, TimeUnit.SECONDS));
        String stats = admin.info("commandstats");
        assertEquals(1, RedisState.calls(stats, "evalsha"), "the release alone: the waiter does not ask again");
        assertEquals(1, RedisState.publishes(stats), "one message, to the waiter served");
        assertEquals(7L, admin.zcard(queue), "the other 7 still wait in line");
        finish.countDown();
        for (Background<Void> waiter : waiters) {
            waiter.get();
        }
    }

    /* --------------- requests above the total --------------- */

    /**
     * Total 1, held by A; B's tryAcquire(2, 60 s) waits out of line; A releases (nothing held any
     * more) and raises the total to 2. The growth wakes B, which gets both permits at once,
     * although the release emptied the holdings in between. With a 120 s lease, a B left to its
     * next lease-long try (or its last try at the deadline) would not be done within the bounded
     * wait for its result.
     */
    @Test
    void tryAcquireAboveTheTotal_releaseEmptiesThePoolThenAddPermitsCoversIt_wokenByTheGrowth() throws Exception {
        String uri = redis.server().uri();
        DistributedSemaphore a = client(uri, 120_000, new LinkedBlockingQueue<>()).semaphore(name);
        DistributedSemaphore b = client(uri, 120_000, new LinkedBlockingQueue<>()).semaphore(name);
        assertTrue(a.trySetPermits(1));
        a.acquire();
        Background<Boolean> waiter = Background.start("over-asker", () -> b.tryAcquire(2, 60, TimeUnit.SECONDS));
        Await.until("the over-asker sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        a.release();
        a.addPermits(1);
        assertTrue(waiter.get(), "the growth to 2 woke the waiter asking for 2");
        assertEquals(0, a.availablePermits());
        b.release(2);
        assertEquals(2, a.availablePermits());
    }

    /**
     * B's tryAcquire(1, 60 s) comes before anyone set the total (it counts as 0), so it waits out of
     * line; A's trySetPermits(1) then wakes it, and B gets the permit at once rather than at its
     * next lease-long try (120 s).
     */
    @Test
    void tryAcquireBeforeTheTotalIsSet_trySetPermitsWakesIt() throws Exception {
        String uri = redis.server().uri();
        DistributedSemaphore a = client(uri, 120_000, new LinkedBlockingQueue<>()).semaphore(name);
        DistributedSemaphore b = client(uri, 120_000, new LinkedBlockingQueue<>()).semaphore(name);
        Background<Boolean> waiter = Background.start("early", () -> b.tryAcquire(1, 60, TimeUnit.SECONDS));
        Await.until("the early waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        assertTrue(a.trySetPermits(1));
        assertTrue(waiter.get(), "setting the total woke the waiter");
        assertEquals(0, a.availablePermits());
        b.release();
    }

    /**
     * Total 3, A holds 1. A child JVM queues for 3 at the head of the line, B queues for 1 behind it,
     * the child is killed (its place lives on for its 60 s lease), and A shrinks the total to 2: the
     * dead head now asks for more than the total and can never be served. B, asking for 1 of the
     * 1 free, gets it without waiting for the dead head's place to run out.
     */
    @Test
    void deadHeadAskingAboveAShrunkTotal_doesNotHoldUpTheLineBehindIt() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        String queue = prefix + ":semaphore:{" + name + "}:queue";
        DistributedSemaphore a = client(uri, 60_000, new LinkedBlockingQueue<>()).semaphore(name);
        DistributedSemaphore b = client(uri, 60_000, new LinkedBlockingQueue<>()).semaphore(name);
        assertTrue(a.trySetPermits(3));
        a.acquire();
        try (ChildJvm child = ChildJvm.start(SemaphoreHolderMain.class, uri, prefix, name, "60000", "3")) {
            Await.until("the child waits at the head of the line", () -> admin.zcard(queue) == 1);
            Background<Boolean> waiter = Background.start("behind", () -> b.tryAcquire(1, 10, TimeUnit.SECONDS));
            Await.until("B waits behind the child", () -> admin.zcard(queue) == 2);
            Await.until("B sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
            child.kill();
            a.addPermits(-1);
            assertTrue(waiter.get(), "B was served although the dead head's place had not run out");
        }
        assertEquals(0, a.availablePermits());
        b.release();
        a.release();
        assertEquals(2, a.availablePermits());
    }

    /* --------------- Redis down --------------- */

    /** Redis unreachable: semaphore and latch calls throw a clear exception within the command timeout. */
    @Test
    void calls_redisDown_throwUnavailable() throws Exception {
        RedisServer server = redis.startManaged();
        RedisSynchronizers client = RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .commandTimeout(Duration.ofMillis(500)).build();
        opened.add(client);
        DistributedSemaphore semaphore = client.semaphore(name);
        DistributedCountDownLatch latch = client.countDownLatch(name);
        semaphore.trySetPermits(1);
        server.kill();
        assertThrows(SynchronizerUnavailableException.class, semaphore::acquire);
        assertThrows(SynchronizerUnavailableException.class, semaphore::tryAcquire);
        assertThrows(SynchronizerUnavailableException.class, semaphore::availablePermits);
        assertThrows(SynchronizerUnavailableException.class, () -> latch.trySetCount(1));
        assertThrows(SynchronizerUnavailableException.class, latch::await);
    }

    /* --------------- helpers --------------- */

    private RedisSynchronizers client(String uri, long leaseMillis, BlockingQueue<LostHold> lost) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(Duration.ofMillis(leaseMillis)).lostHoldListener(lost::add).build();
        opened.add(client);
        return client;
    }

}
