package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.child.BoundedBufferMain;
import dev.synchronizers.redis.child.ConditionWaiterMain;
import dev.synchronizers.redis.child.SharedBuffer;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What only the implementation of {@code newCondition()} promises: a dead waiter's signal passes on,
 * conditions are shared by index, and the {@code BoundedBuffer} of {@link Condition}'s javadoc works
 * across two JVMs. The {@code Condition} contract itself: DistributedConditionContractTest.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class RedisConditionTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    RedisConditionTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    private RedisSynchronizers client(String uri, long leaseMillis) {
        return opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(Duration.ofMillis(leaseMillis)).build());
    }

    private String conditionKey(int index, String part) {
        return prefix + ":lock:{" + name + "}:cond:" + index + ":" + part;
    }

    /* --------------- dead waiters --------------- */

    /**
     * A waiter's JVM killed (SIGKILL) while it awaits, and then chosen by signal() (it is the oldest
     * waiter, its place not yet run out): the signal passes on to the live waiter once the dead
     * waiter's lease is over, without a second signal. No signal is swallowed by a dead waiter.
     */
    @Test
    void signal_choosesAKilledWaiter_passesOnToTheLiveWaiterWithinALease() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        // Long enough that the dead waiter's place surely outlives the few commands up to the signal.
        long childLease = 6_000;
        RedisSynchronizers live = client(uri, 1_500);
        RedisSynchronizers signaller = client(uri, 30_000);
        try (ChildJvm child = ChildJvm.start(ConditionWaiterMain.class, uri, prefix, name, Long.toString(childLease))) {
            String childId = child.awaitLine("WAITING", Duration.ofSeconds(60)).substring("WAITING ".length()).trim();
            Await.until("the child waits", () -> admin.zcard(conditionKey(0, "queue")) == 1);
            DistributedLock liveLock = live.lock(name);
            Condition liveCondition = liveLock.newCondition();
            Background<Boolean> waiter = Background.start("live-waiter", () -> {
                liveLock.lock();
                try {
                    liveCondition.await();
                    return liveLock.isHeldByCurrentThread();
                } finally {
                    liveLock.unlock();
                }
            });
            Await.until("the live waiter waits behind it", () -> admin.zcard(conditionKey(0, "queue")) == 2);
            child.kill();
            DistributedLock lock = signaller.lock(name);
            Condition condition = lock.newCondition();
            lock.lock();
            try {
                condition.signal();
            } finally {
                lock.unlock();
            }
            List<String> signalled = admin.zrange(conditionKey(0, "signalled"), 0, -1);
            assertEquals(1, signalled.size(), "one waiter signalled: " + signalled);
            assertTrue(signalled.get(0).startsWith(childId + ":"), "the signal chose the dead waiter: " + signalled);
            assertEquals(1, admin.zcard(conditionKey(0, "queue")), "the live waiter still waits");
            assertTrue(waiter.get(), "the live waiter was woken, and holds the lock");
            assertFalse(child.output().contains("SIGNALLED"));
        }
        assertEquals(0, admin.exists(conditionKey(0, "queue"), conditionKey(0, "signalled")),
                "nothing left of either waiter");
    }

    /** A waiter that died leaves the condition when its place's lease runs out: a later signal goes to a live waiter at once. */
    @Test
    void signal_afterAKilledWaitersLeaseRanOut_goesStraightToTheLiveWaiter() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        long childLease = 1_000;
        RedisSynchronizers live = client(uri, 30_000);
        try (ChildJvm child = ChildJvm.start(ConditionWaiterMain.class, uri, prefix, name, Long.toString(childLease))) {
            child.awaitLine("WAITING", Duration.ofSeconds(60));
            Await.until("the child waits", () -> admin.zcard(conditionKey(0, "queue")) == 1);
            child.kill();
            String place = admin.zrange(conditionKey(0, "places"), 0, 0).get(0);
            // The place's end, by the server's clock: wait until the server's time is past it.
            Await.until("the dead waiter's place ran out", () -> {
                Double end = admin.zscore(conditionKey(0, "places"), place);
                List<String> time = admin.time();
                long nowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
                return end == null || end < nowMs;
            });
            DistributedLock lock = live.lock(name);
            Condition condition = lock.newCondition();
            Background<Boolean> waiter = Background.start("live-waiter", () -> {
                lock.lock();
                try {
                    condition.await();
                    return true;
                } finally {
                    lock.unlock();
                }
            });
            Await.until("the live waiter waits", () -> admin.zrange(conditionKey(0, "queue"), 0, -1).stream()
                    .anyMatch(waiting -> !waiting.equals(place)));
            lock.lock();
            try {
                condition.signal();
            } finally {
                lock.unlock();
            }
            assertTrue(waiter.get());
            assertEquals(0, admin.exists(conditionKey(0, "signalled")), "the dead waiter was never signalled");
        }
    }

    /* --------------- identity --------------- */

    /**
     * Conditions are identified by the lock and their index in creation order: the second condition
     * made in one client is the second made in another, not the first.
     */
    @Test
    void newCondition_secondInEachClient_isTheSameConditionAndNotTheFirst() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        DistributedLock a = client(uri, 30_000).lock(name);
        DistributedLock b = client(uri, 30_000).lock(name);
        Condition firstInA = a.newCondition();
        Condition secondInA = a.newCondition();
        Condition firstInB = b.newCondition();
        Condition secondInB = b.newCondition();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            a.lock();
            try {
                secondInA.await();
                return true;
            } finally {
                a.unlock();
            }
        });
        Await.until("it waits on the second", () -> admin.zcard(conditionKey(1, "queue")) == 1);
        b.lock();
        try {
            firstInB.signalAll();
            assertEquals(1, admin.zcard(conditionKey(1, "queue")), "the first's signal did not reach it");
            secondInB.signal();
        } finally {
            b.unlock();
        }
        assertTrue(waiter.get());
        assertNotNull(firstInA);
    }

    /* --------------- the bounded buffer --------------- */

    /**
     * The {@code BoundedBuffer} with its producer and consumer in one client: the lock goes back and
     * forth between two threads of one JVM, by local hand-overs and, after a streak of them, through
     * Redis's line with a grant message. Every item is taken once and no hold is lost. Before the
     * fix, a grant message that reached a later wait of its thread (after the thread had held and
     * let go of what it granted) was taken for a hold: that thread worked beside the real holder,
     * and its unlock() threw LostHoldException within the first few hundred items.
     */
    @Test
    void boundedBuffer_producerAndConsumerInOneClient_everyItemTakenOnceAndNoHoldLost() throws Exception {
        String uri = redis.server().uri();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lostHoldListener(lost::add).build());
        SharedBuffer buffer = new SharedBuffer(client, opened.commands(uri), prefix, name, 8);
        int items = 3_000;
        BitSet taken = CompletableFuture.supplyAsync(() -> {
            try {
                return SharedBuffer.run(buffer, 0, items);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get(5, TimeUnit.MINUTES);
        assertEquals(items, taken.cardinality());
        assertEquals(items, taken.nextClearBit(0), "every item 0.." + (items - 1) + " taken");
        assertEquals(List.of(), List.copyOf(lost), "no hold lost");
    }

    /**
     * The {@code BoundedBuffer} of {@link Condition}'s javadoc over a Redis list of 8, with a
     * producer and a consumer in this JVM and another pair in a child JVM (two clients): 10,000
     * items, every one taken exactly once, and both sides finish (no deadlock).
     */
    @Test
    void boundedBuffer_producersAndConsumersInTwoJvms_everyItemTakenOnce() throws Exception {
        String uri = redis.server().uri();
        int capacity = 8;
        int half = 5_000;
        RedisSynchronizers client = client(uri, 30_000);
        RedisCommands<String, String> plain = opened.commands(uri);
        SharedBuffer buffer = new SharedBuffer(client, plain, prefix, name, capacity);
        try (ChildJvm child = ChildJvm.start(BoundedBufferMain.class, uri, prefix, name, Integer.toString(capacity),
                Integer.toString(half), Integer.toString(half))) {
            child.awaitLine("READY", Duration.ofSeconds(60));
            CompletableFuture<BitSet> here = CompletableFuture.supplyAsync(() -> {
                try {
                    return SharedBuffer.run(buffer, 0, half);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            BitSet takenHere = here.get(10, TimeUnit.MINUTES);
            String line = child.awaitLine("TAKEN", Duration.ofMinutes(10));
            BitSet takenThere = SharedBuffer.fromHex(line.substring("TAKEN ".length()).trim());
            assertEquals(half, takenHere.cardinality());
            assertEquals(half, takenThere.cardinality());
            assertFalse(takenHere.intersects(takenThere), "an item taken in both JVMs");
            BitSet all = (BitSet) takenHere.clone();
            all.or(takenThere);
            assertEquals(2 * half, all.cardinality());
            assertEquals(2 * half, all.nextClearBit(0), "every item 0..9999 taken");
            assertEquals(0, plain.llen(prefix + ":buffer:{" + name + "}"), "the buffer is empty");
        }
    }
}
