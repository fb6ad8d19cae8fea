package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.child.ConditionWaiterMain;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Defects found in a review of {@code newCondition()}, each shown by a test. */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class RedisConditionReviewTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    RedisConditionReviewTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    private RedisSynchronizers client(String uri) {
        return opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(Duration.ofMillis(30_000)).build());
    }

    private String conditionKey(int index, String part) {
        return prefix + ":lock:{" + name + "}:cond:" + index + ":" + part;
    }

    /**
     * A waiter that is signalled and then interrupted before it has the lock again (the signaller
     * still holds it): Condition's javadoc lets it either return normally, its interrupt status
     * set (as ReentrantLock's condition does), or throw InterruptedException, but then the signal
     * must be redirected to another waiter. The signal taken up and InterruptedException thrown
     * swallows the signal: the other waiter sleeps on.
     */
    @Test
    void await_signalledThenInterruptedBeforeItHasTheLock_returnsNormallyOrPassesTheSignalOn() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        RedisSynchronizers client = client(uri);
        DistributedLock lock = client.lock(name);
        Condition condition = lock.newCondition();
        Background<String> first = Background.start("first-waiter", () -> {
            lock.lock();
            try {
                condition.await();
                return Thread.currentThread().isInterrupted() ? "returned, interrupt status set" : "returned";
            } catch (InterruptedException e) {
                return "threw InterruptedException";
            } finally {
                lock.unlock();
            }
        });
        Await.until("the first waiter waits", () -> admin.zcard(conditionKey(0, "queue")) == 1);
        Background<Boolean> second = Background.start("second-waiter", () -> {
            lock.lock();
            try {
                condition.await();
                return true;
            } finally {
                lock.unlock();
            }
        });
        Await.until("the second waiter waits behind it", () -> admin.zcard(conditionKey(0, "queue")) == 2);
        lock.lock();
        try {
            condition.signal();     // the oldest waiter: the first
            first.thread().interrupt();
        } finally {
            lock.unlock();
        }
        String outcome = first.get();
        if (outcome.equals("threw InterruptedException")) {
            assertTrue(second.get(), "the signal the first waiter did not return for passed on to the second");
        } else {
            assertEquals("returned, interrupt status set", outcome);
            lock.lock();
            try {
                condition.signal();
            } finally {
                lock.unlock();
            }
            assertTrue(second.get());
        }
    }

    /**
     * awaitNanos returns an estimate of the time left, so that the idiom of Condition's javadoc
     * ({@code nanos = awaitNanos(nanos)} until {@code nanos <= 0}) waits as long as it was asked
     * to. Asked for Long.MAX_VALUE and signalled at once, it must return nearly Long.MAX_VALUE:
     * returning 1 makes the idiom's next round time out at once.
     */
    @Test
    void awaitNanos_longMaxValueAndSignalled_returnsTheTimeLeftNotOne() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        RedisSynchronizers client = client(uri);
        DistributedLock lock = client.lock(name);
        Condition condition = lock.newCondition();
        Background<Long> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                return condition.awaitNanos(Long.MAX_VALUE);
            } finally {
                lock.unlock();
            }
        });
        Await.until("the waiter waits", () -> admin.zcard(conditionKey(0, "queue")) == 1);
        lock.lock();
        try {
            condition.signal();
        } finally {
            lock.unlock();
        }
        long left = waiter.get();
        assertTrue(left > Long.MAX_VALUE / 2, "awaitNanos(Long.MAX_VALUE), signalled, returned " + left);
    }

    /**
     * A waiter whose process died leaves when its place's lease runs out (semantics.md, "Dead
     * waiters"): while a live waiter keeps the condition's keys alive and nobody signals, the dead
     * waiter's entries must not stay in the queue and places for ever, or they pile up with every
     * waiter that dies.
     */
    @Test
    void deadWaiter_placeRanOut_isRemovedWhileALiveWaiterRenews() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        RedisSynchronizers live = opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(Duration.ofMillis(3_000)).build());
        try (ChildJvm child = ChildJvm.start(ConditionWaiterMain.class, uri, prefix, name, "1000")) {
            child.awaitLine("WAITING", Duration.ofSeconds(60));
            Await.until("the child waits", () -> admin.zcard(conditionKey(0, "queue")) == 1);
            child.kill();
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
            Await.until("the live waiter waits", () -> admin.zcard(conditionKey(0, "queue")) == 2);
            String dead = admin.zrange(conditionKey(0, "queue"), 0, 0).get(0);
            Await.until("the dead waiter's place ran out", () -> {
                Double end = admin.zscore(conditionKey(0, "places"), dead);
                List<String> time = admin.time();
                long nowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
                return end == null || end < nowMs;
            });
            Await.until("the dead waiter left the queue and the places (the live one renews every second)",
                    () -> admin.zscore(conditionKey(0, "queue"), dead) == null
                            && admin.zscore(conditionKey(0, "places"), dead) == null);
            assertEquals(1, admin.zcard(conditionKey(0, "queue")), "the live waiter still waits");
            lock.lock();
            try {
                condition.signal();
            } finally {
                lock.unlock();
            }
            assertTrue(waiter.get());
        }
    }

    /** A client closed while a thread awaits: the thread wakes and throws IllegalStateException, it does not sleep on. */
    @Test
    void await_clientClosedMeanwhile_throwsIllegalStateRatherThanSleeping() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        RedisSynchronizers client = client(uri);
        DistributedLock lock = client.lock(name);
        Condition condition = lock.newCondition();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            lock.lock();
            condition.await();
            return true;
        });
        Await.until("the waiter waits", () -> admin.zcard(conditionKey(0, "queue")) == 1);
        client.close();
        assertInstanceOf(IllegalStateException.class, waiter.failure());
    }

    /**
     * A waiter that took up its signal and then cannot take the lock again (its client is closed
     * while the signaller still holds the lock) throws rather than return: the signal it took up
     * must then pass on to the next waiter, or it is swallowed by a departed waiter.
     */
    @Test
    void await_signalledThenClientClosedBeforeTheRetake_signalPassesOn() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        RedisSynchronizers closing = client(uri);
        DistributedLock firstLock = closing.lock(name);
        Condition firstCondition = firstLock.newCondition();
        Background<Boolean> first = Background.start("first-waiter", () -> {
            firstLock.lock();
            firstCondition.await();
            return true;
        });
        Await.until("the first waiter waits", () -> admin.zcard(conditionKey(0, "queue")) == 1);
        DistributedLock secondLock = client(uri).lock(name);
        Condition secondCondition = secondLock.newCondition();
        Background<Boolean> second = Background.start("second-waiter", () -> {
            secondLock.lock();
            try {
                secondCondition.await();
                return true;
            } finally {
                secondLock.unlock();
            }
        });
        Await.until("the second waiter waits behind it", () -> admin.zcard(conditionKey(0, "queue")) == 2);
        DistributedLock lock = client(uri).lock(name);
        Condition condition = lock.newCondition();
        lock.lock();
        try {
            condition.signal();     // the oldest waiter: the first
            // Woken or about to be: it cannot take the lock again before this thread lets go of it.
            Await.until("the first waiter is signalled", () -> admin.zcard(conditionKey(0, "signalled")) == 1);
            closing.close();
            assertInstanceOf(IllegalStateException.class, first.failure(), "the first waiter could not take the lock again");
        } finally {
            lock.unlock();
        }
        assertTrue(second.get(), "the signal the first waiter did not return for passed on to the second");
    }

    /**
     * One signal() wakes one waiter, however long its signaller keeps the lock afterwards (issue 31,
     * H1): a producer that does I/O under the lock for a few leases must not turn signal() into
     * signalAll(). The signalled waiter is alive and renews its place; it takes the signal up once it
     * has the lock again, and until then its signal must not run out and pass on to the others.
     */
    @Test
    void signal_signallerKeepsTheLockForThreeLeases_wakesOneWaiterNotEvery() throws Exception {
        String uri = redis.server().uri();
        RedisCommands<String, String> admin = opened.commands(uri);
        Duration lease = Duration.ofMillis(1_500);
        RedisSynchronizers waiting = opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(lease).build());
        DistributedLock waiterLock = waiting.lock(name);
        Condition waiterCondition = waiterLock.newCondition();
        AtomicInteger returned = new AtomicInteger();
        List<Background<Boolean>> waiters = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            waiters.add(Background.start("waiter-" + i, () -> {
                waiterLock.lock();
                try {
                    boolean signalled = waiterCondition.await(10, TimeUnit.MINUTES);
                    returned.incrementAndGet();
                    return signalled;
                } finally {
                    waiterLock.unlock();
                }
            }));
            int registered = i;
            Await.until(registered + " waiters wait", () -> admin.zcard(conditionKey(0, "queue")) == registered);
        }
        DistributedLock signallerLock = client(uri).lock(name);
        Condition signaller = signallerLock.newCondition();
        signallerLock.lock();
        try {
            signaller.signal();
            // The scenario, not a synchronisation: the signaller works under the lock for three of
            // the waiters' leases before it lets go.
            Thread.sleep(3 * lease.toMillis());
        } finally {
            signallerLock.unlock();
        }
        Await.until("the signalled waiter returned and let go of the lock",
                () -> waiters.stream().anyMatch(w -> !w.thread().isAlive()));
        assertEquals(2, admin.zcard(conditionKey(0, "queue")), "the two others still wait, unsignalled");
        assertEquals(0, admin.zcard(conditionKey(0, "signalled")), "no signal is left over to wake them");
        assertEquals(1, returned.get(), "one await returned for one signal()");
        assertTrue(waiters.stream().filter(w -> !w.thread().isAlive()).findFirst().orElseThrow().get(),
                "the signalled await returned true");
        signallerLock.lock();
        try {
            signaller.signalAll();
        } finally {
            signallerLock.unlock();
        }
        for (Background<Boolean> waiter : waiters) {
            assertTrue(waiter.get(), "woken by signalAll()");
        }
        assertEquals(3, returned.get());
    }
}
