package dev.synchronizers.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.ReadWriteLockSnapshot;
import dev.synchronizers.SemaphoreSnapshot;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Kind;
import dev.synchronizers.fixture.LeakCheck;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SpecContext;
import dev.synchronizers.fixture.SynchronizerSpec;
import dev.synchronizers.fixture.Topology;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * The snapshots: {@link DistributedLock#snapshot()}, {@link DistributedLock#getQueueLength()},
 * {@link DistributedReadWriteLock#snapshot()} and {@link DistributedSemaphore#snapshot()}, checked
 * as an operator would: what one client sees of the holders and waiters of another.
 *
 * <p>On the {@link Topology#REDLOCK} topology (the {@code cluster} profile) the lock points run on
 * the quorum lock, which has only the non-fair kind ({@link Topology#supports}): the points about
 * fair queues, read-write locks and semaphores do not apply to it, and neither does a read-write
 * lock's part of the closed-client point (its own test, skipped on a Redlock). Its queue points
 * have every waiting client's record on every node; where clients' records are on different nodes
 * a quorum may count fewer than their sum ({@link DistributedLock#getQueueLength()}), which no
 * point here asserts.
 */
@Tag("redis")
@ExtendWith(LeakCheck.class)
class SnapshotContractTest {

    /** A lock nobody holds: no holders, nobody queued. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.READ_LOCK, Kind.WRITE_LOCK})
    void snapshot_free_showsNoHolderAndNoQueue(DistributedLock lock, SpecContext context) {
        LockSnapshot snapshot = lock.snapshot();

        assertEquals(context.name(), snapshot.name());
        assertFalse(snapshot.isLocked());
        assertEquals(List.of(), snapshot.holders());
        assertEquals(0, snapshot.queueLength());
        assertFalse(lock.hasQueuedThreads());
        assertTrue(context.keys().isEmpty(), "a snapshot writes nothing: " + context.keys());
    }

    /**
     * A lock another client holds: the snapshot names that client, the holding thread, the token
     * the holder sees, a lease within the client's; the renewal is known only to the holder.
     * A lock that client caches is held in the store by the client, not a thread: the store has no
     * thread to show (-1) and the token the cache began with, no later than the holder's; the
     * holder's own snapshot shows its thread, its token and {@code CACHED}
     * (LockSnapshot.Renewal#CACHED, RedisSynchronizers.Builder#lockCaching).
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.READ_LOCK, Kind.WRITE_LOCK})
    void snapshot_heldByAnotherClient_namesItsClientThreadTokenAndLease(DistributedLock lock, SpecContext context) {
        DistributedLock held = context.lockInOtherClient();
        held.lock();
        try {
            LockSnapshot seen = lock.snapshot();

            assertEquals(1, seen.holders().size(), () -> "holders " + seen.holders());
            LockSnapshot.Holder holder = seen.holders().get(0);
            assertEquals(context.otherClientId(), holder.clientId());
            if (context.caches()) {
                assertEquals(-1, holder.threadId(), "the store has the client, not its thread");
                assertTrue(holder.fencingToken() <= held.fencingToken(), () -> "the cache's first token " + holder);
            } else {
                assertEquals(Thread.currentThread().getId(), holder.threadId());
                assertEquals(held.fencingToken(), holder.fencingToken());
            }
            assertTrue(holder.leaseRemainingMillis() > 0
                    && holder.leaseRemainingMillis() <= SpecContext.LEASE.toMillis(), () -> "lease " + holder);
            assertEquals(LockSnapshot.Renewal.UNKNOWN, holder.renewal(), "another client's renewal is unknown");
            LockSnapshot.Holder own = held.snapshot().holders().get(0);
            if (context.caches()) {
                assertEquals(LockSnapshot.Renewal.CACHED, own.renewal(), "the holder knows it caches it");
                assertEquals(Thread.currentThread().getId(), own.threadId());
                assertEquals(held.fencingToken(), own.fencingToken());
            } else {
                assertEquals(LockSnapshot.Renewal.RENEWED, own.renewal(), "the holder knows its watchdog renews it");
            }
        } finally {
            held.unlock();
        }
        held.lock(1, TimeUnit.MINUTES);
        try {
            assertEquals(LockSnapshot.Renewal.FIXED, held.snapshot().holders().get(0).renewal());
        } finally {
            held.unlock();
        }
    }

    /**
     * A lock this client caches (LockSnapshot.Renewal#CACHED): its own snapshot shows the cache with
     * the thread that holds it locally and its token, then, once idle, thread -1 and the latest
     * token taken from it; another client sees the client, no thread and an unknown renewal.
     * toString() says so too, without a network call.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.CACHED_LOCK)
    void snapshot_cachedByThisClient_showsTheLocalHolderOrIdle(DistributedLock lock, SpecContext context)
            throws Exception {
        lock.lock();
        long first = lock.fencingToken();
        LockSnapshot.Holder held = single(lock.snapshot());
        assertEquals(new LockSnapshot.Holder(context.clientId(), Thread.currentThread().getId(), first,
                held.leaseRemainingMillis(), LockSnapshot.Renewal.CACHED), held);
        assertTrue(held.leaseRemainingMillis() > 0 && held.leaseRemainingMillis() <= SpecContext.LEASE.toMillis());
        assertTrue(lock.toString().contains("cached by this client: held"), lock.toString());
        lock.unlock();

        LockSnapshot.Holder idle = single(lock.snapshot());
        assertEquals(-1, idle.threadId(), "nobody holds it locally");
        assertEquals(first, idle.fencingToken(), "the latest token taken from the cache");
        assertEquals(LockSnapshot.Renewal.CACHED, idle.renewal());
        assertTrue(lock.toString().contains("cached by this client: idle"), lock.toString());

        Background<Long> other = Background.start("other thread", () -> {
            lock.lock();
            try {
                LockSnapshot.Holder mine = single(lock.snapshot());
                assertEquals(Thread.currentThread().getId(), mine.threadId());
                assertEquals(lock.fencingToken(), mine.fencingToken());
                return lock.fencingToken();
            } finally {
                lock.unlock();
            }
        });
        long second = other.get();
        assertTrue(second > first);
        assertEquals(second, single(lock.snapshot()).fencingToken(), "the latest token taken from the cache");

        LockSnapshot.Holder seen = single(context.lockInOtherClient().snapshot());
        assertEquals(context.clientId(), seen.clientId());
        assertEquals(-1, seen.threadId());
        assertEquals(LockSnapshot.Renewal.UNKNOWN, seen.renewal());
    }

    /** Waiters queued in Redis (fair lock, write lock) are counted across clients. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.FAIR_LOCK, Kind.WRITE_LOCK})
    void getQueueLength_twoWaitersOfAnotherClient_countsTwo(DistributedLock lock, SpecContext context)
            throws Exception {
        lock.lock();
        List<Background<Void>> waiters = startWaiters(context, 2);
        try {
            assertEquals(2, lock.getQueueLength());
            assertTrue(lock.hasQueuedThreads());
            assertEquals(2, lock.snapshot().queueLength());
        } finally {
            lock.unlock();
        }
        assertNoneQueuedOnceDone(lock, waiters);
    }

    /**
     * A non-fair lock's waiters queue in their own client, whose first waiter records how many
     * wait: another client counts that record; the waiters' own client counts its line.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LOCK)
    void getQueueLength_nonFairWaitersOfAnotherClient_countedByTheirRecordAndTheirOwnLine(DistributedLock lock,
            SpecContext context) throws Exception {
        lock.lock();
        List<Background<Void>> first = startWaiters(context, 1);
        List<Background<Void>> second;
        try {
            assertEquals(1, lock.getQueueLength(), "the waiting client's record");
            second = startWaiters(context, 1);
            assertEquals(2, context.lockInOtherClient().getQueueLength(), "the waiting client's own line");
        } finally {
            lock.unlock();
        }
        first.get(0).get();
        second.get(0).get();
    }

    /**
     * Threads that wait behind a hold of their own client do not ask Redis, so nothing of them is
     * there to count; once their client passes the lock on to one of them, it records how many
     * still wait, and another client counts them.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LOCK)
    void getQueueLength_nonFairWaitersBehindTheirOwnClientsHold_countedByAnotherClientOnceTheyPassItOn(
            DistributedLock lock, SpecContext context) throws Exception {
        // Not with caching: the client passes its cached lock on to its own waiters locally,
        // without a round trip, so Redis never learns that more of them wait; another client
        // cannot count them (documented on RedisSynchronizers.Builder#lockCaching). Their own
        // client counts its line, as the first point here checks.
        org.junit.jupiter.api.Assumptions.assumeFalse(context.caches(),
                "a cached lock's local hand-overs record no waiters in Redis");
        DistributedLock theirs = context.lockInOtherClient();
        theirs.lock();
        CountDownLatch acquired = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        List<Background<Void>> waiters;
        try {
            waiters = startWaiters(context, 2, () -> {
                acquired.countDown();
                release.await();
            });
            assertEquals(2, theirs.getQueueLength(), "their own line");
        } finally {
            theirs.unlock();
        }
        Await.until("the lock is passed on to one of the waiters", () -> acquired.getCount() == 1);

        assertEquals(1, lock.getQueueLength(), "the waiter still in the other client's line");
        assertTrue(lock.hasQueuedThreads());

        release.countDown();
        assertNoneQueuedOnceDone(lock, waiters);
    }

    /**
     * A non-fair waiter that gave up while the lock stays held is not counted for long: its
     * client's record lasts only until its next try would have come (the holder's remaining lease,
     * plus a command's time), and no try renews it.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LOCK)
    void getQueueLength_nonFairWaiterOfAnotherClientGaveUp_notCountedOnceItsNextTryIsOverdue(DistributedLock lock,
            SpecContext context) throws Exception {
        DistributedLock theirs = context.lockInOtherClient();
        lock.lock();
        try {
            Background<Boolean> waiter = Background.start("waiter", () -> {
                try {
                    theirs.lockInterruptibly();
                } catch (InterruptedException e) {
                    return false;
                }
                theirs.unlock();
                return true;
            });
            Await.until("the waiter is counted", () -> lock.getQueueLength() == 1);
            waiter.thread().interrupt();
            assertFalse(waiter.get(), "the waiter gave up");

            Await.until("the record of the waiter that gave up is over", () -> lock.getQueueLength() == 0);
            assertTrue(lock.isHeldByCurrentThread(), "held throughout, by the watchdog's renewals");
        } finally {
            lock.unlock();
        }
    }

    /** The read-write lock's picture: the writer, and a waiting writer and a waiting reader. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.WRITE_LOCK)
    void readWriteSnapshot_writerWithWaitingWriterAndReader_showsAll(DistributedLock write, SpecContext context)
            throws Exception {
        DistributedReadWriteLock readWrite = context.client().readWriteLock(context.name());
        DistributedReadWriteLock other = context.otherClient().readWriteLock(context.name());
        write.lock();
        Background<Void> writer = startWaiter("writer", other.writeLock());
        Await.until("the writer is queued", () -> readWrite.snapshot().waitingWriters() == 1);
        Background<Void> reader = startWaiter("reader", other.readLock());
        Await.until("the reader sleeps", () -> RedisState.sleepsOnWakeup(reader.thread()));
        try {
            ReadWriteLockSnapshot seen = readWrite.snapshot();
            assertNotNull(seen.writer());
            assertEquals(context.clientId(), seen.writer().clientId());
            assertEquals(write.fencingToken(), seen.writer().fencingToken());
            assertEquals(List.of(), seen.readers());
            assertEquals(1, seen.waitingWriters());
            assertTrue(seen.readersWaiting());
            assertEquals(2, write.getQueueLength(), "a waiting writer, and readers marked as waiting");
        } finally {
            write.unlock();
        }
        writer.get();
        reader.get();
    }

    /** Two readers of two clients: both listed, each with its own token; no writer. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.READ_LOCK)
    void readWriteSnapshot_twoReaders_listsBothWithTheirTokens(DistributedLock read, SpecContext context) {
        DistributedLock otherRead = context.lockInOtherClient();
        read.lock();
        otherRead.lock();
        try {
            ReadWriteLockSnapshot seen = context.client().readWriteLock(context.name()).snapshot();
            assertNull(seen.writer());
            Map<String, Long> tokens = seen.readers().stream()
                    .collect(Collectors.toMap(LockSnapshot.Holder::clientId, LockSnapshot.Holder::fencingToken));
            assertEquals(Map.of(context.clientId(), read.fencingToken(),
                    context.otherClientId(), otherRead.fencingToken()), tokens);
            assertEquals(2, read.snapshot().holders().size(), "the read half's holders are the readers");
        } finally {
            otherRead.unlock();
            read.unlock();
        }
    }

    /** The semaphore's picture: total, free, permits per client summed over its grants, waiters. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void semaphoreSnapshot_permitsOfTwoClientsAndAWaiter_showsEach(DistributedSemaphore semaphore,
            SpecContext context) throws Exception {
        DistributedSemaphore other = context.inOtherClient();
        assertTrue(semaphore.trySetPermits(5));
        semaphore.acquire(2);
        semaphore.acquire();
        other.acquire();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            boolean acquired = other.tryAcquire(3, 30, TimeUnit.SECONDS);
            other.release(3);
            return acquired;
        });
        context.awaitRedisWaiter();
        SemaphoreSnapshot seen = semaphore.snapshot();

        assertEquals(5, seen.totalPermits());
        assertEquals(1, seen.availablePermits());
        assertEquals(1, seen.queueLength());
        Map<String, SemaphoreSnapshot.PermitHolder> byClient = seen.holders().stream()
                .collect(Collectors.toMap(SemaphoreSnapshot.PermitHolder::clientId, Function.identity()));
        SemaphoreSnapshot.PermitHolder mine = byClient.get(context.clientId());
        assertEquals(3, mine.permits());
        assertEquals(2, mine.grants());
        assertTrue(mine.leaseRemainingMillis() > 0 && mine.leaseRemainingMillis() <= SpecContext.LEASE.toMillis());
        assertEquals(1, byClient.get(context.otherClientId()).permits());

        semaphore.release(3);
        assertTrue(waiter.get());
        other.release();
        assertEquals(List.of(), semaphore.snapshot().holders());
    }

    /** A closed client takes no snapshot. */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.READ_LOCK, Kind.WRITE_LOCK})
    void snapshot_clientClosed_throwsIllegalState(DistributedLock lock, SpecContext context) {
        context.closeClient();
        assertThrows(IllegalStateException.class, lock::snapshot);
        assertThrows(IllegalStateException.class, lock::getQueueLength);
        assertThrows(IllegalStateException.class, lock::hasQueuedThreads);
    }

    /**
     * A closed client takes no snapshot of a read-write lock either. Skipped on a Redlock, whose
     * client has no read-write lock; its lock's kind does not matter here.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = {Kind.LOCK, Kind.FAIR_LOCK, Kind.READ_LOCK, Kind.WRITE_LOCK}, skipOn = Topology.REDLOCK)
    void readWriteSnapshot_clientClosed_throwsIllegalState(DistributedLock lock, SpecContext context) {
        DistributedReadWriteLock readWrite = context.client().readWriteLock(context.name());
        context.client().close();
        assertThrows(IllegalStateException.class, readWrite::snapshot);
    }

    /** A semaphore never set: no permits, no holders, nobody waiting; and the snapshot writes nothing. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void semaphoreSnapshot_neverSet_showsNothingAndWritesNothing(DistributedSemaphore semaphore,
            SpecContext context) {
        SemaphoreSnapshot seen = semaphore.snapshot();

        assertEquals(context.name(), seen.name());
        assertEquals(0, seen.totalPermits());
        assertEquals(0, seen.availablePermits());
        assertEquals(List.of(), seen.holders());
        assertEquals(0, seen.queueLength());
        assertTrue(context.keys().isEmpty(), "a snapshot writes nothing: " + context.keys());
    }

    /** A closed client takes no snapshot of a semaphore either. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void semaphoreSnapshot_clientClosed_throwsIllegalState(DistributedSemaphore semaphore, SpecContext context) {
        context.client().close();
        assertThrows(IllegalStateException.class, semaphore::snapshot);
    }

    /* --------------- helpers --------------- */

    /** The one holder of a lock's snapshot. */
    private static LockSnapshot.Holder single(LockSnapshot snapshot) {
        assertEquals(1, snapshot.holders().size(), () -> "holders " + snapshot.holders());
        return snapshot.holders().get(0);
    }

    /** Waits until each waiter has locked and unlocked, then checks that {@code lock} counts nobody waiting. */
    private static void assertNoneQueuedOnceDone(DistributedLock lock, List<Background<Void>> waiters)
            throws Exception {
        for (Background<Void> waiter : waiters) {
            waiter.get();
        }
        assertEquals(0, lock.getQueueLength(), "nobody waits once every waiter is done");
        assertFalse(lock.hasQueuedThreads());
    }

    /** Starts {@code count} threads of the other client that lock and unlock, and waits until each waits. */
    private static List<Background<Void>> startWaiters(SpecContext context, int count) {
        return startWaiters(context, count, () -> { });
    }

    /**
     * Starts {@code count} threads of the other client that lock, run {@code whileHeld} and unlock,
     * and waits until each waits.
     */
    private static List<Background<Void>> startWaiters(SpecContext context, int count, WhileHeld whileHeld) {
        List<Background<Void>> waiters = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            Background<Void> waiter = startWaiter("waiter-" + i, context.lockInOtherClient(), whileHeld);
            waiters.add(waiter);
            // The first sleeps on its wake-up after its try recorded it in Redis (or, behind a hold
            // of its own client, without a try); a later non-fair one waits in its client's line.
            Await.until(waiter.thread().getName() + " waits", () -> RedisState.sleepsOnWakeup(waiter.thread())
                    || Arrays.stream(waiter.thread().getStackTrace())
                            .anyMatch(frame -> frame.getMethodName().equals("waitInLine")));
        }
        return waiters;
    }

    /** What a waiter does while it holds the lock. */
    private interface WhileHeld {
        void run() throws InterruptedException;
    }

    private static Background<Void> startWaiter(String name, DistributedLock lock) {
        return startWaiter(name, lock, () -> { });
    }

    private static Background<Void> startWaiter(String name, DistributedLock lock, WhileHeld whileHeld) {
        CountDownLatch started = new CountDownLatch(1);
        Background<Void> waiter = Background.start(name, () -> {
            started.countDown();
            lock.lock();
            try {
                whileHeld.run();
            } finally {
                lock.unlock();
            }
            return null;
        });
        try {
            started.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return waiter;
    }
}
