package dev.synchronizers.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Kind;
import dev.synchronizers.fixture.LeakCheck;
import dev.synchronizers.fixture.SpecContext;
import dev.synchronizers.fixture.SynchronizerSpec;
import dev.synchronizers.fixture.Topology;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * The contract of {@code newCondition()}: {@link Condition} as its javadoc states it, across threads
 * and across two clients (A and B, as two processes as far as ownership goes), for every kind of lock
 * that has conditions. Each test names the sentence it checks. What only the implementation
 * promises (dead waiters, lost replies): {@code RedisConditionTest}, {@code ConditionUnknownOutcomesTest}.
 */
@Tag("redis")
@ExtendWith(LeakCheck.class)
class DistributedConditionContractTest {

    /* --------------- newCondition --------------- */

    /** newCondition() on a read lock: "UnsupportedOperationException", as ReentrantReadWriteLock.ReadLock. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.READ_LOCK, skipOn = Topology.REDLOCK)
    void newCondition_readLock_throwsUnsupported(DistributedLock lock, SpecContext context) {
        assertThrows(UnsupportedOperationException.class, lock::newCondition);
    }

    /** newCondition(String): a read lock has none either; a null or empty name is refused first. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.READ_LOCK, skipOn = Topology.REDLOCK)
    void newConditionNamed_readLock_throwsUnsupported(DistributedLock lock, SpecContext context) {
        assertThrows(UnsupportedOperationException.class, () -> lock.newCondition("ready"));
        assertThrows(NullPointerException.class, () -> lock.newCondition(null));
        assertThrows(IllegalArgumentException.class, () -> lock.newCondition(""));
    }

    /**
     * newCondition(String): the lock and the name identify the condition, however often and in
     * whichever order it is made; it is not any condition made by index.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void newConditionNamed_sameNameInTwoClients_isOneConditionApartFromTheIndexed(DistributedLock lock,
            SpecContext context) throws Exception {
        Condition readyInA = lock.newCondition("ready");
        DistributedLock inB = context.lockInOtherClient();
        Condition indexedInB = inB.newCondition();
        inB.newCondition("other");
        Condition readyInB = inB.newCondition("ready");
        Background<Boolean> waiter = awaiting("waiter", lock, readyInA);
        Await.until("it waits", () -> context.conditionWaiters("n=ready") == 1);
        signal(inB, indexedInB, true);
        assertEquals(1, context.conditionWaiters("n=ready"), "not the indexed one");
        signal(inB, readyInB, false);
        assertTrue(waiter.get());
        assertThrows(NullPointerException.class, () -> lock.newCondition(null));
        assertThrows(IllegalArgumentException.class, () -> lock.newCondition(""));
    }

    /* --------------- IllegalMonitorStateException --------------- */

    /** await(), signal(), signalAll(): "IllegalMonitorStateException if the lock is not held"; nothing written. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void everyMethod_lockNotHeld_throwsIllegalMonitorStateAndWritesNothing(DistributedLock lock, SpecContext context) {
        Condition condition = lock.newCondition();
        assertThrows(IllegalMonitorStateException.class, condition::await);
        assertThrows(IllegalMonitorStateException.class, condition::awaitUninterruptibly);
        assertThrows(IllegalMonitorStateException.class, () -> condition.awaitNanos(1_000_000));
        assertThrows(IllegalMonitorStateException.class, () -> condition.await(1, TimeUnit.SECONDS));
        assertThrows(IllegalMonitorStateException.class, () -> condition.awaitUntil(new Date()));
        assertThrows(IllegalMonitorStateException.class, condition::signal);
        assertThrows(IllegalMonitorStateException.class, condition::signalAll);
        assertTrue(context.keys().isEmpty(), "nothing written: " + context.keys());
    }

    /** A thread of client B does not hold client A's hold: B's signal() throws while A holds the lock. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void signal_lockHeldByAnotherClient_throwsIllegalMonitorState(DistributedLock lock, SpecContext context) {
        Condition other = context.lockInOtherClient().newCondition();
        lock.lock();
        try {
            assertThrows(IllegalMonitorStateException.class, other::signal);
        } finally {
            lock.unlock();
        }
    }

    /* --------------- await releases and re-takes --------------- */

