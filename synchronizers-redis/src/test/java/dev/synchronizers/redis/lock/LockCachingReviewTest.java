package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.topology.PubSubElsewhere;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Findings of an adversarial review of lock caching (docs/design/lock-caching.md; docs/semantics.md,
 * "Lock caching"): interleavings of a client's own threads, of the watchdog's verdicts and of other
 * clients' asks with a cache being taken or a block being reserved. Each test names its finding and
 * failed before its fix. Interleavings are forced with latches and the package-private hook
 * {@link RedisSynchronizers#onReservationAnsweredForTests}, and with a {@link FaultProxy} that holds
 * the replies of the caching client's command connection while its Pub/Sub connection goes direct.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockCachingReviewTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Far longer than any wait below: nothing in these tests may be settled by a lease running out or a renewal. */
    private static final Duration LONG_LEASE = Duration.ofSeconds(120);
    /** Bounds a wait that the fault makes long; only turns a hang into a failure. */
    private static final long PATIENCE_SECONDS = 30;

    private final Opened opened;
    private final String prefix;
    private final String name;

    LockCachingReviewTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /**
     * Finding: a reservation settled after its cache was lost ended the next cache. Thread A's
     * local take needs a new block; while its reservation is in flight the cache is lost (here a
     * force-unlock by the client itself) and thread B takes the lock in Redis as a new cache. When
     * A's answer came, it saw "not my base" and dropped the cache as lost, which was B's: given back
     * in Redis and unregistered, without telling B, who went on "holding" a lock that Redis no longer
     * had (two holders in silence: A's own tryLock() then took it in Redis as a plain hold). Now a
     * reservation settles only the cache it was made for.
     */
    @Test
    void reservation_answeredAfterTheCacheWasLostAndTakenAgain_leavesTheNewCacheAlone() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        RedisSynchronizers cachingClient = client(server.uri(), Duration.ofSeconds(5), true);
        RedisInternals.cacheBlockForTests(cachingClient, 1);
        DistributedLock lock = cachingClient.lock(name);
        lock.lock();   // the first block's one token
        lock.unlock();

        CountDownLatch reserved = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        pauseFirstReservation(cachingClient, reserved, proceed);
        Background<Boolean> a = Background.start("A", lock::tryLock);
        assertTrue(reserved.await(PATIENCE_SECONDS, TimeUnit.SECONDS), "A reserves a block");

        assertTrue(lock.forceUnlock(), "the cache is forced free: lost");
        CountDownLatch bLocked = new CountDownLatch(1);
        CountDownLatch bRelease = new CountDownLatch(1);
        Background<Void> b = Background.start("B", () -> {
            lock.lock();
            bLocked.countDown();
            bRelease.await();
            lock.unlock();
            return null;
        });
        assertTrue(bLocked.await(PATIENCE_SECONDS, TimeUnit.SECONDS), "B takes the lock as a new cache");
        String cacheOwner = Owner.cacheOf(cachingClient.clientId());
        String newBase = admin.hget(lockKey(), cacheOwner);

        proceed.countDown();
        assertFalse(a.get(), "A's tryLock() fails while B holds the lock");
        assertEquals(newBase, admin.hget(lockKey(), cacheOwner), "B's cache is still in Redis");
        bRelease.countDown();
        b.get();   // B's unlock() finds its hold intact
    }

    /**
     * Finding: a held cache whose reservation found it gone left local waiters asleep. A waiter
     * that finds the cache held sleeps until the holder's release wakes it (or a lease passes).
     * When the holder was a thread reserving a block and Redis answered that the cache was gone,
     * the cache was dropped and that thread went on to wait in Redis, behind the sleeper, without
     * waking it: the sleeper slept a whole lease (here 120 s) although the lock was free. Now a
     * reservation that ends the cache wakes the local line.
     */
    @Test
    void reservation_findingTheCacheGone_wakesTheThreadsWaitingLocally() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        RedisSynchronizers cachingClient = client(server.uri(), Duration.ofSeconds(5), true);
        RedisInternals.cacheBlockForTests(cachingClient, 1);
        DistributedLock lock = cachingClient.lock(name);
        lock.lock();   // the first block's one token
        lock.unlock();
        // Gone from Redis without the client knowing yet (expired, or forced with the ask message lost).
        admin.del(lockKey());

        CountDownLatch reserved = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        pauseFirstReservation(cachingClient, reserved, proceed);
        Background<Void> reserving = Background.start("reserving", () -> {
            lock.lock();
            lock.unlock();
            return null;
        });
        assertTrue(reserved.await(PATIENCE_SECONDS, TimeUnit.SECONDS), "a block is asked for, and refused");
        Background<Long> waiting = Background.start("waiting", () -> {
            lock.lock();
            try {
                return lock.fencingToken();
            } finally {
                lock.unlock();
            }
        });
        Await.until("the waiter sleeps behind the held cache",
                () -> LockSupport.getBlocker(waiting.thread()) instanceof WakeupDispatcher.Subscription);

        proceed.countDown();
        assertTrue(waiting.get() > 0, "the waiter gets the lock, not a lease later");
        reserving.get();
    }

    /**
     * Finding: an ask that arrived while the cache was being taken was forgotten. Another client's
     * try found the new cache in Redis and asked for it; the message reached the cacher before the
     * take's own reply, and the reply's "asked: no" (read before the ask) overwrote it. The holder's
     * unlock then kept the cache idle, and the asker waited for the next renewal (a third of the
     * lease) instead of getting the lock at that unlock. Now the take keeps an ask that came meanwhile.
     */
    @Test
    void ask_arrivingWhileTheCacheIsBeingTaken_isHonouredAtTheHoldersUnlock() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisClient split = opened.add(PubSubElsewhere.to(server.uri()));
        RedisSynchronizers cachingClient = opened.add(RedisSynchronizers.builder()
                .client(split, RedisURI.create(proxy.uri())).keyPrefix(prefix).lease(LONG_LEASE)
                .commandTimeout(Duration.ofSeconds(PATIENCE_SECONDS * 2)).lockCaching(true).build());
        DistributedLock cacher = cachingClient.lock(name);
        DistributedLock other = client(server.uri(), Duration.ofSeconds(5), false).lock(name);
        DistributedLock warm = cachingClient.lock(name + "-warm");
        warm.lock();   // the client listens for asks from now on
        warm.unlock();

        proxy.holdReplies();
        CountDownLatch release = new CountDownLatch(1);
        Background<Void> holder = Background.start("holder", () -> {
            cacher.lock();
            release.await();
            cacher.unlock();
            return null;
        });
        Await.until("the cache take ran in Redis", () -> admin.exists(lockKey()) == 1);
        assertFalse(other.tryLock(), "the other client finds the cache, and asks for it");
        Await.until("the ask reached the cacher while it takes the cache",
                () -> cacher.toString().contains("being taken, asked back"));
        proxy.pass();
        Await.until("the take is answered", () -> cacher.toString().contains("held"));

        release.countDown();
        holder.get();
        assertEquals(0L, admin.exists(lockKey()), "the holder's unlock gave the cache back to the asker");
        assertTrue(other.tryLock(), "the other client gets the lock");
        other.unlock();
    }

    /**
     * Finding: a thread that ended inside a cached hold left its client's waiting threads asleep
     * for good. The first local waiter sleeps while a neighbour holds the lock, until that
     * neighbour's release wakes it; the watchdog finds a thread that ends inside a hold in Redis
     * (and wakes the waiter), but a cached hold's lease is the cache's, with no thread to watch,
     * and the abandoned take was found only by a new arrival or an ask from another client. With
     * neither, the waiter slept in lease-long naps for ever. Now the watchdog's tick looks at the
     * threads of cached holds too.
     */
    @Test
    void take_whoseThreadEnds_isFoundAtTheNextTickAndTheLocalWaiterGetsTheLock() throws Exception {
        RedisServer server = redis.startManaged();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers cachingClient = opened.add(RedisSynchronizers.builder().uri(server.uri())
                .keyPrefix(prefix).lease(LONG_LEASE).lockCaching(true).lostHoldListener(lost::add).build());
        DistributedLock lock = cachingClient.lock(name);
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch end = new CountDownLatch(1);
        Background<Long> ending = Background.start("ends-holding", () -> {
            lock.lock();
            locked.countDown();
            end.await();
            return lock.fencingToken();
        });
        assertTrue(locked.await(PATIENCE_SECONDS, TimeUnit.SECONDS));
        Background<Long> waiting = Background.start("waiting", () -> {
            lock.lock();
            try {
                return lock.fencingToken();
            } finally {
                lock.unlock();
            }
        });
        Await.until("the waiter sleeps behind the cached hold",
                () -> LockSupport.getBlocker(waiting.thread()) instanceof WakeupDispatcher.Subscription);

        end.countDown();
        long abandonedToken = ending.get();
        ending.thread().join();
        RedisInternals.renewNow(cachingClient);   // the watchdog's tick, run now rather than a third of the lease later
        assertTrue(waiting.get() > abandonedToken, "the waiter gets the lock, with a token above the abandoned one");
        LostHold report = lost.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertEquals(LostHold.Cause.ABANDONED, report == null ? null : report.cause(), () -> "report " + report);
        assertEquals(abandonedToken, report.fencingToken());
    }

    /* --------------- helpers --------------- */

    private RedisSynchronizers client(String uri, Duration commandTimeout, boolean caching) {
        return opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).lease(LONG_LEASE)
                .commandTimeout(commandTimeout).lockCaching(caching).build());
    }

    private String lockKey() {
        return LockKeys.of(prefix, name).lock();
    }

    /** Makes the first reservation the client's Redis answers wait, once answered, until {@code proceed}. */
    private static void pauseFirstReservation(RedisSynchronizers client, CountDownLatch reserved, CountDownLatch proceed) {
        AtomicBoolean first = new AtomicBoolean(true);
        RedisInternals.onReservationAnsweredForTests(client, () -> {
            if (first.compareAndSet(true, false)) {
                reserved.countDown();
                try {
                    proceed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }
}
