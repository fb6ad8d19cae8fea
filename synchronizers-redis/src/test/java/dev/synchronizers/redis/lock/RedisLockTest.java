package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What only the Redis lock promises: round trips, waiters woken after a lost Pub/Sub connection,
 * fencing tokens, the hand-over to a waiter of the same client, flushed scripts, virtual threads,
 * bad input and an unreachable Redis. Its lease and lost holds are in {@code LockLeaseTest}, lost
 * and late replies in {@code LockUnknownOutcomesTest}, a Redis restart in
 * {@code fault.RedisRestartTest}.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class RedisLockTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    RedisLockTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /* --------------- round trips --------------- */

    /**
     * An uncontended lock() + unlock() is exactly two round trips: one script call each, no other
     * command. Proved from both ends: the commands the client sends, and the server's counters.
     */
    @Test
    void lockUnlock_uncontended_isTwoScriptCallsAndNothingElse() {
        RedisServer server = redis.startManaged();
        RedisClient lettuce = RedisClient.create();
        opened.add(lettuce::shutdown);
        List<String> sent = new CopyOnWriteArrayList<>();
        lettuce.addListener(new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                sent.add(event.getCommand().getType().toString());
            }
        });
        RedisSynchronizers client = RedisSynchronizers.builder().client(lettuce, RedisURI.create(server.uri()))
                .keyPrefix(prefix).lease(Duration.ofSeconds(60)).build();
        opened.add(client);
        DistributedLock lock = client.lock(name);
        lock.lock(); // loads the scripts (NOSCRIPT, then EVAL), so the measured calls run by SHA
        lock.unlock();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        admin.configResetstat();
        long readsBefore = RedisState.stat(admin.info("stats"), "total_reads_processed");
        sent.clear();

        lock.lock();
        lock.unlock();

        long reads = RedisState.stat(admin.info("stats"), "total_reads_processed") - readsBefore;
        Map<String, Long> calls = RedisState.commandCalls(admin.info("commandstats"));
        assertEquals(List.of("EVALSHA", "EVALSHA"), sent, "commands the client sent");
        assertEquals(2L, calls.get("evalsha"), "script calls the server ran");
        assertFalse(calls.containsKey("eval"), "no script sent as text");
        // Reads are counted per request: the two script calls, and this test's first INFO.
        assertEquals(3, reads, "round trips");
    }

    /* --------------- wake-ups --------------- */

    /**
     * After the Pub/Sub connection is re-established, every waiter is woken to try again, since
     * wake-ups published meanwhile are lost: the waiter runs a fresh attempt without waiting out
     * the holder's lease.
     */
    @Test
    void waiter_pubSubConnectionDropped_retriesAfterReconnect() throws Exception {
        RedisServer server = redis.startManaged();
        DistributedLock holder = client(server.uri(), Duration.ofSeconds(60), new LinkedBlockingQueue<>()).lock(name);
        DistributedLock waiting = client(server.uri(), Duration.ofSeconds(60), new LinkedBlockingQueue<>()).lock(name);
        RedisCommands<String, String> admin = opened.commands(server.uri());
        holder.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            waiting.lock();
            waiting.unlock();
            return true;
        });
        Await.until("the waiter is recorded", () -> admin.hexists(prefix + ":lock:{" + name + "}", ":waiting"));
        long attempts = RedisState.commandCalls(admin.info("commandstats")).get("evalsha");
        admin.clientKill(KillArgs.Builder.typePubsub());
        Await.until("the waiter tries again after the reconnect",
                () -> RedisState.commandCalls(admin.info("commandstats")).get("evalsha") > attempts);
        holder.unlock();
        assertTrue(waiter.get());
    }

    /**
     * A half-open Pub/Sub connection (nothing Redis sends arrives any more, as after a NAT idle
     * timeout) is found by the health check's PING, closed and made again, and the waiter is
     * woken: it takes the lock once the holder unlocks, although the wake-up was lost and the
     * holder's lease (60 s) is far longer than this test's bound.
     */
    @Test
    void waiter_pubSubHalfOpen_healthCheckReconnectsAndWakesIt() throws Exception {
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        DistributedLock holder = client(redis.server().uri(), Duration.ofSeconds(60), new LinkedBlockingQueue<>()).lock(name);
        RedisSynchronizers waitingClient = client(proxy.uri(), Duration.ofSeconds(3), new LinkedBlockingQueue<>());
        DistributedLock waiting = waitingClient.lock(name);
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        // A release hands the lock to one waiting client, on that client's own channel.
        String channel = LockKeys.of(prefix, name).clientWakeups(waitingClient.clientId());
        holder.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            waiting.lock();
            waiting.unlock();
            return true;
        });
        Await.until("the waiter sleeps, subscribed", () -> RedisState.sleepsOnWakeup(waiter.thread())
                && RedisState.subscribers(admin, channel) == 1);
        proxy.holdReplies();   // the waiter's connections go silent; what it sends still runs
        holder.unlock();       // its wake-up is stuck in the proxy
        Await.until("the silent Pub/Sub connection is given up",
                () -> RedisState.subscribers(admin, channel) == 0);
        proxy.pass();          // what the new connection was sent, and the woken waiter's try, are answered
        assertTrue(waiter.get());
    }

    /* --------------- fencing tokens --------------- */

    /** Fencing tokens strictly increase over 1,000 acquisitions by 4 clients. */
    @Test
    void fencingToken_1000AcquisitionsBy4Clients_strictlyIncrease() throws Exception {
        List<DistributedLock> locks = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            locks.add(client(redis.server().uri(), Duration.ofSeconds(30), new LinkedBlockingQueue<>()).lock(name));
        }
        List<Long> tokens = new ArrayList<>(); // appended only under the lock
        List<Background<Void>> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            DistributedLock lock = locks.get(t % 4);
            workers.add(Background.start("worker-" + t, () -> {
                for (int i = 0; i < 125; i++) {
                    lock.lock();
                    try {
                        tokens.add(lock.fencingToken());
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        for (Background<Void> worker : workers) {
            worker.get();
        }
        assertEquals(1000, tokens.size());
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "token " + i + ": " + tokens.get(i) + " after " + tokens.get(i - 1));
        }
    }

    /* --------------- hand-over within a client --------------- */

    /**
     * An unlock while a thread of the same client sleeps waiting hands the lock to it in one script
     * call, with no try of its own: the new holder has a newer token, and its own unlock works.
     */
    @Test
    void unlock_neighbourWaiting_handsTheLockOverInOneScriptCall() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        DistributedLock lock = client(uri, Duration.ofSeconds(30), new LinkedBlockingQueue<>()).lock(name);
        lock.lock();
        long holderToken = lock.fencingToken();
        CountDownLatch release = new CountDownLatch(1);
        Background<Long> next = Background.start("neighbour", () -> {
            lock.lock();
            try {
                release.await();
                return lock.fencingToken();
            } finally {
                lock.unlock();
            }
        });
        Await.until("the neighbour sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(next.thread()));
        admin.configResetstat();
        lock.unlock();
        Await.until("the neighbour holds the lock", () -> !RedisState.sleepsOnWakeup(next.thread()));
        String stats = admin.info("commandstats");
        assertEquals(1, RedisState.calls(stats, "evalsha"), "the hand-over alone: the neighbour does not try");
        assertEquals(0, RedisState.publishes(stats), "nobody else is told");
        release.countDown();
        assertTrue(next.get() > holderToken, "the new hold has a newer token");
        assertFalse(lock.isLocked(), "the neighbour's unlock released it in Redis");
    }

    /**
     * Hand-overs within a client stop after {@link ServerLockBackend#MAX_LOCAL_STREAK} in a row while a
     * waiter of another client is marked: client A's threads take the lock one after the other,
     * each handed it by the one before (no message), and the unlock after the streak releases
     * and tells every waiter (a message), so that client B's waiter gets its chance.
     */
    @Test
    void unlock_afterAStreakOfHandOversWhileAnotherClientWaits_releasesAndTellsEveryone() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        DistributedLock lockA = client(uri, Duration.ofSeconds(30), new LinkedBlockingQueue<>()).lock(name);
        DistributedLock lockB = client(uri, Duration.ofSeconds(30), new LinkedBlockingQueue<>()).lock(name);
        lockA.lock();
        Background<Boolean> other = Background.start("b", () -> {
            lockB.lock();
            lockB.unlock();
            return true;
        });
        Await.until("client B's waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(other.thread()));
        int streak = ServerLockBackend.MAX_LOCAL_STREAK;
        List<CountDownLatch> releases = new ArrayList<>();
        List<Background<Void>> neighbours = new ArrayList<>();
        Runnable unlockPrevious = lockA::unlock;
        for (int i = 0; i <= streak; i++) {
            CountDownLatch release = new CountDownLatch(1);
            releases.add(release);
            Background<Void> neighbour = Background.start("a-" + i, () -> {
                lockA.lock();
                try {
                    release.await();
                } finally {
                    lockA.unlock();
                }
                return null;
            });
            neighbours.add(neighbour);
            Await.until(neighbour.thread().getName() + " sleeps on its wake-up",
                    () -> RedisState.sleepsOnWakeup(neighbour.thread()));
            admin.configResetstat();
            unlockPrevious.run();
            if (i < streak) {
                Await.until(neighbour.thread().getName() + " holds the lock",
                        () -> !RedisState.sleepsOnWakeup(neighbour.thread()));
                String stats = admin.info("commandstats");
                assertEquals(1, RedisState.calls(stats, "evalsha"), "hand-over " + (i + 1) + ": one script call");
                assertEquals(0, RedisState.publishes(stats), "hand-over " + (i + 1) + ": no message");
                CountDownLatch previous = release;
                unlockPrevious = previous::countDown;
            } else {
                // At least one: client B, if it wins the lock now, publishes again when it unlocks.
                Await.until("the release after the streak is published",
                        () -> RedisState.publishes(admin.info("commandstats")) >= 1);
            }
        }
        releases.forEach(CountDownLatch::countDown);
        assertTrue(other.get(), "client B's waiter got the lock");
        for (Background<Void> neighbour : neighbours) {
            neighbour.get();
        }
    }

    /* --------------- faults --------------- */

    /** SCRIPT FLUSH, repeated while 4 threads loop lock/unlock: no error reaches the caller. */
    @Test
    void lockUnlock_scriptFlushedRepeatedly_noErrorReachesCaller() throws Exception {
        RedisSynchronizers client = client(redis.server().uri(), Duration.ofSeconds(30), new LinkedBlockingQueue<>());
        DistributedLock lock = client.lock(name);
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        CountDownLatch flushed = new CountDownLatch(1);
        List<Background<Integer>> workers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            workers.add(Background.start("worker-" + t, () -> {
                int rounds = 0;
                while (flushed.getCount() > 0 || rounds < 50) {
                    lock.lock();
                    lock.unlock();
                    rounds++;
                }
                return rounds;
            }));
        }
        for (int i = 0; i < 50; i++) {
            admin.scriptFlush();
        }
        flushed.countDown();
        for (Background<Integer> worker : workers) {
            assertTrue(worker.get() >= 50);
        }
    }

    /* --------------- virtual threads --------------- */

    /**
     * Blocking calls are virtual-thread friendly: 200 virtual threads in 2 clients contend for one
     * lock without a lost update. Runs on JDK 21 and later (the build targets 17, so the virtual
     * thread factory is looked up reflectively); .ci/run runs it on the newest JDK installed.
     */
    @Test
    void lock_200VirtualThreadsIn2Clients_noLostUpdate() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+");
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        java.util.concurrent.ThreadFactory factory = (java.util.concurrent.ThreadFactory)
                Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(builder);
        List<DistributedLock> locks = List.of(
                client(redis.server().uri(), Duration.ofSeconds(30), new LinkedBlockingQueue<>()).lock(name),
                client(redis.server().uri(), Duration.ofSeconds(30), new LinkedBlockingQueue<>()).lock(name));
        int threads = 200;
        AtomicInteger counter = new AtomicInteger(); // read and written separately: a plain, racy increment
        CountDownLatch done = new CountDownLatch(threads);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            DistributedLock lock = locks.get(t % 2);
            factory.newThread(() -> {
                try {
                    for (int i = 0; i < 5; i++) {
                        lock.lock();
                        try {
                            counter.set(counter.get() + 1);
                        } finally {
                            lock.unlock();
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                } finally {
                    done.countDown();
                }
            }).start();
        }
        assertTrue(done.await(120, TimeUnit.SECONDS), "all virtual threads finished");
        assertTrue(failures.isEmpty(), failures.toString());
        assertEquals(threads * 5, counter.get());
    }

    /* --------------- bad input --------------- */

    /** Null and empty names: NullPointerException / IllegalArgumentException naming the argument. */
    @Test
    void lock_badName_throwsNamingTheArgument() {
        RedisSynchronizers client = client(redis.server().uri(), Duration.ofSeconds(30), new LinkedBlockingQueue<>());
        NullPointerException nil = assertThrows(NullPointerException.class, () -> client.lock(null));
        assertTrue(nil.getMessage().contains("name"), nil.getMessage());
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class, () -> client.lock(""));
        assertTrue(empty.getMessage().contains("name"), empty.getMessage());
    }

    /** A name whose key already holds another Redis type: a clear exception, and the foreign key untouched. */
    @Test
    void lock_keyOfAnotherType_throwsWrongTypeAndLeavesKeyAlone() {
        RedisSynchronizers client = client(redis.server().uri(), Duration.ofSeconds(30), new LinkedBlockingQueue<>());
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        String key = prefix + ":lock:{" + name + "}";
        admin.set(key, "someone else's value");
        DistributedLock lock = client.lock(name);
        SynchronizerException thrown = assertThrows(SynchronizerException.class, lock::lock);
        assertTrue(thrown.getMessage().contains("WRONGTYPE") && thrown.getMessage().contains(name), thrown.getMessage());
        assertThrows(SynchronizerException.class, lock::tryLock);
        assertThrows(SynchronizerException.class, lock::forceUnlock);
        assertEquals(0, lock.getHoldCount());
        assertEquals("someone else's value", admin.get(key));
        assertEquals(-1L, admin.pttl(key), "no TTL added");
        assertEquals(0, RedisInternals.watchdogEntries(client));
        admin.del(key);
    }

    /* --------------- unreachable Redis --------------- */

    /** Redis unreachable at start: a clear exception within a bounded time, never a hang. */
    @Test
    void create_redisUnreachable_throwsUnavailable() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        String uri = "redis://127.0.0.1:" + port;
        SynchronizerUnavailableException thrown = assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
                assertThrows(SynchronizerUnavailableException.class, () -> RedisSynchronizers.builder().uri(uri)
                        .commandTimeout(Duration.ofSeconds(1)).build()));
        assertTrue(thrown.getMessage().contains("127.0.0.1:" + port), thrown.getMessage());
    }

    /** Redis stops answering (SIGSTOP) or dies during calls: a clear exception within a bounded time. */
    @Test
    void lock_redisPausedOrKilled_throwsUnavailable() throws Exception {
        RedisServer server = redis.startManaged();
        RedisSynchronizers client = RedisSynchronizers.builder().uri(server.uri()).keyPrefix(prefix)
                .commandTimeout(Duration.ofMillis(500)).build();
        opened.add(client);
        DistributedLock lock = client.lock(name);
        server.pause();
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                assertThrows(SynchronizerUnavailableException.class, lock::lock);
                assertThrows(SynchronizerUnavailableException.class, () -> lock.tryLock(10, TimeUnit.SECONDS));
            });
        } finally {
            server.resume();
        }
        assertEquals(0, lock.getHoldCount());
        lock.lock(); // answers again once resumed
        server.kill();
        // Owner-bound: runs on this thread, bounded by the 500 ms command timeout.
        assertThrows(SynchronizerUnavailableException.class, lock::unlock);
        assertEquals(0, lock.getHoldCount(), "the hold is dropped locally and expires with its lease");
        assertEquals(0, RedisInternals.watchdogEntries(client));
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            assertThrows(SynchronizerUnavailableException.class, lock::tryLock);
        });
    }

    /* --------------- helpers --------------- */

    private RedisSynchronizers client(String uri, Duration lease, BlockingQueue<LostHold> lost) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).lease(lease)
                .lostHoldListener(lost::add).build();
        opened.add(client);
        return client;
    }

}