    /**
     * await(): "The lock associated with this Condition is atomically released" (every reentrant
     * level: client B takes the lock while A awaits) and "the current thread is guaranteed to hold
     * this lock" again on return, with its hold count.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void await_heldThreeDeep_releasesCompletelyAndRetakesWithTheSameCount(DistributedLock lock, SpecContext context)
            throws Exception {
        Condition condition = lock.newCondition();
        DistributedLock inB = context.lockInOtherClient();
        Condition conditionInB = inB.newCondition();
        Background<Integer> waiter = Background.start("waiter", () -> {
            lock.lock();
            lock.lock();
            lock.lock();
            try {
                condition.await();
                assertTrue(lock.isHeldByCurrentThread());
                return lock.getHoldCount();
            } finally {
                while (lock.getHoldCount() > 0) {
                    lock.unlock();
                }
            }
        });
        Await.until("it waits", () -> context.conditionWaiters("0") == 1);
        inB.lock();   // only once A released all three levels
        try {
            conditionInB.signal();
        } finally {
            inB.unlock();
        }
        assertEquals(3, waiter.get());
    }

    /**
     * await(): a signalled waiter "must re-acquire the lock before it can return": while client B
     * holds it after signalling, A's await has not returned; once B unlocks, it has.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void await_signalledWhileSignallerHolds_returnsOnlyAfterItReleases(DistributedLock lock, SpecContext context)
            throws Exception {
        Condition condition = lock.newCondition();
        DistributedLock inB = context.lockInOtherClient();
        Condition conditionInB = inB.newCondition();
        AtomicInteger phase = new AtomicInteger();
        Background<Integer> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                condition.await();
                return phase.get();
            } finally {
                lock.unlock();
            }
        });
        Await.until("it waits", () -> context.conditionWaiters("0") == 1);
        inB.lock();
        try {
            conditionInB.signal();
            // The waiter's own next step needs the lock B holds: give it every chance to be wrong.
            Await.until("the signalled waiter waits for the lock", () -> waiterInRedisLine(context));
            phase.set(1);
        } finally {
            inB.unlock();
        }
        assertEquals(1, waiter.get(), "returned only after the signaller released the lock");
    }

    /* --------------- signal, signalAll --------------- */

    /**
     * signal(): "Wakes up one waiting thread": of two waiters in two clients, one returns; the other
     * still waits in Redis until a second signal.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void signal_twoWaitersInTwoClients_wakesExactlyOne(DistributedLock lock, SpecContext context) throws Exception {
        Condition condition = lock.newCondition();
        DistributedLock inB = context.lockInOtherClient();
        Condition conditionInB = inB.newCondition();
        List<Background<Boolean>> waiters = List.of(awaiting("waiter-a", lock, condition),
                awaiting("waiter-b", inB, conditionInB));
        Await.until("both wait", () -> context.conditionWaiters("0") == 2);
        signal(lock, condition, false);
        Await.until("one returned", () -> waiters.stream().filter(w -> !w.thread().isAlive()).count() == 1);
        assertEquals(1, context.conditionWaiters("0"), "the other still waits");
        signal(inB, conditionInB, false);
        for (Background<Boolean> waiter : waiters) {
            assertTrue(waiter.get());
        }
    }

    /** signalAll(): "Wakes up all waiting threads": three waiters over two clients all return. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void signalAll_threeWaitersInTwoClients_wakesEvery(DistributedLock lock, SpecContext context) throws Exception {
        Condition condition = lock.newCondition();
        DistributedLock inB = context.lockInOtherClient();
        Condition conditionInB = inB.newCondition();
        List<Background<Boolean>> waiters = new ArrayList<>();
        waiters.add(awaiting("waiter-a1", lock, condition));
        waiters.add(awaiting("waiter-a2", lock, condition));
        waiters.add(awaiting("waiter-b", inB, conditionInB));
        Await.until("all wait", () -> context.conditionWaiters("0") == 3);
        signal(inB, conditionInB, true);
        for (Background<Boolean> waiter : waiters) {
            assertTrue(waiter.get());
        }
    }

    /**
     * signal() and signalAll() by a thread whose hold its client took from the client's lock cache
     * (RedisSynchronizers.Builder#lockCaching): the store has the client's cache, not the thread's
     * hold, and the signal's hold check is the cache's, also for a local re-take whose token is
     * not the one the cache began with. The waiters, in the other client, then ask the cache back
     * and return with the lock.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.CACHED_LOCK, skipOn = Topology.REDLOCK)
    void signal_byAThreadOnACachedHold_wakesTheWaiters(DistributedLock lock, SpecContext context) throws Exception {
        DistributedLock inB = context.lockInOtherClient();
        Condition conditionInB = inB.newCondition();
        List<Background<Boolean>> waiters = List.of(awaiting("waiter-1", inB, conditionInB),
                awaiting("waiter-2", inB, conditionInB));
        Await.until("both wait", () -> context.conditionWaiters("0") == 2);
        Condition condition = lock.newCondition();
        lock.lock();
        long first = lock.fencingToken();
        lock.unlock();   // cached by A, idle: nobody asked for it
        lock.lock();
        try {
            LockSnapshot.Holder holder = lock.snapshot().holders().get(0);
            assertEquals(LockSnapshot.Renewal.CACHED, holder.renewal(), "taken from A's cache: " + holder);
            assertTrue(lock.fencingToken() > first, "a local re-take, with a token of its own");
            condition.signal();
            condition.signalAll();
        } finally {
            lock.unlock();
        }
        for (Background<Boolean> waiter : waiters) {
            assertTrue(waiter.get(), "returned with the lock");
        }
    }

    /** A signal is not remembered when nobody waits: a later timed await times out. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void signal_nobodyWaiting_isNotRemembered(DistributedLock lock, SpecContext context) throws Exception {
        Condition condition = lock.newCondition();
        lock.lock();
        try {
            condition.signal();
            condition.signalAll();
            assertFalse(condition.await(200, TimeUnit.MILLISECONDS), "no signal came after the await began");
            assertTrue(lock.isHeldByCurrentThread());
        } finally {
            lock.unlock();
        }
    }

    /** Conditions of one lock are apart: a signal of the second wakes nobody waiting on the first. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void signal_otherConditionOfTheLock_wakesNobodyHere(DistributedLock lock, SpecContext context) throws Exception {
        Condition first = lock.newCondition();
        DistributedLock inB = context.lockInOtherClient();
        Condition firstInB = inB.newCondition();
        Condition secondInB = inB.newCondition();
        Background<Boolean> waiter = awaiting("waiter", lock, first);
        Await.until("it waits", () -> context.conditionWaiters("0") == 1);
        signal(inB, secondInB, true);
        assertEquals(1, context.conditionWaiters("0"), "still waits on the first");
        signal(inB, firstInB, false);
        assertTrue(waiter.get());
    }

    /* --------------- timed waits --------------- */

