package dev.synchronizers.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Kind;
import dev.synchronizers.fixture.LeakCheck;
import dev.synchronizers.fixture.SpecContext;
import dev.synchronizers.fixture.SynchronizerSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
    void tryLock_heldByOtherClient_returnsFalseAndLeavesHolderAlone(DistributedLock lock, SpecContext context)
            throws Exception {
        DistributedLock other = context.lockInOtherClient();
        other.lock();
        long token = other.fencingToken();
        assertFalse(lock.tryLock());
        assertEquals(0, lock.getHoldCount());
        assertTrue(other.isHeldByCurrentThread());
        assertEquals(token, other.fencingToken());
        other.unlock();
        assertTrue(tryAfterOtherClientsUnlock(lock, context));
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
        if (context.caches()) {
            // The other client's idle cache counts as locked until the waiter's ask, which may
            // reach it after its unlock, has it given back (RedisSynchronizers.Builder#lockCaching).
            Await.until("the other client gives its cache back", () -> !lock.isLocked());
        }
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

    /* --------------- isLocked and forceUnlock --------------- */

    /**
     * isLocked(): "whether any owner of any client holds this lock." With caching, a lock that
     * another client caches counts as locked even while no thread of it holds it (documented on
     * RedisSynchronizers.Builder#lockCaching): that client gives it back only when asked.
     */
    @ParameterizedTest
    @SynchronizerSpec
    void isLocked_heldByOtherClient_isTrueForEveryone(DistributedLock lock, SpecContext context)
            throws Exception {
        DistributedLock other = context.lockInOtherClient();
        assertFalse(lock.isLocked());
        other.lock();
        assertTrue(lock.isLocked());
        assertFalse(lock.isHeldByCurrentThread());
        other.unlock();
        if (context.caches()) {
            assertTrue(lock.isLocked(), "the other client still caches it: it counts as locked here");
            assertFalse(other.isLocked(), "free for the client that caches it");
            assertTrue(lock.tryLock(ASK_BACK.toMillis(), TimeUnit.MILLISECONDS), "a wait asks the cache back");
            lock.unlock();
            return;
        }
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

    /* --------------- handles: acquire and exclusion --------------- */

    /**
     * acquire(): "waiting as lockInterruptibly() does": a handle held in another client keeps it
     * waiting, and its release, from a thread other than the one that took it, lets it in with a
     * greater token.
     */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void acquire_heldByHandleInOtherClient_waitsUntilReleasedFromAnotherThread(DistributedLock lock,
            SpecContext context) throws Exception {
        LockHandle held = context.lockInOtherClient().acquire();
        Background<Long> waiter = Background.start("waiter", () -> {
            try (LockHandle handle = lock.acquire()) {
                assertTrue(handle.isHeld());
                return handle.fencingToken();
            }
        });
        context.awaitRedisWaiter();
        Background.start("releaser", () -> {
            held.release();
            return null;
        }).get();
        assertFalse(held.isHeld());
        assertTrue(waiter.get() > held.fencingToken());
        assertFalse(lock.isLocked());
    }

    /**
     * LockHandle: "A handle hold is never reentrant: while a handle holds a name, another
     * tryAcquire(Duration.ZERO) on it returns empty, from any thread" (and from any client).
     */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryAcquire_zero_whileAHandleHolds_isEmptyFromAnyThreadAndClient(DistributedLock lock, SpecContext context)
            throws Exception {
        LockHandle first = lock.tryAcquire(Duration.ZERO).orElseThrow();
        assertEquals(Optional.empty(), lock.tryAcquire(Duration.ZERO), "not reentrant on the thread that took it");
        assertEquals(Optional.empty(), lock.tryAcquire(Duration.ZERO, Duration.ofSeconds(60)));
        assertEquals(Optional.empty(), Background.start("other thread", () -> lock.tryAcquire(Duration.ZERO)).get());
        DistributedLock other = context.lockInOtherClient();
        assertEquals(Optional.empty(), other.tryAcquire(Duration.ZERO));
        assertEquals(Optional.empty(), other.tryAcquire(Duration.ofMillis(200)), "a timed wait that ends empty");
        assertTrue(first.verify(), "the failed tries left the holder alone");
        first.release();
        LockHandle next = other.tryAcquire(Duration.ZERO).orElseThrow();
        assertTrue(next.fencingToken() > first.fencingToken());
        next.release();
    }

    /**
     * LockHandle: "a handle hold and a thread hold on one name exclude each other": a handle keeps
     * out tryLock() on the thread that took it, on another thread and in another client.
     */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryLock_whileAHandleHolds_isFalseOnEveryThreadAndClient(DistributedLock lock, SpecContext context)
            throws Exception {
        LockHandle handle = lock.acquire();
        assertFalse(lock.tryLock(), "the thread that took the handle holds nothing itself");
        assertFalse(lock.isHeldByCurrentThread());
        assertFalse(Background.start("other thread", lock::tryLock).get());
        assertFalse(context.lockInOtherClient().tryLock());
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "the handle's hold is not the thread's");
        assertTrue(handle.verify());
        handle.release();
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    /**
     * LockHandle: "while a thread holds the name by lock(), tryAcquire(Duration.ZERO) returns empty,
     * also on that thread"; DistributedLock.acquire(): IllegalMonitorStateException on that thread
     * ("it would wait for itself").
     */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryAcquire_whileAThreadHolds_isEmptyOnEveryThreadAndClient(DistributedLock lock, SpecContext context)
            throws Exception {
        lock.lock();
        try {
            assertEquals(Optional.empty(), lock.tryAcquire(Duration.ZERO), "the holding thread's own try");
            assertThrows(IllegalMonitorStateException.class, lock::acquire);
            assertEquals(1, lock.getHoldCount(), "the refused acquire() changed nothing");
            assertEquals(Optional.empty(), Background.start("other thread", () -> lock.tryAcquire(Duration.ZERO)).get());
            assertEquals(Optional.empty(), context.lockInOtherClient().tryAcquire(Duration.ZERO));
        } finally {
            lock.unlock();
        }
        DistributedLock other = context.lockInOtherClient();
        // With caching, the ask of the other client's try above may reach this client after its
        // unlock, which then keeps the lock cached: one try would fail; a wait asks it back.
        LockHandle handle = other.tryAcquire(context.caches() ? ASK_BACK : Duration.ZERO).orElseThrow();
        handle.release();
    }

    /**
     * A read lock's handles: they share the lock with each other and with read holds of threads,
     * and keep writers of every client out until the last of them is released.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.READ_LOCK)
    void readLockHandles_shareWithReaders_andKeepWritersOut(DistributedLock lock, SpecContext context)
            throws Exception {
        LockHandle first = lock.acquire();
        LockHandle second = context.lockInOtherClient().tryAcquire(Duration.ZERO).orElseThrow();
        assertTrue(lock.tryLock(), "a thread's read hold shares with the handles");
        lock.unlock();
        DistributedLock writer = context.excludedInOtherClient();
        assertFalse(writer.tryLock());
        assertEquals(Optional.empty(), writer.tryAcquire(Duration.ZERO));
        first.release();
        assertEquals(Optional.empty(), writer.tryAcquire(Duration.ZERO), "one reader is left");
        second.release();
        LockHandle written = writer.tryAcquire(Duration.ZERO).orElseThrow();
        assertTrue(written.fencingToken() > second.fencingToken());
        written.release();
    }

    /** acquire(): "InterruptedException if interrupted while waiting; nothing is held then." */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void acquire_interruptedWhileWaiting_throwsAndHoldsNothing(DistributedLock lock, SpecContext context)
            throws Exception {
        LockHandle held = context.lockInOtherClient().acquire();
        Background<LockHandle> waiter = Background.start("waiter", lock::acquire);
        context.awaitRedisWaiter();
        Await.parked(waiter.thread());
        waiter.thread().interrupt();
        assertInstanceOf(InterruptedException.class, waiter.failure());
        held.release();
        assertFalse(lock.isLocked(), "the interrupted waiter left nothing taken");
        LockHandle handle = lock.tryAcquire(Duration.ZERO).orElseThrow();
        handle.release();
    }

    /* --------------- handles: fencing tokens --------------- */

    /**
     * LockHandle.fencingToken(): "greater than every token issued earlier for the name, to thread
     * holds and handle holds alike", alternating handles and thread holds of two clients.
     */
    @ParameterizedTest
    @SynchronizerSpec
    void fencingToken_handlesAndThreadHoldsAlternating_increase(DistributedLock lock, SpecContext context)
            throws Exception {
        DistributedLock other = context.lockInOtherClient();
        long last = 0;
        for (int i = 0; i < 16; i++) {
            DistributedLock next = i % 2 == 0 ? lock : other;
            long token;
            if (i / 2 % 2 == 0) {
                try (LockHandle handle = next.acquire()) {
                    token = handle.fencingToken();
                }
            } else {
                next.lock();
                token = next.fencingToken();
                next.unlock();
            }
            assertTrue(token > last, "token " + token + " after " + last + " at step " + i);
            last = token;
        }
    }

    /* --------------- handles: verify, extend, releaseAfter --------------- */

    /**
     * verify(): "A hold found gone is known lost from then on: the lost-hold listener is told at
     * once"; the report names the handle (LostHold.handle()).
     */
    @ParameterizedTest
    @SynchronizerSpec
    void verify_afterOtherClientForcedIt_isFalseAndTheListenerIsToldOfTheHandle(DistributedLock lock,
            SpecContext context) throws Exception {
        LockHandle handle = lock.acquire();
        assertTrue(handle.verify());
        assertTrue(context.lockInOtherClient().forceUnlock());

        assertFalse(handle.verify());
        assertFalse(handle.isHeld());
        assertFalse(handle.verify(), "known lost from then on");
        LostHold reported = context.lostHolds().poll(30, TimeUnit.SECONDS);
        assertTrue(reported != null, "the listener is told");
        assertSame(handle, reported.handle());
        assertEquals(LostHold.Cause.GONE, reported.cause());
        assertEquals(handle.fencingToken(), reported.fencingToken());
        assertEquals(context.name(), reported.name());
        assertEquals(LostHold.Cause.GONE, assertThrows(LostHoldException.class, handle::release).lostCause());
        handle.close();   // released (by the release() that threw): nothing more to do
    }

    /**
     * extend(): "Gives the hold a fixed lease of lease from now ... the watchdog stops renewing it,
     * and it ends when that lease runs out"; a handle whose fixed lease ran out is lost without a
     * report, and its release() throws LostHoldException.
     */
    @ParameterizedTest
    @SynchronizerSpec
    void extend_setsAFixedLease_andTheHoldEndsWithIt(DistributedLock lock, SpecContext context) throws Exception {
        LockHandle handle = lock.acquire();

        assertTrue(handle.extend(Duration.ofSeconds(600)));

        LockSnapshot.Holder holder = lock.snapshot().holders().stream()
                .filter(each -> each.fencingToken() == handle.fencingToken()).findFirst().orElseThrow();
        assertEquals(LockSnapshot.Renewal.FIXED, holder.renewal());
        assertTrue(holder.leaseRemainingMillis() > SpecContext.LEASE.toMillis(),
                "the 600 s lease, not the watchdog's: " + holder.leaseRemainingMillis());
        assertTrue(handle.verify());

        assertTrue(handle.extend(Duration.ofSeconds(1)), "shortened to 1 s from now");
        DistributedLock excluded = context.excludedInOtherClient();
        LockHandle next = excluded.tryAcquire(Duration.ofSeconds(30)).orElseThrow(
                () -> new AssertionError("free once the extended lease ran out"));
        assertTrue(next.fencingToken() > handle.fencingToken());
        assertFalse(handle.isHeld());
        assertEquals(LostHold.Cause.LEASE_EXPIRED, assertThrows(LostHoldException.class, handle::release).lostCause());
        next.release();
        assertTrue(context.lostHolds().isEmpty(), "a fixed lease that ran out is not reported: " + context.lostHolds());
    }

    /** extend(): "false if it was lost (now or before)"; the loss is reported with the handle. */
    @ParameterizedTest
    @SynchronizerSpec
    void extend_afterOtherClientForcedIt_isFalseAndReported(DistributedLock lock, SpecContext context)
            throws Exception {
        LockHandle handle = lock.acquire();
        assertTrue(context.lockInOtherClient().forceUnlock());

        assertFalse(handle.extend(Duration.ofSeconds(60)));

        assertFalse(handle.isHeld());
        assertFalse(handle.extend(Duration.ofSeconds(60)), "lost before");
        LostHold reported = context.lostHolds().poll(30, TimeUnit.SECONDS);
        assertTrue(reported != null, "the listener is told");
        assertSame(handle, reported.handle());
        assertThrows(LostHoldException.class, handle::close);
    }

    /**
     * releaseAfter(): "the store keeps it closed to everyone for keepClosedFor more ..., after which
     * it ends by itself": another client is kept out until the kept lease runs out (here shortened
     * in the store, as its clock would run it out), then gets in.
     */
    @ParameterizedTest
    @SynchronizerSpec
    void releaseAfter_keepsOtherClientsOut_untilTheKeptLeaseRunsOut(DistributedLock lock, SpecContext context)
            throws Exception {
        LockHandle handle = lock.acquire();

        handle.releaseAfter(Duration.ofSeconds(600));

        assertFalse(handle.isHeld());
        assertTrue(lock.isLocked(), "still closed");
        DistributedLock excluded = context.excludedInOtherClient();
        assertFalse(excluded.tryLock(), "closed to everyone");
        assertEquals(Optional.empty(), excluded.tryAcquire(Duration.ZERO));
        assertThrows(IllegalStateException.class, handle::release, "released already");
        assertThrows(IllegalStateException.class, () -> handle.releaseAfter(Duration.ofSeconds(1)));
        handle.close();   // does nothing once released

        context.expireHoldsInStore();

        assertTrue(excluded.tryLock(30, TimeUnit.SECONDS), "free once the kept lease ran out");
        assertTrue(excluded.fencingToken() > handle.fencingToken());
        excluded.unlock();
        assertTrue(context.lostHolds().isEmpty(), "let go, not lost: " + context.lostHolds());
    }

    /**
     * releaseAfter(): the shortest keepClosedFor (1 ms) lets the hold go without a loss: it returns
     * normally ("LostHoldException if the hold was lost (the store no longer had it)" does not
     * apply: the store had it), nothing is reported, and the lock then frees itself.
     */
    @ParameterizedTest
    @SynchronizerSpec
    void releaseAfter_oneMillisecond_letsGoWithoutALoss_andTheLockFreesItself(DistributedLock lock,
            SpecContext context) throws Exception {
        LockHandle handle = lock.acquire();

        handle.releaseAfter(Duration.ofMillis(1));

        assertFalse(handle.isHeld());
        DistributedLock excluded = context.excludedInOtherClient();
        assertTrue(excluded.tryLock(30, TimeUnit.SECONDS), "free once the kept millisecond ran out");
        assertTrue(excluded.fencingToken() > handle.fencingToken());
        excluded.unlock();
        assertTrue(context.lostHolds().isEmpty(), "let go, not lost: " + context.lostHolds());
    }

    /* --------------- handles: release, close, leases, threads --------------- */

    /**
     * close(): "LostHoldException if the hold was lost and not released", found at the release
     * itself (no verify() before); the loss is reported with the handle.
     */
    @ParameterizedTest
    @SynchronizerSpec
    void close_ofAHandleForcedByOtherClient_throwsLostHoldAndReportsTheHandle(DistributedLock lock,
            SpecContext context) throws Exception {
        LockHandle handle = lock.acquire();
        assertTrue(context.lockInOtherClient().forceUnlock());

        LostHoldException thrown = assertThrows(LostHoldException.class, handle::close);

        assertEquals(LostHold.Cause.GONE, thrown.lostCause());
        assertTrue(thrown.getMessage().contains(context.name()), thrown.getMessage());
        assertFalse(handle.isHeld());
        LostHold reported = context.lostHolds().poll(30, TimeUnit.SECONDS);
        assertTrue(reported != null, "the listener is told");
        assertSame(handle, reported.handle());
        handle.close();   // released by the close() that threw: nothing more to do
        assertThrows(IllegalStateException.class, handle::release);
    }

    /**
     * acquire(lease), tryAcquire(wait, lease): "the hold is not renewed and ends when lease runs
     * out": a waiter of another client then gets the lock, and the handle's release() throws
     * LostHoldException (LEASE_EXPIRED).
     */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void tryAcquire_withLease_holdEndsWithTheLease(DistributedLock lock, SpecContext context) throws Exception {
        LockHandle held = context.lockInOtherClient().tryAcquire(Duration.ZERO, Duration.ofSeconds(1)).orElseThrow();

        LockHandle handle = lock.acquire(Duration.ofSeconds(60));

        assertTrue(handle.fencingToken() > held.fencingToken(), "taken once the holder's lease ran out");
        assertFalse(held.isHeld());
        assertEquals(LostHold.Cause.LEASE_EXPIRED, assertThrows(LostHoldException.class, held::release).lostCause());
        assertTrue(handle.verify());
        handle.release();
        assertTrue(context.otherLostHolds().isEmpty(), "a fixed lease that ran out is not reported");
    }

    /**
     * LockHandle: a hold "that belongs to this object rather than to a thread": the thread that
     * took it ends, the watchdog keeps renewing it (a thread hold would be abandoned), and another
     * thread releases it.
     */
    @ParameterizedTest
    @SynchronizerSpec
    void handle_outlivesTheThreadThatTookIt(DistributedLock lock, SpecContext context) throws Exception {
        Background<LockHandle> taker = Background.start("taker", lock::acquire);
        LockHandle handle = taker.get();
        taker.thread().join();
        assertTrue(context.watchdogEntries() > 0, "the watchdog renews the handle's hold");

        for (int tick = 0; tick < 3; tick++) {
            context.renewNow();
        }

        // A thread hold whose thread ended would have left the watchdog at the first tick.
        assertTrue(context.watchdogEntries() > 0, "still renewed: not abandoned with its thread");
        assertTrue(handle.isHeld());
        assertTrue(handle.verify());
        DistributedLock excluded = context.excludedInOtherClient();
        assertFalse(excluded.tryLock());
        handle.release();
        assertTrue(excluded.tryLock());
        excluded.unlock();
        assertTrue(context.lostHolds().isEmpty(), "nothing lost: " + context.lostHolds());
    }

    /**
     * Mutual exclusion through handles: 8 threads in 2 clients increment a plain counter under
     * handles that another thread releases; no update is lost, and the tokens follow the order of
     * the increments.
     */
    @ParameterizedTest
    @SynchronizerSpec(exclusive = true)
    void handles_8ThreadsIn2Clients_releasedOnAnotherThread_noLostUpdate(DistributedLock lock, SpecContext context)
            throws Exception {
        DistributedLock other = context.lockInOtherClient();
        int threads = 8;
        int rounds = 10;
        Counter counter = new Counter();
        long[] tokens = new long[threads * rounds];
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Background<Void>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            DistributedLock mine = t % 2 == 0 ? lock : other;
            workers.add(Background.start("worker-" + t, () -> {
                start.await();
                for (int i = 0; i < rounds; i++) {
                    LockHandle handle = mine.acquire();
                    maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    int seen = counter.value;
                    tokens[seen] = handle.fencingToken();
                    LockSupport.parkNanos(20_000); // widen the read-modify-write window
                    counter.value = seen + 1;
                    inside.decrementAndGet();
                    handle.releaseAsync().toCompletableFuture().get(30, TimeUnit.SECONDS);
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
        for (int i = 1; i < tokens.length; i++) {
            assertTrue(tokens[i] > tokens[i - 1], "tokens in the order of the holds: " + tokens[i - 1] + ", " + tokens[i]);
        }
        assertFalse(lock.isLocked());
    }

    /**
     * How long a client waits for a lock right after another client's unlock when that client may
     * still cache it: only a bound that turns a hang into a failure (the ask is answered at once).
     */
    private static final Duration ASK_BACK = Duration.ofSeconds(30);

    /**
     * One try right after another client's unlock; with caching a wait, since that client may keep
     * the lock cached (an earlier try's ask may reach it after its unlock), and a try of this
     * client fails until it is asked back (RedisSynchronizers.Builder#lockCaching).
     */
    private static boolean tryAfterOtherClientsUnlock(DistributedLock lock, SpecContext context)
            throws InterruptedException {
        return context.caches() ? lock.tryLock(ASK_BACK.toMillis(), TimeUnit.MILLISECONDS) : lock.tryLock();
    }

    private static final class Counter {
        volatile int value;
    }
}
