package dev.synchronizers.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.LeakCheck;
import dev.synchronizers.fixture.SpecContext;
import dev.synchronizers.fixture.SynchronizerSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * The contract of {@link DistributedLock}: {@link java.util.concurrent.locks.Lock} and
 * {@link java.util.concurrent.locks.ReentrantLock} as their javadoc states it, across threads and
 * across clients. Each test names the sentence it checks.
 */
@Tag("redis")
@ExtendWith(LeakCheck.class)
class DistributedLockContractTest {

    /* --------------- lock --------------- */

    /** lock(): "If the current thread holds the lock already, the hold count is incremented." */
    @ParameterizedTest
    @SynchronizerSpec(reentrant = true)
    void lock_reentered_countsHoldsAndKeepsToken(DistributedLock lock, SpecContext context) {
        assertEquals(0, lock.getHoldCount());
        assertFalse(lock.isHeldByCurrentThread());
        lock.lock();
        long token = lock.fencingToken();
        lock.lock();
        assertTrue(lock.tryLock());
        assertEquals(3, lock.getHoldCount());
        assertEquals(token, lock.fencingToken(), "re-entering does not change the token");
        lock.unlock();
        lock.unlock();
        assertEquals(1, lock.getHoldCount());
        assertTrue(lock.isLocked(), "still held after releasing inner holds");
        lock.unlock();
        assertEquals(0, lock.getHoldCount());
        assertFalse(lock.isHeldByCurrentThread());
        assertFalse(lock.isLocked());
    }

    /** lock(): the same name from another call of the factory is the same lock. */
    @ParameterizedTest
    @SynchronizerSpec
    void lock_sameNameFromFactory_sharesHolds(DistributedLock lock, SpecContext context) {
        lock.lock();
        DistributedLock again = context.lockAgain();
        assertTrue(again.isHeldByCurrentThread());
        again.unlock();
        assertFalse(lock.isHeldByCurrentThread());
        assertFalse(lock.isLocked());
    }