    /**
     * awaitNanos(): "A value less than or equal to zero indicates that no time remains", returned
     * once "the specified waiting time elapses", with the lock held again.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void awaitNanos_noSignal_returnsNotPositiveAfterTheTimeWithTheLockHeld(DistributedLock lock, SpecContext context)
            throws Exception {
        Condition condition = lock.newCondition();
        lock.lock();
        lock.lock();
        try {
            long timeout = TimeUnit.MILLISECONDS.toNanos(300);
            long start = System.nanoTime();
            long left = condition.awaitNanos(timeout);
            assertTrue(System.nanoTime() - start >= timeout, "not before the time elapsed");
            assertTrue(left <= 0, "no time left: " + left);
            assertEquals(2, lock.getHoldCount());
            assertFalse(condition.awaitUntil(new Date(System.currentTimeMillis() + 100)));
            assertFalse(condition.await(0, TimeUnit.SECONDS));
            assertTrue(condition.awaitNanos(-5) <= 0);
        } finally {
            lock.unlock();
            lock.unlock();
        }
        assertEquals(0, context.conditionWaiters("0"), "left no waiter behind");
    }

    /** await(time, unit): "false if the waiting time detectably elapsed", true when signalled before. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void awaitTimed_signalledInTime_returnsTrue(DistributedLock lock, SpecContext context) throws Exception {
        Condition condition = lock.newCondition();
        DistributedLock inB = context.lockInOtherClient();
        Condition conditionInB = inB.newCondition();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                return condition.await(60, TimeUnit.SECONDS);
            } finally {
                lock.unlock();
            }
        });
        Await.until("it waits", () -> context.conditionWaiters("0") == 1);
        signal(inB, conditionInB, false);
        assertTrue(waiter.get());
    }

    /* --------------- interrupts --------------- */

