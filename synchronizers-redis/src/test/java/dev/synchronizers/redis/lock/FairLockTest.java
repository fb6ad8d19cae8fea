package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.child.FairWaiterMain;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What only the fair lock promises: FIFO across clients, a queue that never sticks, and one waiter
 * woken per release. (Its {@code DistributedLock} contract runs in DistributedLockContractTest.)
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class FairLockTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;
    private RedisCommands<String, String> admin;

    FairLockTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /* --------------- FIFO --------------- */

    /**
     * 3 clients x 4 threads arrive in a known order (each starts waiting only after the previous one
     * is seen in the queue) and acquire in exactly that order; over 5 rounds.
     */
    @Test
    void lock_12WaitersIn3Clients_acquireInArrivalOrder() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        List<RedisSynchronizers> clients = List.of(client(uri, 30_000), client(uri, 30_000), client(uri, 30_000));
        DistributedLock holder = clients.get(0).fairLock(name);
        for (int round = 0; round < 5; round++) {
            holder.lock();
            List<Integer> order = new CopyOnWriteArrayList<>();
            List<Background<Void>> waiters = new ArrayList<>();
            for (int w = 0; w < 12; w++) {
                int waiter = w;
                DistributedLock lock = clients.get(w % 3).fairLock(name);
                waiters.add(Background.start("waiter-" + w, () -> {
                    lock.lock();
                    try {
                        order.add(waiter);
                    } finally {
                        lock.unlock();
                    }
                    return null;
                }));
                int queued = w + 1;
                Await.until(queued + " waiters queued", () -> admin.zcard(queueKey()) == queued);
            }
            holder.unlock();
            for (Background<Void> waiter : waiters) {
                waiter.get();
            }
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), order, "round " + round);
            assertEquals(0, admin.exists(queueKey()), "queue empty after the round");
        }
    }

    /* --------------- dead and departing waiters --------------- */

    /**
     * A child JVM waiting second in the queue is SIGKILLed: the waiter behind it gets the lock once
     * the dead waiter's place lease has run out, not never.
     */
    @Test
    void lock_deadWaiterInTheMiddle_nextWaiterGetsLockAfterItsPlaceLease() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        long leaseMillis = 1_000;
        DistributedLock holder = client(uri, leaseMillis).fairLock(name);
        DistributedLock first = client(uri, leaseMillis).fairLock(name);
        DistributedLock third = client(uri, leaseMillis).fairLock(name);
        holder.lock();
        Background<Boolean> firstWaiter = Background.start("first", () -> {
            first.lock();
            first.unlock();
            return true;
        });
        Await.until("first waiter queued", () -> admin.zcard(queueKey()) == 1);
        try (ChildJvm child = ChildJvm.start(FairWaiterMain.class, uri, prefix, name, Long.toString(leaseMillis))) {
            String clientId = child.awaitLine("WAITING", Duration.ofSeconds(60)).substring("WAITING ".length()).trim();
            Await.until("the child is queued second", () -> admin.zcard(queueKey()) == 2);
            Background<Boolean> thirdWaiter = Background.start("third", () -> {
                third.lock();
                third.unlock();
                return true;
            });
            Await.until("third waiter queued", () -> admin.zcard(queueKey()) == 3);
            assertTrue(admin.zrange(queueKey(), 1, 1).get(0).startsWith(clientId + ":"), "the child is second");
            child.kill();
            holder.unlock();
            assertTrue(firstWaiter.get());
            assertTrue(thirdWaiter.get(), "the waiter behind the dead one got the lock");
            assertEquals(0, admin.exists(queueKey()), "the dead waiter's place is gone");
        }
    }

    /**
     * A waiter whose place vanished (purged by another client while this one looked cut off) is
     * told so by the watchdog, takes a place again at the back with its next try, and from then on
     * has that place renewed like the first: it does not expire while the waiter sleeps, and the
     * release hands the lock to it.
     */
    @Test
    void lock_placePurgedWhileWaiting_requeuedPlaceIsRenewedAgain() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        DistributedLock holder = client(uri, 30_000).fairLock(name);
        DistributedLock waiter = client(uri, 600).fairLock(name);
        // A fixed lease far beyond the test: the waiter's own tries sleep that long, so only the
        // watchdog can move its place.
        holder.lock(10, TimeUnit.MINUTES);
        Background<Boolean> waiting = Background.start("waiter", () -> {
            waiter.lock();
            waiter.unlock();
            return true;
        });
        Await.until("the waiter queued", () -> admin.zcard(queueKey()) == 1);
        String owner = admin.zrange(queueKey(), 0, 0).get(0);
        double placed = placeOf(owner);
        Await.until("the waiter's place renewed", () -> renewedSince(owner, placed));

        // What another client's acquire does to a place it finds expired.
        admin.zrem(queueKey(), owner);
        admin.zrem(placesKey(), owner);
        Await.until("the waiter queued again", () -> placeOf(owner) != null);
        double requeued = placeOf(owner);
        Await.until("the new place renewed", () -> renewedSince(owner, requeued));

        holder.unlock();
        assertTrue(waiting.get(), "the release handed the lock to the waiter");
        assertEquals(0, admin.exists(queueKey(), placesKey()), "nobody left in line");
    }

    /** A waiter whose timed tryLock times out leaves the queue at once. */
    @Test
    void tryLock_timedOut_leavesQueueAtOnce() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        DistributedLock holder = client(uri, 30_000).fairLock(name);
        DistributedLock waiter = client(uri, 30_000).fairLock(name);
        holder.lock();
        assertFalse(waiter.tryLock(300, TimeUnit.MILLISECONDS));
        assertEquals(0, admin.zcard(queueKey()), "no place left behind");
        assertFalse(waiter.tryLock(0, TimeUnit.SECONDS), "tryLock(0) honours the holder");
        assertEquals(0, admin.zcard(queueKey()), "tryLock(0) leaves no place behind");
        holder.unlock();
    }

    /** A waiter interrupted in lockInterruptibly() leaves the queue at once, and the next waiter is served. */
    @Test
    void lockInterruptibly_interrupted_leavesQueueAtOnce() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        DistributedLock holder = client(uri, 30_000).fairLock(name);
        DistributedLock interrupted = client(uri, 30_000).fairLock(name);
        DistributedLock patient = client(uri, 30_000).fairLock(name);
        holder.lock();
        Background<Boolean> quitter = Background.start("quitter", () -> {
            try {
                interrupted.lockInterruptibly();
                interrupted.unlock();
                return false;
            } catch (InterruptedException e) {
                return true;
            }
        });
        Await.until("quitter queued", () -> admin.zcard(queueKey()) == 1);
        Background<Boolean> next = Background.start("patient", () -> {
            patient.lock();
            patient.unlock();
            return true;
        });
        Await.until("patient queued", () -> admin.zcard(queueKey()) == 2);
        Await.parked(quitter.thread());
        quitter.thread().interrupt();
        assertTrue(quitter.get(), "threw InterruptedException");
        assertEquals(1, admin.zcard(queueKey()), "the interrupted waiter left the queue");
        holder.unlock();
        assertTrue(next.get());
    }

    /**
     * tryLock() with no time barges ahead of queued waiters, as ReentrantLock(true).tryLock() does;
     * tryLock(0, unit) honours the queue. The queue is set up by hand: a waiter first in line while
     * the lock is free is otherwise only a moment in a race.
     */
    @Test
    void tryLock_untimedBargesButZeroTimeHonoursTheQueue() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        DistributedLock lock = client(uri, 30_000).fairLock(name);
        String placesKey = prefix + ":fairlock:{" + name + "}:places";
        admin.zadd(queueKey(), 1, "someone-else:1");
        admin.zadd(placesKey, 4_102_444_800_000.0, "someone-else:1"); // place leased until 2100
        admin.pexpire(queueKey(), 60_000);
        admin.pexpire(placesKey, 60_000);

        assertFalse(lock.tryLock(0, TimeUnit.SECONDS), "the first in line comes first");
        assertEquals(List.of("someone-else:1"), admin.zrange(queueKey(), 0, -1), "and left no place behind");
        assertTrue(lock.tryLock(), "an untimed tryLock barges");
        lock.unlock();
        admin.del(queueKey(), placesKey);
    }

    /* --------------- one waiter woken per release --------------- */

    /**
     * With 8 waiters in 2 clients, one release hands the lock to one waiter inside the release
     * script: one script call and one message in all, nobody else woken, 7 still queued; the new
     * holder's fencing token is above the old one's, and its unlock is accepted by Redis.
     */
    @Test
    void unlock_8Waiters_handsTheLockToExactlyOneInTheSameCall() throws Exception {
        RedisServer server = redis.startManaged();
        admin = opened.commands(server.uri());
        List<RedisSynchronizers> clients = List.of(client(server.uri(), 60_000), client(server.uri(), 60_000));
        DistributedLock holder = client(server.uri(), 60_000).fairLock(name);
        holder.lock();
        long holderToken = holder.fencingToken();
        CountDownLatch firstAcquired = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicLong nextToken = new AtomicLong();
        List<Background<Void>> waiters = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            DistributedLock lock = clients.get(w % 2).fairLock(name);
            waiters.add(Background.start("waiter-" + w, () -> {
                lock.lock();
                try {
                    nextToken.compareAndSet(0, lock.fencingToken());
                    firstAcquired.countDown();
                    release.await();
                } finally {
                    lock.unlock();
                }
                return null;
            }));
        }
        Await.until("8 waiters queued", () -> admin.zcard(queueKey()) == 8);
        for (Background<Void> waiter : waiters) {
            Await.until(waiter.thread().getName() + " sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        }
        admin.configResetstat();
        holder.unlock();
        assertTrue(firstAcquired.await(30, TimeUnit.SECONDS));
        String stats = admin.info("commandstats");
        assertEquals(1, RedisState.calls(stats, "evalsha"), "the release alone: the waiter does not ask again");
        assertEquals(1, RedisState.publishes(stats), "one message, to the waiter served");
        assertEquals(7L, admin.zcard(queueKey()), "the other 7 still wait in line");
        assertTrue(nextToken.get() > holderToken, "the handed-over hold has a newer token");
        release.countDown();
        for (Background<Void> waiter : waiters) {
            waiter.get();
        }
    }

    /* --------------- helpers --------------- */

    private String queueKey() {
        return prefix + ":fairlock:{" + name + "}:queue";
    }

    private String placesKey() {
        return prefix + ":fairlock:{" + name + "}:places";
    }

    /** The end of {@code owner}'s place lease, or null if it has none. */
    private Double placeOf(String owner) {
        return admin.zscore(placesKey(), owner);
    }

    /** Whether {@code owner}'s place now ends later than {@code endMs}: a watchdog tick renewed it. */
    private boolean renewedSince(String owner, double endMs) {
        Double end = placeOf(owner);
        return end != null && end > endMs;
    }

    private RedisSynchronizers client(String uri, long leaseMillis) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(Duration.ofMillis(leaseMillis)).build();
        opened.add(client);
        return client;
    }

}
