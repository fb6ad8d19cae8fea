package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
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
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The lock when a reply is lost or late, so that the caller cannot know what its call did (an
 * unknown outcome): every state change has a follow-up that settles it, for a queueing first try, a
 * leave, an acquire in flight when the client closes, an acquire whose reply was lost, and a
 * hand-over in doubt. Holds that end without {@code unlock()}: {@code LockLeaseTest}.
 *
 * <p>"Ran, reply late" is made deterministic with {@code CLIENT PAUSE} on a server of the test's
 * own: a command sent during the pause runs when it ends, after the sender's short command timeout
 * has expired, and before any later command of the same connection.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockUnknownOutcomesTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Far longer than any wait in these tests: a hold or place left behind would outlast them. */
    private static final Duration LONG_LEASE = Duration.ofSeconds(60);

    private final Opened opened;
    private final String prefix;
    private final String name;

    LockUnknownOutcomesTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /* --------------- a queueing first try whose reply is late --------------- */

    /**
     * A fair waiter whose first try ran but whose reply came too late leaves the queue again: the
     * holder's release does not hand the lock to that phantom, and a third client takes it at once.
     */
    @Test
    void fairTryLock_firstTryReplyLate_leavesTheQueueSoTheNextReleaseServesOthers() throws Exception {
        firstTryReplyLate(client -> client.fairLock(name));
    }

    /** As for the fair lock: a writer whose queueing first try answered late leaves the writers' queue. */
    @Test
    void writeTryLock_firstTryReplyLate_leavesTheQueueSoTheNextReleaseServesOthers() throws Exception {
        firstTryReplyLate(client -> client.readWriteLock(name).writeLock());
    }

    private void firstTryReplyLate(Function<RedisSynchronizers, DistributedLock> lockOf) throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        DistributedLock holder = lockOf.apply(client(server.uri(), Duration.ofSeconds(5)));
        DistributedLock late = lockOf.apply(client(server.uri(), Duration.ofMillis(300)));
        DistributedLock third = lockOf.apply(client(server.uri(), Duration.ofSeconds(5)));
        holder.lock();

        admin.clientPause(1500);
        assertThrows(SynchronizerUnavailableException.class, () -> late.tryLock(30, TimeUnit.SECONDS));
        awaitAnswers(late);
        holder.unlock();

        assertTrue(third.tryLock(10, TimeUnit.SECONDS), "the lock went to the phantom waiter, for its place's lease");
        third.unlock();
    }

    /**
     * A leave that could not reach Redis is retried by the watchdog; if the same thread has taken
     * the lock meanwhile, the retry must not end that new hold (a fair leave gives back a lock
     * handed to its owner, and the owner string is the same thread's).
     */
    @Test
    void fairTryLock_retriedLeaveAfterTheThreadTookTheLock_leavesTheNewHoldAlone() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        DistributedLock holder = client(server.uri(), Duration.ofSeconds(5)).fairLock(name);
        RedisSynchronizers lateClient = client(server.uri(), Duration.ofMillis(300));
        DistributedLock late = lateClient.fairLock(name);
        holder.lock();

        admin.clientPause(1500);
        assertThrows(SynchronizerUnavailableException.class, () -> late.tryLock(30, TimeUnit.SECONDS));
        awaitAnswers(late);
        holder.unlock();
        assertTrue(late.tryLock(10, TimeUnit.SECONDS), "the thread takes the lock afresh");

        RedisInternals.renewNow(lateClient);
        RedisInternals.renewNow(lateClient);
        assertTrue(late.isHeldByCurrentThread(), "the retried leave ended the thread's new hold");
        late.unlock();
    }

    /* --------------- close() while an attempt is in flight --------------- */

    /**
     * The client is closed while a thread's lock() has its acquire in Redis and waits for the
     * reply: the thread fails with IllegalStateException, as RedisSynchronizers.close() says for
     * waiters, not with SynchronizerUnavailableException as if Redis could not be reached.
     */
    @Test
    void lock_clientClosedWhileTheAcquireIsInFlight_failsWithIllegalState() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers client = client(proxy.uri(), Duration.ofSeconds(20));
        DistributedLock lock = client.lock(name);
        proxy.holdReplies();
        Background<Void> caller = Background.start("caller", () -> {
            lock.lock();
            return null;
        });
        Await.until("the acquire ran in Redis", () -> admin.exists(LockKeys.of(prefix, name).lock()) == 1);

        client.close();

        Throwable failure = caller.failure();
        assertInstanceOf(IllegalStateException.class, failure, "the caller failed with " + failure);
        assertTrue(failure.getMessage().contains("closed"), "the client's own exception: " + failure);
    }

    /* --------------- an acquire that ran but whose reply was lost --------------- */

    /**
     * A thread's try ran in Redis but its reply was lost with its connection: the thread holds
     * the lock there without knowing it (an untimed tryLock() leaves no trace it could take back).
     * A neighbour then finds the lock taken and waits first in the local line. The thread's next
     * lock() must not queue behind that neighbour (who waits for the thread's own hold, for a whole
     * lease): it tries first, finds itself the owner, and gets the lock at once. Before, it waited
     * out the 60 s lease.
     */
    @Test
    void lock_afterAnAcquireWhoseReplyWasLost_threadTriesBeforeQueueingBehindANeighbour() throws Exception {
        RedisServer server = ownServer();
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        DistributedLock lock = client(proxy.uri(), Duration.ofSeconds(2)).lock(name);

        proxy.dropReplies(1, "EVALSHA");
        CountDownLatch neighbourWaits = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<Throwable> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();
        Background<Boolean> thread = Background.start("T", () -> {
            try {
                lock.tryLock();
                return false;   // the reply was meant to be lost
            } catch (SynchronizerUnavailableException e) {
                firstFailure.set(e);
            }
            neighbourWaits.await();
            boolean got = lock.tryLock(10, TimeUnit.SECONDS);
            if (got) {
                lock.unlock();
            }
            return got;
        });
        Await.until("the acquire's reply is dropped", () -> proxy.droppedReplies() == 1);
        proxy.cutAll();
        Await.until("the thread learns its acquire went unanswered", () -> firstFailure.get() != null);
        awaitAnswers(lock);
        assertTrue(lock.isLocked(), "the acquire ran in Redis: the thread holds the lock there");
        Background<Void> neighbour = Background.start("neighbour", () -> {
            lock.lock();
            lock.unlock();
            return null;
        });
        Await.until("the neighbour waits first in line", () -> RedisState.sleepsOnWakeup(neighbour.thread()));
        neighbourWaits.countDown();

        assertTrue(thread.get(), "the thread waited behind a neighbour who waited for the thread's own hold");
        neighbour.get();
    }

    /**
     * A lock() whose first try took the lock in Redis but whose reply was lost: that try would
     * have put the waiter in line had it failed, so the waiter that stops leaves the line, and the
     * leave gives back what the try took. The lock is free at once, not held for a whole lease by
     * a thread that never learnt it had it.
     */
    @Test
    void lock_firstTryTookItButItsReplyWasLost_theWaiterThatStopsGivesItBack() throws Exception {
        RedisServer server = ownServer();
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        DistributedLock lock = client(proxy.uri(), Duration.ofSeconds(2)).lock(name);

        proxy.dropReplies(1, "EVALSHA");
        Background<Boolean> thread = Background.start("T", () -> {
            try {
                lock.lock();
                return true;
            } catch (SynchronizerUnavailableException e) {
                return false;
            }
        });
        Await.until("the acquire's reply is dropped", () -> proxy.droppedReplies() == 1);
        proxy.cutAll();
        assertFalse(thread.get(), "the caller learns its acquire went unanswered");
        awaitAnswers(lock);
        Await.until("the waiter's leave gives back what its try took", () -> !lock.isLocked());
        assertTrue(lock.tryLock(), "the lock is free for anyone, long before its 60 s lease");
        lock.unlock();
    }

    /* --------------- a non-fair hand-over whose reply is late --------------- */

    /**
     * A neighbour waiting in {@code tryLock(timeout)} is reserved for a hand-over whose reply comes
     * too late, and its time runs out meanwhile: it returns false at once when the hand-over fails
     * (no try of its own past its deadline, which would fail too while Redis is stalled), and gives
     * back what the hand-over gave it once that runs, so another client takes the lock at once.
     */
    @Test
    void tryLock_timeRunsOutWhileAHandOverToItIsInDoubt_returnsFalseAndGivesTheLockBack() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        DistributedLock lock = client(server.uri(), Duration.ofSeconds(4)).lock(name);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Background<Void> holder = Background.start("holder", () -> {
            lock.lock();
            holding.countDown();
            release.await();
            lock.unlock();
            return null;
        });
        holding.await();
        Background<Boolean> waiter = Background.start("waiter", () -> lock.tryLock(3, TimeUnit.SECONDS));
        Await.until("the waiter sleeps", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        admin.clientPause(9000);
        release.countDown();
        Await.until("the unlock hands over", () -> inMethod(holder.thread(), "handOver"));
        assertTrue(waiter.thread().isAlive(), "precondition: the waiter's time has not run out yet");

        assertFalse(waiter.get(), "the waiter's time ran out");
        assertInstanceOf(SynchronizerUnavailableException.class, holder.failure(), "the hand-over's reply was late");
        awaitAnswers(lock);
        DistributedLock third = client(server.uri(), Duration.ofSeconds(5)).lock(name);
        assertTrue(third.tryLock(10, TimeUnit.SECONDS), "the lock was left with the waiter that gave up");
        third.unlock();
    }

    /**
     * A neighbour asleep in {@code lockInterruptibly()} is reserved for a hand-over whose reply comes
     * too late, and is interrupted meanwhile: it throws InterruptedException, and gives back what
     * the hand-over gave it once that runs.
     */
    @Test
    void lockInterruptibly_interruptedWhileAHandOverToItIsInDoubt_givesTheLockBack() throws Exception {
        RedisServer server = ownServer();
        RedisCommands<String, String> admin = opened.commands(server.uri());
        DistributedLock lock = client(server.uri(), Duration.ofMillis(500)).lock(name);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Background<Void> holder = Background.start("holder", () -> {
            lock.lock();
            holding.countDown();
            release.await();
            lock.unlock();
            return null;
        });
        holding.await();
        Background<Void> waiter = Background.start("waiter", () -> {
            lock.lockInterruptibly();
            lock.unlock();
            return null;
        });
        Await.until("the waiter sleeps", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        admin.clientPause(3000);
        release.countDown();
        Await.until("the unlock hands over", () -> inMethod(holder.thread(), "handOver"));
        waiter.thread().interrupt();

        assertInstanceOf(InterruptedException.class, waiter.failure());
        assertInstanceOf(SynchronizerUnavailableException.class, holder.failure(), "the hand-over's reply was late");
        awaitAnswers(lock);
        DistributedLock third = client(server.uri(), Duration.ofSeconds(5)).lock(name);
        assertTrue(third.tryLock(10, TimeUnit.SECONDS), "the lock was left with the waiter that gave up");
        third.unlock();
    }

    /**
     * A neighbour is reserved for a hand-over while its subscription is being made, and the
     * subscription then fails (its Pub/Sub server is stopped): the hand-over is honoured, so the
     * neighbour returns holding the lock instead of failing and leaving it held by nobody.
     */
    @Test
    void lock_subscribeFailsWhileReservedForAHandOver_takesWhatItWasHanded() throws Exception {
        RedisServer server = ownServer();
        RedisServer pubSubServer = ownServer();
        RedisClient split = new PubSubElsewhere(opened.add(new Resources()).resources, RedisURI.create(pubSubServer.uri()));
        opened.add(split::shutdown);
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().client(split, RedisURI.create(server.uri()))
                .keyPrefix(prefix).lease(LONG_LEASE).commandTimeout(Duration.ofSeconds(2)).build());
        DistributedLock lock = client.lock(name);
        lock.lock();
        pubSubServer.pause();
        try {
            Background<Boolean> waiter = Background.start("waiter", () -> {
                try {
                    lock.lock();
                } catch (SynchronizerUnavailableException e) {
                    return false;
                }
                lock.unlock();
                return true;
            });
            Await.until("the waiter subscribes", () -> inMethod(waiter.thread(), "subscribe"));
            lock.unlock();

            assertTrue(waiter.get(), "the waiter failed though the lock had been handed to it");
        } finally {
            pubSubServer.resume();
        }
        DistributedLock third = client(server.uri(), Duration.ofSeconds(5)).lock(name);
        assertTrue(third.tryLock(10, TimeUnit.SECONDS), "the lock was left with the waiter that failed");
        third.unlock();
    }

    /* --------------- helpers --------------- */

    /**
     * A server of this test alone, since a pause stalls every client of it. Its script cache is
     * filled first: a command sent during a pause outlives its timeout, after which the client no
     * longer answers a NOSCRIPT by sending the script's text.
     */
    private RedisServer ownServer() {
        RedisServer server = opened.add(redis.startManaged());
        RedisCommands<String, String> admin = opened.commands(server.uri());
        for (Script script : Script.values()) {
            admin.scriptLoad(ScriptRegistry.text(script));
        }
        return server;
    }

    private RedisSynchronizers client(String uri, Duration commandTimeout) {
        return opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).lease(LONG_LEASE)
                .commandTimeout(commandTimeout).build());
    }

    /**
     * Waits until the lock's client answers again. Commands of one connection run in order, so by
     * then every command it sent before, late or not, has run.
     */
    private static void awaitAnswers(DistributedLock lock) {
        Await.until("the client answers again", () -> {
            try {
                lock.isLocked();
                return true;
            } catch (SynchronizerException e) {
                return false;
            }
        });
    }

    private static boolean inMethod(Thread thread, String method) {
        return Arrays.stream(thread.getStackTrace()).anyMatch(frame -> frame.getMethodName().equals(method));
    }

    /** A Lettuce client whose Pub/Sub connections go to another server, so they can fail alone. */
    private static final class PubSubElsewhere extends RedisClient {
        private final RedisURI pubSub;

        PubSubElsewhere(ClientResources resources, RedisURI pubSub) {
            super(resources, pubSub);
            this.pubSub = pubSub;
        }

        @Override
        public <K, V> StatefulRedisPubSubConnection<K, V> connectPubSub(RedisCodec<K, V> codec, RedisURI uri) {
            return super.connectPubSub(codec, pubSub);
        }
    }

    /** Client resources the test shuts down. */
    private static final class Resources implements AutoCloseable {
        final ClientResources resources = DefaultClientResources.create();

        @Override
        public void close() {
            resources.shutdown();
        }
    }
}