    /**
     * await(): "InterruptedException if the current thread is interrupted while waiting", thrown
     * with the lock held again; the waiter leaves the condition.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void await_interrupted_throwsWithTheLockHeldAgain(DistributedLock lock, SpecContext context) throws Exception {
        Condition condition = lock.newCondition();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                condition.await();
                return false;
            } catch (InterruptedException e) {
                return lock.isHeldByCurrentThread() && !Thread.currentThread().isInterrupted();
            } finally {
                lock.unlock();
            }
        });
        Await.until("it waits", () -> context.conditionWaiters("0") == 1);
        waiter.thread().interrupt();
        assertTrue(waiter.get(), "InterruptedException with the lock held, interrupt status cleared");
        assertEquals(0, context.conditionWaiters("0"), "it left");
    }

    /** await(): "if the current thread has its interrupted status set on entry": InterruptedException, nothing written. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void await_interruptedOnEntry_throwsAndKeepsTheLock(DistributedLock lock, SpecContext context) {
        Condition condition = lock.newCondition();
        lock.lock();
        try {
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, condition::await);
            assertTrue(lock.isHeldByCurrentThread());
        } finally {
            lock.unlock();
        }
    }

    /**
     * awaitUninterruptibly(): "If the current thread's interrupted status is set ... it will continue
     * to wait until signalled", and returns with the status still set.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void awaitUninterruptibly_interrupted_waitsForTheSignalAndKeepsTheStatus(DistributedLock lock,
            SpecContext context) throws Exception {
        Condition condition = lock.newCondition();
        DistributedLock inB = context.lockInOtherClient();
        Condition conditionInB = inB.newCondition();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                condition.awaitUninterruptibly();
                return Thread.currentThread().isInterrupted() && lock.isHeldByCurrentThread();
            } finally {
                lock.unlock();
            }
        });
        Await.until("it waits", () -> context.conditionWaiters("0") == 1);
        waiter.thread().interrupt();
        // Still registered after the interrupt: the registration only goes with the signal.
        assertEquals(1, context.conditionWaiters("0"));
        signal(inB, conditionInB, false);
        assertTrue(waiter.get(), "returned on the signal, with the interrupt status set and the lock held");
    }

    /* --------------- lost holds --------------- */

    /**
     * A hold lost before the await (Redis no longer has it; the registration's hold check finds it)
     * is reported like every lost hold; await then takes the lock again, with the hold count, and
     * throws LostHoldException, so that the caller's {@code finally { unlock(); }} finds a hold.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void await_holdGoneInRedis_reportedAndThrowsLostHoldAfterRetaking(DistributedLock lock, SpecContext context)
            throws Exception {
        Condition condition = lock.newCondition();
        lock.lock();
        lock.lock();
        try {
            context.expireHoldsInStore();
            assertThrows(LostHoldException.class, condition::await);
            assertTrue(lock.isHeldByCurrentThread(), "taken again");
            assertEquals(2, lock.getHoldCount());
            assertNotNull(context.lostHolds().poll(30, TimeUnit.SECONDS), "the loss was reported");
        } finally {
            lock.unlock();
            lock.unlock();
        }
        assertFalse(lock.isLocked());
        assertEquals(0, context.conditionWaiters("0"), "never registered");
    }

    /** A hold known lost before the await (the watchdog found it gone): the same, without asking Redis first. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void await_holdKnownLost_throwsLostHoldAfterRetaking(DistributedLock lock, SpecContext context) throws Exception {
        Condition condition = lock.newCondition();
        lock.lock();
        try {
            context.expireHoldsInStore();
            context.renewNow();
            assertNotNull(context.lostHolds().poll(30, TimeUnit.SECONDS), "the watchdog reported it");
            assertThrows(LostHoldException.class, () -> condition.await(1, TimeUnit.MINUTES));
            assertTrue(lock.isHeldByCurrentThread(), "taken again");
        } finally {
            lock.unlock();
        }
    }

    /** signal() by a thread whose hold Redis no longer has: LostHoldException, and nobody is signalled. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void signal_holdGoneInRedis_throwsLostHold(DistributedLock lock, SpecContext context) {
        Condition condition = lock.newCondition();
        lock.lock();
        context.expireHoldsInStore();
        assertThrows(LostHoldException.class, condition::signal);
        assertThrows(LostHoldException.class, lock::unlock);
    }

    /* --------------- helpers --------------- */

    private static Background<Boolean> awaiting(String name, DistributedLock lock, Condition condition) {
        return Background.start(name, () -> {
            lock.lock();
            try {
                condition.await();
                return lock.isHeldByCurrentThread();
            } finally {
                lock.unlock();
            }
        });
    }

    private static void signal(DistributedLock lock, Condition condition, boolean all) {
        lock.lock();
        try {
            if (all) {
                condition.signalAll();
            } else {
                condition.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Whether the waiter is seen waiting for the lock in Redis (the queueing kinds show it). */
    private static boolean waiterInRedisLine(SpecContext context) {
        return context.waiterRecorded();
    }
}
