package dev.synchronizers.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LockHandle;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.SynchronizerUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class InMemorySynchronizersTest {

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final InMemorySynchronizers.Store store = InMemorySynchronizers.newStore();
    private final InMemorySynchronizers a = store.client();
    private final InMemorySynchronizers b = store.client();
    private final BlockingQueue<LostHold> lostA = new LinkedBlockingQueue<>();

    InMemorySynchronizersTest() {
        a.addLostHoldListener(lostA::add);
    }

    @AfterEach
    void stop() {
        threads.shutdownNow();
        a.close();
        b.close();
    }

    private <T> T in(java.util.concurrent.Callable<T> task) throws Exception {
        return threads.submit(task).get(10, TimeUnit.SECONDS);
    }

    @Test
    void twoClientsOfOneStoreExcludeEachOtherAndTokensIncrease() throws Exception {
        assertNotEquals(a.clientId(), b.clientId());
        DistributedLock lockA = a.lock("orders");
        lockA.lock();
        lockA.lock();
        assertEquals(2, lockA.getHoldCount());
        long first = lockA.fencingToken();
        assertFalse(b.lock("orders").tryLock());
        assertTrue(b.lock("orders").isLocked());
        assertEquals(List.of(a.clientId()),
                b.lock("orders").snapshot().holders().stream().map(LockSnapshot.Holder::clientId).toList());
        // another thread of the same client is another owner
        assertThrows(IllegalMonitorStateException.class, () -> {
            try {
                in(() -> {
                    lockA.unlock();
                    return null;
                });
            } catch (ExecutionException e) {
                throw e.getCause();
            }
        });
        lockA.unlock();
        lockA.unlock();
        assertThrows(IllegalMonitorStateException.class, lockA::unlock);
        long second = in(() -> {
            DistributedLock lockB = b.lock("orders");
            assertTrue(lockB.tryLock(5, TimeUnit.SECONDS));
            try {
                return lockB.fencingToken();
            } finally {
                lockB.unlock();
            }
        });
        assertTrue(second > first, second + " > " + first);
    }

    @Test
    void aWaiterOfAnotherClientGetsTheLockWhenItIsReleased() throws Exception {
        DistributedLock lockA = a.lock("job");
        lockA.lock();
        CountDownLatch asking = new CountDownLatch(1);
        Future<Long> waiter = threads.submit(() -> {
            DistributedLock lockB = b.lock("job");
            asking.countDown();
            lockB.lockInterruptibly();
            try {
                return lockB.fencingToken();
            } finally {
                lockB.unlock();
            }
        });
        asking.await();
        awaitQueued(lockA, 1);
        lockA.unlock();
        assertTrue(waiter.get(10, TimeUnit.SECONDS) > 0);
    }

    @Test
    void loseHoldEndsAThreadHoldAsGone() throws Exception {
        DistributedLock lock = a.lock("report");
        lock.lock();
        long token = lock.fencingToken();

        assertEquals(1, store.loseHold("report"));

        LostHold lost = lostA.poll(10, TimeUnit.SECONDS);
        assertNotNull(lost, "the listener is told");
        assertEquals(LostHold.Cause.GONE, lost.cause());
        assertEquals("report", lost.name());
        assertEquals(token, lost.fencingToken());
        assertFalse(lock.isHeldByCurrentThread());
        assertTrue(in(() -> b.lock("report").tryLock()), "another client takes it at once");
        LostHoldException thrown = assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(LostHold.Cause.GONE, thrown.lostCause());
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
    }

    @Test
    void loseHoldCompletesAHandlesLostStageAndItsReleaseThrows() throws Exception {
        LockHandle handle = a.fairLock("feed").acquire();
        CompletableFuture<LostHold> lost = handle.lost().toCompletableFuture();
        a.loseHold("feed");
        LostHold report = lost.get(10, TimeUnit.SECONDS);
        assertEquals(LostHold.Cause.GONE, report.cause());
        assertEquals(-1, report.threadId());
        assertEquals(handle, report.handle());
        assertFalse(handle.isHeld());
        assertEquals(LostHold.Cause.GONE, assertThrows(LostHoldException.class, handle::release).lostCause());
        assertEquals(LostHold.Cause.GONE, lostA.poll(10, TimeUnit.SECONDS).cause());
    }

    @Test
    void aReleasedHandlesLostStageIsCancelled() throws Exception {
        LockHandle handle = a.lock("x").acquire();
        CompletableFuture<LostHold> lost = handle.lost().toCompletableFuture();
        handle.release();
        assertThrows(java.util.concurrent.CancellationException.class, () -> lost.get(10, TimeUnit.SECONDS));
        assertThrows(IllegalStateException.class, handle::release);
        handle.close();
    }

    @Test
    void loseHoldInterruptsARunningCallLockedBody() throws Exception {
        CountDownLatch bodyRuns = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        Future<Boolean> call = threads.submit(() -> {
            try {
                a.lock("batch").callLocked(Duration.ZERO, hold -> {
                    bodyRuns.countDown();
                    never.await();
                    return "done";
                });
                return false;
            } catch (LostHoldException e) {
                assertEquals(LostHold.Cause.GONE, e.lostCause());
                assertTrue(e.getSuppressed()[0] instanceof InterruptedException, "the body was interrupted");
                return !Thread.currentThread().isInterrupted();
            }
        });
        bodyRuns.await();
        store.loseHold("batch");
        assertTrue(call.get(10, TimeUnit.SECONDS), "LostHoldException, with the interrupt cleared");
        assertFalse(b.lock("batch").isLocked());
    }

    @Test
    void callLockedReturnsTheBodysValueAndReleases() throws Exception {
        DistributedLock lock = a.lock("sum");
        assertEquals(Integer.valueOf(42), lock.<Integer>callLocked(Duration.ofSeconds(1), hold -> {
            assertTrue(hold.fencingToken() > 0);
            return 42;
        }));
        assertFalse(lock.isLocked());
        b.lock("sum").lock();
        assertThrows(TimeoutException.class, () -> lock.callLocked(Duration.ZERO, hold -> 1));
    }

    @Test
    void whileUnavailableCallsThrowAndRenewedHoldsBecomeUnrenewableAfterTheLease() throws Exception {
        InMemorySynchronizers.Store shortLease = InMemorySynchronizers.newStore(Duration.ofMillis(200));
        InMemorySynchronizers client = shortLease.client();
        BlockingQueue<LostHold> lost = new LinkedBlockingQueue<>();
        client.addLostHoldListener(lost::add);
        DistributedLock lock = client.lock("cache");
        lock.lock();
        LockHandle fixed = client.lock("other").acquire(Duration.ofHours(1));

        shortLease.setUnavailable(true);
        assertThrows(SynchronizerUnavailableException.class, () -> client.lock("third").tryLock());
        assertThrows(SynchronizerUnavailableException.class, lock::isLocked);
        assertThrows(SynchronizerUnavailableException.class, () -> client.semaphore("s").availablePermits());
        assertTrue(lock.isHeldByCurrentThread(), "local knowledge still answers");

        LostHold report = lost.poll(10, TimeUnit.SECONDS);
        assertNotNull(report);
        assertEquals(LostHold.Cause.UNRENEWABLE, report.cause());
        assertEquals("cache", report.name());
        assertFalse(lock.isHeldByCurrentThread());
        assertEquals(LostHold.Cause.UNRENEWABLE, assertThrows(LostHoldException.class, lock::unlock).lostCause());
        assertTrue(fixed.isHeld(), "a fixed lease is not renewed, so an outage does not end it");

        shortLease.setUnavailable(false);
        assertTrue(shortLease.client().lock("cache").tryLock());
        fixed.release();
    }

    @Test
    void anOutageShorterThanTheLeaseLosesNothing() throws Exception {
        DistributedLock lock = a.lock("short");
        lock.lock();
        store.setUnavailable(true);
        store.setUnavailable(false);
        assertTrue(lock.verifyHeld());
        lock.unlock();
        assertTrue(lostA.isEmpty());
    }

    @Test
    void anOutageWakesAWaiterWithUnavailable() throws Exception {
        a.lock("busy").lock();
        Future<?> waiter = threads.submit(() -> {
            b.lock("busy").lockInterruptibly();
            return null;
        });
        awaitQueued(a.lock("busy"), 1);
        store.setUnavailable(true);
        ExecutionException e = assertThrows(ExecutionException.class, () -> waiter.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof SynchronizerUnavailableException, e.toString());
        store.setUnavailable(false);
    }

    @Test
    void anUnlockDuringAnOutageThrowsAndDropsTheHold() {
        DistributedLock lock = a.lock("drop");
        lock.lock();
        store.setUnavailable(true);
        assertThrows(SynchronizerUnavailableException.class, lock::unlock);
        store.setUnavailable(false);
        assertFalse(lock.isLocked());
    }

    @Test
    void permitsBelongToTheClientThatTookThem() throws Exception {
        DistributedSemaphore semA = a.semaphore("pool");
        DistributedSemaphore semB = b.semaphore("pool");
        assertTrue(semA.trySetPermits(2));
        assertFalse(semB.trySetPermits(5));
        semA.acquire(2);
        assertEquals(0, semB.availablePermits());
        assertFalse(semB.tryAcquire());
        assertThrows(IllegalStateException.class, semB::release, "a client cannot release what it does not hold");
        assertEquals(0, semB.availablePermits(), "and a stray release does not inflate the pool");
        assertEquals(a.clientId(), semB.snapshot().holders().get(0).clientId());
        in(() -> {
            semA.release(); // any thread of the client may release its permits
            return null;
        });
        assertTrue(semB.tryAcquire(5, TimeUnit.SECONDS));
        assertThrows(IllegalStateException.class, () -> semA.release(2));
        semA.release();
        semB.addPermits(1); // the way to hand out new permits: total 3, client B holds 1
        assertEquals(2, semA.availablePermits());
    }

    @Test
    void lostPermitsAreReportedAndTheirReleaseThrows() throws Exception {
        DistributedSemaphore sem = a.semaphore("gpu");
        sem.trySetPermits(3);
        sem.acquire();
        PermitHandle handle = sem.acquirePermits(2);
        CompletableFuture<LostHold> handleLost = handle.lost().toCompletableFuture();
        assertEquals(2, store.loseHold("gpu"));
        assertEquals(LostHold.Cause.GONE, handleLost.get(10, TimeUnit.SECONDS).cause());
        assertEquals(3, b.semaphore("gpu").availablePermits());
        assertThrows(LostHoldException.class, sem::release);
        assertThrows(LostHoldException.class, handle::release);
        List<LostHold> told = new ArrayList<>();
        told.add(lostA.poll(10, TimeUnit.SECONDS));
        told.add(lostA.poll(10, TimeUnit.SECONDS));
        assertTrue(told.stream().allMatch(l -> l.kind().equals("semaphore") && l.cause() == LostHold.Cause.GONE));
    }

    @Test
    void aSemaphoreServesWaitersInOrder() throws Exception {
        DistributedSemaphore sem = a.semaphore("fifo");
        sem.trySetPermits(2);
        sem.acquire(2);
        Future<?> big = threads.submit(() -> {
            b.semaphore("fifo").acquire(2);
            return null;
        });
        awaitSemaphoreQueue(sem, 1);
        Future<Boolean> small = threads.submit(() -> b.semaphore("fifo").tryAcquire(1, 10, TimeUnit.SECONDS));
        awaitSemaphoreQueue(sem, 2);
        sem.release(1);
        assertFalse(b.semaphore("fifo").tryAcquire(1, 0, TimeUnit.SECONDS), "a timed try honours the queue");
        sem.release(1);
        big.get(10, TimeUnit.SECONDS);
        assertFalse(small.isDone());
        small.cancel(true);
    }

    @Test
    void readWriteLockDowngradesAndRefusesUpgrade() throws Exception {
        DistributedReadWriteLock rw = a.readWriteLock("doc");
        rw.writeLock().lock();
        rw.readLock().lock();
        rw.writeLock().unlock();
        assertTrue(in(() -> {
            DistributedLock read = b.readWriteLock("doc").readLock();
            boolean shared = read.tryLock();
            read.unlock();
            return shared;
        }));
        assertFalse(rw.writeLock().tryLock());
        assertThrows(IllegalMonitorStateException.class, rw.writeLock()::lock);
        assertEquals(1, rw.snapshot().readers().size());
        rw.readLock().unlock();
        assertThrows(UnsupportedOperationException.class, rw.readLock()::newCondition);
    }

    @Test
    void aConditionIsSharedByTheClientsThatMakeIt() throws Exception {
        DistributedLock lockA = a.lock("buffer");
        Condition notEmptyA = lockA.newCondition();
        CountDownLatch waiting = new CountDownLatch(1);
        Future<Integer> waiter = threads.submit(() -> {
            lockA.lock();
            try {
                lockA.lock();
                waiting.countDown();
                notEmptyA.await();
                return lockA.getHoldCount();
            } finally {
                lockA.unlock();
                lockA.unlock();
            }
        });
        waiting.await();
        DistributedLock lockB = b.lock("buffer");
        Condition notEmptyB = lockB.newCondition();
        assertThrows(IllegalMonitorStateException.class, notEmptyB::signal);
        lockB.lock(); // granted only once the waiter released its hold in await()
        try {
            notEmptyB.signal();
        } finally {
            lockB.unlock();
        }
        assertEquals(2, waiter.get(10, TimeUnit.SECONDS), "the hold count comes back");
    }

    /**
     * conditionWaiters counts a thread from its await until its signal, exactly at the moment the
     * signaller's unlock returns: the count a test waits on instead of sleeping.
     */
    @Test
    void conditionWaitersCountsTheThreadsAwaitingASignalOfEveryClient() throws Exception {
        assertEquals(0, store.conditionWaiters("buffer"), "a name never used");
        assertThrows(NullPointerException.class, () -> store.conditionWaiters(null));
        assertThrows(IllegalArgumentException.class, () -> store.conditionWaiters(""));
        DistributedLock lockA = a.lock("buffer");
        DistributedLock lockB = b.lock("buffer");
        Condition indexedA = lockA.newCondition();
        Condition namedB = lockB.newCondition("ready");
        Future<Boolean> first = threads.submit(() -> awaitHeld(lockA, indexedA));
        Future<Boolean> second = threads.submit(() -> awaitHeld(lockB, namedB));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (store.conditionWaiters("buffer") != 2) {
            assertTrue(System.nanoTime() < deadline, "both wait within 10 s");
            Thread.onSpinWait();
        }
        assertEquals(0, store.conditionWaiters("other"), "another name's conditions are not counted");
        lockB.lock();
        try {
            lockB.newCondition().signal();
        } finally {
            lockB.unlock();
        }
        assertEquals(1, store.conditionWaiters("buffer"), "the signalled one no longer counts");
        assertTrue(first.get(10, TimeUnit.SECONDS));
        lockA.lock();
        try {
            lockA.newCondition("ready").signalAll();
        } finally {
            lockA.unlock();
        }
        assertEquals(0, store.conditionWaiters("buffer"));
        assertTrue(second.get(10, TimeUnit.SECONDS));
        lockA.lock();
        try {
            assertFalse(indexedA.await(1, TimeUnit.MILLISECONDS));
        } finally {
            lockA.unlock();
        }
        assertEquals(0, store.conditionWaiters("buffer"), "a timed-out waiter no longer counts");
    }

    /**
     * As RedisSynchronizers.close(): a handle still held when its client closes is no longer held,
     * its lost() stage completes ABANDONED, and the listeners are not told (the caller chose it).
     */
    @Test
    void closeCompletesTheLostStageOfEveryHandleStillHeld() throws Exception {
        LockHandle lockHold = a.lock("job").tryAcquire(Duration.ZERO).orElseThrow();
        assertTrue(a.semaphore("pool").trySetPermits(1));
        PermitHandle permit = a.semaphore("pool").tryAcquirePermits(1, Duration.ZERO).orElseThrow();
        a.close();
        LostHold lockReport = lockHold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        LostHold permitReport = permit.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(LostHold.Cause.ABANDONED, lockReport.cause());
        assertEquals("job", lockReport.name());
        assertEquals(LostHold.Cause.ABANDONED, permitReport.cause());
        assertFalse(lockHold.isHeld());
        assertFalse(permit.isHeld());
        assertTrue(lostA.isEmpty(), "listeners are not told: " + lostA);
    }

    private static boolean awaitHeld(DistributedLock lock, Condition condition) throws InterruptedException {
        lock.lock();
        try {
            return condition.await(10, TimeUnit.SECONDS);
        } finally {
            lock.unlock();
        }
    }

    @Test
    void aLatchOpensForEveryClient() throws Exception {
        DistributedCountDownLatch latchA = a.countDownLatch("start");
        assertTrue(latchA.trySetCount(2));
        assertFalse(b.countDownLatch("start").trySetCount(3));
        CompletableFuture<Void> async = b.countDownLatch("start").awaitAsync().toCompletableFuture();
        Future<Boolean> waiter = threads.submit(() -> b.countDownLatch("start").await(10, TimeUnit.SECONDS));
        latchA.countDown();
        assertFalse(async.isDone());
        b.countDownLatch("start").countDown();
        assertTrue(waiter.get(10, TimeUnit.SECONDS));
        async.get(10, TimeUnit.SECONDS);
        assertEquals(0, latchA.getCount());
    }

    @Test
    void aCancelledAsyncAcquisitionIsWithdrawn() throws Exception {
        DistributedLock lockA = a.fairLock("async");
        lockA.lock();
        CompletableFuture<LockHandle> pending = b.fairLock("async").acquireAsync().toCompletableFuture();
        awaitQueued(lockA, 1);
        pending.cancel(false);
        awaitQueued(lockA, 0);
        lockA.unlock();
        assertFalse(lockA.isLocked());
        LockHandle next = b.fairLock("async").acquireAsync().toCompletableFuture().get(10, TimeUnit.SECONDS);
        next.release();
    }

    @Test
    void aFixedLeaseRunsOutAsLeaseExpiredWithoutTellingListeners() throws Exception {
        LockHandle handle = a.lock("lease").acquire(Duration.ofMillis(50));
        assertEquals(LostHold.Cause.LEASE_EXPIRED, handle.lost().toCompletableFuture().get(10, TimeUnit.SECONDS).cause());
        assertFalse(a.lock("lease").isLocked());
        assertEquals(LostHold.Cause.LEASE_EXPIRED,
                assertThrows(LostHoldException.class, handle::release).lostCause());
        assertTrue(lostA.isEmpty());
        Optional<LockHandle> again = b.lock("lease").tryAcquire(Duration.ZERO);
        assertTrue(again.isPresent());
        assertTrue(again.get().fencingToken() > handle.fencingToken());
    }

    @Test
    void forceUnlockEndsTheHoldersHolds() throws Exception {
        a.lock("stuck").lock();
        assertTrue(b.lock("stuck").forceUnlock());
        assertEquals(LostHold.Cause.GONE, lostA.poll(10, TimeUnit.SECONDS).cause());
        assertFalse(b.lock("stuck").forceUnlock());
        assertThrows(LostHoldException.class, a.lock("stuck")::unlock);
    }

    @Test
    void aClosedClientsHoldsRunOutAfterTheLease() throws Exception {
        InMemorySynchronizers.Store shortLease = InMemorySynchronizers.newStore(Duration.ofMillis(100));
        InMemorySynchronizers dying = shortLease.client();
        dying.lock("leftover").lock();
        dying.close();
        assertThrows(IllegalStateException.class, () -> dying.lock("leftover").tryLock());
        assertTrue(shortLease.client().lock("leftover").tryLock(10, TimeUnit.SECONDS));
    }

    private static void awaitQueued(DistributedLock lock, int length) throws InterruptedException {
        while (lock.getQueueLength() != length) {
            Thread.sleep(1); // polls an observable state; no assertion on time
        }
    }

    private static void awaitSemaphoreQueue(DistributedSemaphore sem, int length) throws InterruptedException {
        while (sem.snapshot().queueLength() != length) {
            Thread.sleep(1);
        }
    }
}