    /** lock(): waits while another client holds the lock, and gets it when that client releases it. */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void lock_heldByOtherClient_waitsUntilReleased(DistributedLock lock, SpecContext context) throws Exception {
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        Background<Long> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                return lock.fencingToken();
            } finally {
                lock.unlock();
            }
        });
        context.awaitRedisWaiter();
        long holderToken = other.fencingToken();
        other.unlock();
        assertTrue(waiter.get() > holderToken);
    }

    /** lock(): "If the thread is interrupted while waiting, it keeps waiting and its interrupt status is set." */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void lock_interruptedWhileWaiting_keepsWaitingAndKeepsStatus(DistributedLock lock, SpecContext context)
            throws Exception {
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            lock.lock();
            boolean interrupted = Thread.currentThread().isInterrupted();
            lock.unlock();
            return interrupted;
        });
        context.awaitRedisWaiter();
        waiter.thread().interrupt();
        other.unlock();
        assertTrue(waiter.get(), "interrupt status set on return");
    }

    /* --------------- tryLock --------------- */

    /** tryLock(): "Acquires the lock only if it is free at the time of invocation" — not while another thread holds it. */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryLock_heldByOtherThread_returnsFalse(DistributedLock lock, SpecContext context) throws Exception {
        lock.lock();
        try {
            assertFalse(Background.start("other thread", lock::tryLock).get());
        } finally {
            lock.unlock();
        }
    }

    /** tryLock(): false while another client holds it; nothing is left behind by the failed try. */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryLock_heldByOtherClient_returnsFalseAndLeavesHolderAlone(DistributedLock lock, SpecContext context) {
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        long token = other.fencingToken();
        assertFalse(lock.tryLock());
        assertEquals(0, lock.getHoldCount());
        assertTrue(other.isHeldByCurrentThread());
        assertEquals(token, other.fencingToken());
        other.unlock();
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    /** tryLock(time): "If the specified waiting time elapses then the value false is returned." */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryLock_timed_notReleasedInTime_returnsFalseAndHoldsNothing(DistributedLock lock, SpecContext context)
            throws Exception {
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        try {
            assertFalse(lock.tryLock(200, TimeUnit.MILLISECONDS));
            assertEquals(0, lock.getHoldCount());
            assertTrue(other.isHeldByCurrentThread());
        } finally {
            other.unlock();
        }
    }

    /** tryLock(time): "If the lock is available this method returns immediately with true" once the holder releases in time. */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryLock_timed_releasedInTime_returnsTrue(DistributedLock lock, SpecContext context) throws Exception {
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            boolean acquired = lock.tryLock(30, TimeUnit.SECONDS);
            if (acquired) {
                lock.unlock();
            }
            return acquired;
        });
        context.awaitRedisWaiter();
        other.unlock();
        assertTrue(waiter.get());
    }

    /** tryLock(time): "If the time is less than or equal to zero, the method will not wait at all." */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryLock_nonPositiveTime_makesOneAttempt(DistributedLock lock, SpecContext context) throws Exception {
        assertTrue(lock.tryLock(0, TimeUnit.SECONDS));
        lock.unlock();
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        try {
            assertFalse(lock.tryLock(-1, TimeUnit.SECONDS));
            assertFalse(lock.tryLock(0, TimeUnit.NANOSECONDS));
        } finally {
            other.unlock();
        }
    }

    /** tryLock(time): "InterruptedException if the current thread is interrupted ... on entry"; status cleared, nothing taken. */
    @ParameterizedTest
    @SynchronizerSpec
    void tryLock_timed_interruptedOnEntry_throwsAndTakesNothing(DistributedLock lock, SpecContext context) {
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> lock.tryLock(1, TimeUnit.SECONDS));
        assertFalse(Thread.interrupted(), "interrupt status cleared");
        assertFalse(lock.isLocked(), "a free lock was not taken");
        assertEquals(0, lock.getHoldCount());
    }

    /** tryLock(waitTime, leaseTime): the hold ends with its lease; a waiter then gets the lock. */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryLock_withLease_holdEndsWithLease(DistributedLock lock, SpecContext context) throws Exception {
        DistributedLock other = context.lockInOtherClient();
        assertTrue(other.tryLock(0, 300, TimeUnit.MILLISECONDS));
        long token = other.fencingToken();
        assertTrue(lock.tryLock(30, TimeUnit.SECONDS), "free once the holder's lease ran out");
        assertTrue(lock.fencingToken() > token);
        lock.unlock();
        LostHoldException lost = assertThrows(LostHoldException.class, other::unlock);
        assertEquals(LostHold.Cause.LEASE_EXPIRED, lost.lostCause());
        assertFalse(other.isHeldByCurrentThread());
    }

    /* --------------- lockInterruptibly --------------- */

    /** lockInterruptibly(): "has its interrupted status set on entry to this method ... InterruptedException is thrown", even when the lock is free. */
    @ParameterizedTest
    @SynchronizerSpec
    void lockInterruptibly_interruptedOnEntry_throwsClearsStatusAndTakesNothing(DistributedLock lock,
            SpecContext context) {
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, lock::lockInterruptibly);
        assertFalse(Thread.interrupted(), "interrupt status cleared");
        assertFalse(lock.isLocked(), "a free lock was not taken");
        assertFalse(lock.isHeldByCurrentThread());
    }

    /** lockInterruptibly(): "is interrupted while acquiring the lock ... InterruptedException is thrown"; nothing stays taken. */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void lockInterruptibly_interruptedWhileWaiting_throwsAndTakesNothing(DistributedLock lock, SpecContext context)
            throws Exception {
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            try {
                lock.lockInterruptibly();
                lock.unlock();
                return false;
            } catch (InterruptedException e) {
                return !Thread.currentThread().isInterrupted() && lock.getHoldCount() == 0;
            }
        });
        context.awaitRedisWaiter();
        Await.parked(waiter.thread());
        waiter.thread().interrupt();
        assertTrue(waiter.get(), "threw InterruptedException with the status cleared and no hold");
        other.unlock();
        assertFalse(lock.isLocked(), "the interrupted waiter left nothing taken");
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    /* --------------- unlock --------------- */

    /** unlock(): by a thread that does not hold it: IllegalMonitorStateException, and the lock is as it was. */
    @ParameterizedTest
    @SynchronizerSpec
    void unlock_byNonOwnerThread_throwsAndChangesNothing(DistributedLock lock, SpecContext context) throws Exception {
        lock.lock();
        lock.lock();
        long token = lock.fencingToken();
        Throwable thrown = Background.start("non-owner", () -> {
            lock.unlock();
            return null;
        }).failure();
        assertInstanceOf(IllegalMonitorStateException.class, thrown);
        assertFalse(thrown instanceof LostHoldException, "never held is not lost");
        assertEquals(2, lock.getHoldCount());
        assertEquals(token, lock.fencingToken());
        assertTrue(lock.isLocked());
        lock.unlock();
        lock.unlock();
    }

    /** unlock(): by another client's thread: IllegalMonitorStateException, and the holder keeps its hold. */
    @ParameterizedTest
    @SynchronizerSpec
    void unlock_byOtherClient_throwsAndChangesNothing(DistributedLock lock, SpecContext context) {
        lock.lock();
        DistributedLock other = context.lockInOtherClient();
        assertThrows(IllegalMonitorStateException.class, other::unlock);
        assertTrue(lock.isHeldByCurrentThread());
        assertTrue(lock.isLocked());
        lock.unlock();
    }

    /** unlock(): when not held at all: IllegalMonitorStateException, and the lock stays free. */
    @ParameterizedTest
    @SynchronizerSpec
    void unlock_whenNotHeld_throws(DistributedLock lock, SpecContext context) {
        IllegalMonitorStateException thrown = assertThrows(IllegalMonitorStateException.class, lock::unlock);
        assertTrue(thrown.getMessage().contains(context.name()), "message names the lock: " + thrown.getMessage());
        assertFalse(lock.isLocked());
        assertTrue(context.keys().isEmpty(), "nothing written: " + context.keys());
    }

    /* --------------- fencingToken --------------- */

    /** fencingToken(): IllegalMonitorStateException if the current thread does not hold the lock. */
    @ParameterizedTest
    @SynchronizerSpec
    void fencingToken_withoutHold_throws(DistributedLock lock, SpecContext context) {
        assertThrows(IllegalMonitorStateException.class, lock::fencingToken);
    }

    /** fencingToken(): "strictly greater than that of every earlier hold of this lock by anyone." */
    @ParameterizedTest
    @SynchronizerSpec
    void fencingToken_everyFreshAcquisition_isGreaterThanAllBefore(DistributedLock lock, SpecContext context) {
        DistributedLock other = context.lockInOtherClient();
        long last = 0;
        for (int i = 0; i < 20; i++) {
            DistributedLock next = i % 2 == 0 ? lock : other;
            next.lock();
            long token = next.fencingToken();
            assertTrue(token > last, "token " + token + " after " + last);
            last = token;
            next.unlock();
        }
    }

    /* --------------- bad input --------------- */

    /** lock(leaseTime): "IllegalArgumentException if leaseTime is not positive"; nothing reaches Redis. */
    @ParameterizedTest
    @SynchronizerSpec
    void lock_nonPositiveLease_throwsAndChangesNothing(DistributedLock lock, SpecContext context) {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> lock.lock(0, TimeUnit.SECONDS));
        assertTrue(zero.getMessage().contains("leaseTime"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> lock.lock(-5, TimeUnit.MILLISECONDS));
        assertThrows(IllegalArgumentException.class, () -> lock.tryLock(1, 0, TimeUnit.SECONDS));
        assertThrows(IllegalArgumentException.class, () -> lock.lock(10, TimeUnit.MICROSECONDS));
        assertThrows(NullPointerException.class, () -> lock.lock(1, null));
        assertThrows(NullPointerException.class, () -> lock.tryLock(1, null));
        assertEquals(0, lock.getHoldCount());
        assertTrue(context.keys().isEmpty(), "nothing written: " + context.keys());
    }

    /** newCondition(): "UnsupportedOperationException if this Lock implementation does not support conditions." */
    @ParameterizedTest
    @SynchronizerSpec
    void newCondition_always_throwsUnsupported(DistributedLock lock, SpecContext context) {
        assertThrows(UnsupportedOperationException.class, lock::newCondition);
    }

    /* --------------- isLocked and forceUnlock --------------- */

    /** isLocked(): "whether any owner of any client holds this lock." */
    @ParameterizedTest
    @SynchronizerSpec
    void isLocked_heldByOtherClient_isTrueForEveryone(DistributedLock lock, SpecContext context) {
        DistributedLock other = context.lockInOtherClient();
        assertFalse(lock.isLocked());
        other.lock();
        assertTrue(lock.isLocked());
        assertFalse(lock.isHeldByCurrentThread());
        other.unlock();
        assertFalse(lock.isLocked());
    }

    /** forceUnlock(): "false if it was not held." */
    @ParameterizedTest
    @SynchronizerSpec
    void forceUnlock_whenFree_returnsFalse(DistributedLock lock, SpecContext context) {
        assertFalse(lock.forceUnlock());
    }

    /**
     * forceUnlock(): "the owner ... loses its hold and learns of it through the lost-hold listener and
     * the LostHoldException from its next unlock()."
     */
    @ParameterizedTest
    @SynchronizerSpec
    void forceUnlock_heldByOtherClient_ownerIsToldAndUnlockThrows(DistributedLock lock, SpecContext context)
            throws Exception {
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        long token = other.fencingToken();
        assertTrue(lock.forceUnlock());
        assertFalse(lock.isLocked());
        LostHold lost = context.otherLostHolds().poll(30, TimeUnit.SECONDS);
        assertTrue(lost != null, "listener told within the watchdog's tick");
        assertEquals(context.name(), lost.name());
        assertEquals(token, lost.fencingToken());
        assertEquals(LostHold.Cause.GONE, lost.cause());
        assertFalse(other.isHeldByCurrentThread());
        LostHoldException thrown = assertThrows(LostHoldException.class, other::unlock);
        assertEquals(LostHold.Cause.GONE, thrown.lostCause());
        assertEquals(0, other.getHoldCount());
    }

    /* --------------- mutual exclusion --------------- */

    /** Mutual exclusion: 16 threads in 2 clients increment a plain counter under the lock; no update is lost. */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void lock_16ThreadsIn2Clients_noLostUpdate(DistributedLock lock, SpecContext context) throws Exception {
        DistributedLock other = context.lockInOtherClient();
        int threads = 16;
        int rounds = 40;
        Counter counter = new Counter();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Background<Void>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            DistributedLock mine = t % 2 == 0 ? lock : other;
            workers.add(Background.start("worker-" + t, () -> {
                start.await();
                for (int i = 0; i < rounds; i++) {
                    mine.lock();
                    try {
                        maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        int seen = counter.value;
                        LockSupport.parkNanos(20_000); // widen the read-modify-write window
                        counter.value = seen + 1;
                        inside.decrementAndGet();
                    } finally {
                        mine.unlock();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Background<Void> worker : workers) {
            worker.get();
        }
        assertEquals(threads * rounds, counter.value, "no lost update");
        assertEquals(1, maxInside.get(), "never two holders at once");
        assertFalse(lock.isLocked());
    }

    private static final class Counter {
        volatile int value;
    }
}
