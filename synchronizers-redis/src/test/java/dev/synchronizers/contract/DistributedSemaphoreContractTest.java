package dev.synchronizers.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Kind;
import dev.synchronizers.fixture.LeakCheck;
import dev.synchronizers.fixture.SpecContext;
import dev.synchronizers.fixture.SynchronizerSpec;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * The contract of {@link DistributedSemaphore}: {@link java.util.concurrent.Semaphore}'s javadoc for
 * acquiring, timeouts, interrupts and argument checks, and ours for owned, leased permits. Each test
 * names the sentence it checks.
 */
@Tag("redis")
@ExtendWith(LeakCheck.class)
class DistributedSemaphoreContractTest {

    /* --------------- trySetPermits and addPermits --------------- */

    /** trySetPermits(): "Sets the total number of permits if it has not been set yet." */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void trySetPermits_secondTime_returnsFalseAndKeepsTheFirst(DistributedSemaphore semaphore, SpecContext context) {
        assertTrue(semaphore.trySetPermits(3));
        assertFalse(context.<DistributedSemaphore>inOtherClient().trySetPermits(7));
        assertEquals(3, semaphore.availablePermits());
    }

    /**
     * trySetPermits(): "A negative total is accepted, as Semaphore's constructor accepts it: nobody
     * acquires until addPermits raises it above zero."
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void trySetPermits_negative_isAcceptedAndNobodyAcquiresUntilRaised(DistributedSemaphore semaphore,
            SpecContext context) throws Exception {
        assertTrue(semaphore.trySetPermits(-2));
        assertEquals(-2, semaphore.availablePermits());
        assertFalse(semaphore.tryAcquire());
        assertFalse(semaphore.tryAcquire(1, 100, TimeUnit.MILLISECONDS));
        assertEquals(0, semaphore.drainPermits(), "nothing to drain");
        semaphore.addPermits(2);
        assertEquals(0, semaphore.availablePermits());
        assertFalse(semaphore.tryAcquire());
        semaphore.addPermits(1);
        assertTrue(semaphore.tryAcquire());
        semaphore.release();
        assertEquals(1, semaphore.availablePermits());
    }

    /** addPermits(): grows the total, and a waiter that needed the new permits gets them. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void addPermits_positive_wakesAWaiterThatNeedsThem(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(1);
        semaphore.acquire();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            DistributedSemaphore other = context.inOtherClient();
            boolean acquired = other.tryAcquire(30, TimeUnit.SECONDS);
            other.release();
            return acquired;
        });
        context.awaitRedisWaiter();
        semaphore.addPermits(1);
        assertTrue(waiter.get());
        semaphore.release();
        assertEquals(2, semaphore.availablePermits());
    }

    /** addPermits(): "IllegalArgumentException if the total would become negative"; nothing changes. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void addPermits_belowZero_throwsAndChangesNothing(DistributedSemaphore semaphore, SpecContext context) {
        semaphore.trySetPermits(2);
        semaphore.addPermits(-1);
        assertEquals(1, semaphore.availablePermits());
        assertThrows(IllegalArgumentException.class, () -> semaphore.addPermits(-2));
        assertEquals(1, semaphore.availablePermits());
    }

    /* --------------- acquire --------------- */

    /** acquire(): takes a permit; availablePermits() is the total minus what holders hold. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquire_available_takesPermitsFromThePool(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(5);
        semaphore.acquire();
        semaphore.acquire(2);
        assertEquals(2, semaphore.availablePermits());
        assertEquals(2, context.<DistributedSemaphore>inOtherClient().availablePermits(), "the same for every client");
        semaphore.release(3);
        assertEquals(5, semaphore.availablePermits());
    }

    /** acquire(permits): "Zero permits succeed at once", even with none available. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquire_zero_returnsAtOnce(DistributedSemaphore semaphore, SpecContext context) throws Exception {
        semaphore.trySetPermits(0);
        semaphore.acquire(0);
        assertTrue(semaphore.tryAcquire(0));
        assertTrue(semaphore.tryAcquire(0, 1, TimeUnit.SECONDS));
    }

    /** acquire(permits): "IllegalArgumentException if permits is negative"; nothing changes. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquire_negative_throwsAndChangesNothing(DistributedSemaphore semaphore, SpecContext context) {
        semaphore.trySetPermits(2);
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> semaphore.acquire(-1));
        assertTrue(negative.getMessage().contains("-1"), negative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> semaphore.tryAcquire(-2));
        assertThrows(IllegalArgumentException.class, () -> semaphore.tryAcquire(-2, 1, TimeUnit.SECONDS));
        assertThrows(IllegalArgumentException.class, () -> semaphore.release(-1));
        assertEquals(2, semaphore.availablePermits());
    }

    /**
     * acquire(permits): "More permits than the total: waits, as Semaphore does, until addPermits
     * raises the total far enough and the permits are free."
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquire_moreThanTotal_waitsUntilAddPermitsRaisesIt(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(2);
        Background<Integer> waiter = Background.start("waiter", () -> {
            DistributedSemaphore other = context.inOtherClient();
            other.acquire(3);
            int left = other.availablePermits();
            other.release(3);
            return left;
        });
        Await.parked(waiter.thread());
        semaphore.addPermits(1);
        assertEquals(0, waiter.get(), "took all three");
        assertEquals(3, semaphore.availablePermits());
    }

    /** acquire(permits): more than the total, "InterruptedException if ... interrupted while waiting"; nothing taken. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquire_moreThanTotalInterrupted_throwsAndTakesNothing(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(1);
        Background<Boolean> waiter = Background.start("waiter", () -> {
            try {
                semaphore.acquire(2);
                semaphore.release(2);
                return false;
            } catch (InterruptedException e) {
                return !Thread.currentThread().isInterrupted();
            }
        });
        Await.parked(waiter.thread());
        waiter.thread().interrupt();
        assertTrue(waiter.get(), "threw InterruptedException with the status cleared");
        assertEquals(1, semaphore.availablePermits(), "took nothing");
        assertEquals(0, context.redis().exists(context.queueKey()), "no place left in the queue");
    }

    /** acquire(): "InterruptedException if the current thread is interrupted on entry", even with permits free. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquire_interruptedOnEntry_throwsAndTakesNothing(DistributedSemaphore semaphore, SpecContext context) {
        semaphore.trySetPermits(1);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, semaphore::acquire);
        assertFalse(Thread.interrupted(), "interrupt status cleared");
        assertEquals(1, semaphore.availablePermits());
    }

    /** acquire(): "InterruptedException if ... interrupted while waiting"; nothing is taken and the queue is left. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquire_interruptedWhileWaiting_throwsTakesNothingAndLeavesQueue(DistributedSemaphore semaphore,
            SpecContext context) throws Exception {
        semaphore.trySetPermits(1);
        DistributedSemaphore other = context.inOtherClient();
        other.acquire();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            try {
                semaphore.acquire();
                semaphore.release();
                return false;
            } catch (InterruptedException e) {
                return !Thread.currentThread().isInterrupted();
            }
        });
        context.awaitRedisWaiter();
        Await.parked(waiter.thread());
        waiter.thread().interrupt();
        assertTrue(waiter.get(), "threw InterruptedException with the status cleared");
        assertEquals(0, context.redis().exists(context.queueKey()), "left the queue");
        other.release();
        assertEquals(1, semaphore.availablePermits(), "the interrupted waiter took nothing");
    }

    /* --------------- tryAcquire --------------- */

    /** tryAcquire(permits): all or nothing: false, and nothing taken, when fewer are free. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void tryAcquire_fewerAvailable_returnsFalseAndTakesNone(DistributedSemaphore semaphore, SpecContext context) {
        semaphore.trySetPermits(3);
        DistributedSemaphore other = context.inOtherClient();
        assertTrue(other.tryAcquire(2));
        assertFalse(semaphore.tryAcquire(2));
        assertEquals(1, semaphore.availablePermits());
        assertTrue(semaphore.tryAcquire());
        assertFalse(semaphore.tryAcquire());
        semaphore.release();
        other.release(2);
    }

    /** tryAcquire(permits): more than the total: "false", as Semaphore returns, not an exception; nothing changes. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void tryAcquire_moreThanTotal_returnsFalseAndChangesNothing(DistributedSemaphore semaphore, SpecContext context) {
        semaphore.trySetPermits(2);
        assertFalse(semaphore.tryAcquire(3));
        assertFalse(semaphore.tryAcquire(Integer.MAX_VALUE));
        assertEquals(2, semaphore.availablePermits());
        assertTrue(semaphore.tryAcquire(2));
        semaphore.release(2);
    }

    /** tryAcquire(permits, timeout): more than the total waits, and returns "false if the waiting time elapsed first". */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void tryAcquire_moreThanTotalTimedOut_returnsFalseAndLeavesNoTrace(DistributedSemaphore semaphore,
            SpecContext context) throws Exception {
        semaphore.trySetPermits(2);
        assertFalse(semaphore.tryAcquire(3, 200, TimeUnit.MILLISECONDS));
        assertFalse(semaphore.tryAcquire(3, 0, TimeUnit.MILLISECONDS));
        assertEquals(2, semaphore.availablePermits());
        assertEquals(0, context.redis().exists(context.queueKey()), "no place left in the queue");
    }

    /** tryAcquire(timeout): "false if the waiting time elapsed first"; nothing taken, no place left behind. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void tryAcquire_timedOut_returnsFalseAndLeavesNoTrace(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(1);
        DistributedSemaphore other = context.inOtherClient();
        other.acquire();
        assertFalse(semaphore.tryAcquire(200, TimeUnit.MILLISECONDS));
        assertFalse(semaphore.tryAcquire(0, TimeUnit.MILLISECONDS));
        assertEquals(0, context.redis().exists(context.queueKey()), "no place left in the queue");
        other.release();
    }

    /** tryAcquire(timeout): succeeds when a permit is released in time, by another client. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void tryAcquire_releasedInTime_returnsTrue(DistributedSemaphore semaphore, SpecContext context) throws Exception {
        semaphore.trySetPermits(1);
        DistributedSemaphore other = context.inOtherClient();
        other.acquire();
        Background<Boolean> waiter = Background.start("waiter", () -> {
            boolean acquired = semaphore.tryAcquire(30, TimeUnit.SECONDS);
            if (acquired) {
                semaphore.release();
            }
            return acquired;
        });
        context.awaitRedisWaiter();
        other.release();
        assertTrue(waiter.get());
    }

    /* --------------- release --------------- */

    /** release(): permits belong to the client: any of its threads may release what another acquired. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void release_byAnotherThreadOfTheClient_returnsThePermit(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(1);
        semaphore.acquire();
        Background.start("other thread", () -> {
            semaphore.release();
            return null;
        }).get();
        assertEquals(1, semaphore.availablePermits());
    }

    /** release(): "IllegalStateException if this client holds fewer permits; nothing changes." */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void release_moreThanTheClientHolds_throwsAndChangesNothing(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(3);
        semaphore.acquire();
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> semaphore.release(2));
        assertTrue(thrown.getMessage().contains(context.name()), thrown.getMessage());
        DistributedSemaphore other = context.inOtherClient();
        assertThrows(IllegalStateException.class, other::release, "another client cannot release our permit");
        assertEquals(2, semaphore.availablePermits(), "the pool did not grow");
        semaphore.release();
        assertThrows(IllegalStateException.class, semaphore::release);
        assertEquals(3, semaphore.availablePermits());
    }

    /* --------------- drainPermits --------------- */

    /** drainPermits(): "Acquires all permits available now ... returns the number acquired." */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void drainPermits_takesEveryFreePermit(DistributedSemaphore semaphore, SpecContext context) throws Exception {
        semaphore.trySetPermits(4);
        DistributedSemaphore other = context.inOtherClient();
        other.acquire();
        assertEquals(3, semaphore.drainPermits());
        assertEquals(0, semaphore.availablePermits());
        assertEquals(0, semaphore.drainPermits());
        semaphore.release(3);
        other.release();
        assertEquals(4, semaphore.availablePermits());
    }

    /* --------------- permit handles --------------- */

    /** PermitHandle: "any thread may release them"; released, they are free for every client. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquirePermits_releasedByAnotherThread_freesThemForAnotherClient(DistributedSemaphore semaphore,
            SpecContext context) throws Exception {
        semaphore.trySetPermits(2);
        PermitHandle handle = semaphore.acquirePermits(2);
        assertEquals(2, handle.permits());
        assertTrue(handle.isHeld());
        DistributedSemaphore other = context.inOtherClient();
        assertFalse(other.tryAcquire());
        Background.start("releaser", () -> {
            handle.release();
            return null;
        }).get();
        assertFalse(handle.isHeld());
        assertTrue(other.tryAcquire(2));
        other.release(2);
    }

    /** release(permits): "Permits held by a PermitHandle ... are neither released nor counted, and only the handle releases them." */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void release_ofTheSemaphore_neverReleasesAHandlesPermits(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(3);
        PermitHandle handle = semaphore.acquirePermits(1);
        semaphore.acquire();
        assertThrows(IllegalStateException.class, () -> semaphore.release(2));
        semaphore.release();
        assertThrows(IllegalStateException.class, semaphore::release);
        assertEquals(2, semaphore.availablePermits(), "the handle still holds its permit");
        handle.release();
        assertThrows(IllegalStateException.class, handle::release, "release() twice");
        handle.close();   // does nothing once released
        assertEquals(3, semaphore.availablePermits());
    }

    /** tryAcquirePermits(permits, wait): "Duration.ZERO (or less) tries once"; empty, and no place left behind. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void tryAcquirePermits_zeroWhileTaken_isEmptyAndLeavesNoTrace(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(1);
        DistributedSemaphore other = context.inOtherClient();
        other.acquire();
        assertEquals(Optional.empty(), semaphore.tryAcquirePermits(1, Duration.ZERO));
        assertEquals(0, context.redis().exists(context.queueKey()), "no place left in the queue");
        other.release();
        PermitHandle handle = semaphore.tryAcquirePermits(1, Duration.ZERO).orElseThrow();
        handle.close();
        assertEquals(1, semaphore.availablePermits());
    }

    /** acquirePermits(): "IllegalArgumentException if permits is below 1"; null wait: NPE; nothing changes. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquirePermits_badArguments_throwAndChangeNothing(DistributedSemaphore semaphore, SpecContext context) {
        semaphore.trySetPermits(2);
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> semaphore.acquirePermits(0));
        assertTrue(zero.getMessage().contains("permits"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> semaphore.tryAcquirePermits(-1, Duration.ZERO));
        assertThrows(NullPointerException.class, () -> semaphore.tryAcquirePermits(1, null));
        assertEquals(2, semaphore.availablePermits());
    }

    /* --------------- one API: the handle methods wait as the plain ones do --------------- */

    /**
     * tryAcquire(1, timeout) and tryAcquirePermits(1, wait) on a semaphore whose total was never set
     * (0 permits, as {@code new Semaphore(0)}): both wait and report the timeout, neither throws;
     * nothing is taken and no place is left in the queue.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void timedAcquire_totalNeverSet_bothWaitAndTimeOut(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        assertFalse(semaphore.tryAcquire(1, 300, TimeUnit.MILLISECONDS), "tryAcquire(1, 300 ms)");
        assertEquals(Optional.empty(), semaphore.tryAcquirePermits(1, Duration.ofMillis(300)),
                "tryAcquirePermits(1, 300 ms)");
        assertEquals(0, semaphore.availablePermits());
        assertEquals(0, context.redis().exists(context.queueKey()), "no place left in the queue");
    }

    /**
     * acquire(3) and acquirePermits(3) above a total of 2 both wait, as Semaphore does, until
     * addPermits raises the total far enough; then each takes its permits.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquireAboveTotal_plainAndHandle_bothWaitUntilAddPermits(DistributedSemaphore semaphore,
            SpecContext context) throws Exception {
        semaphore.trySetPermits(2);
        Background<Integer> plain = Background.start("plain", () -> {
            DistributedSemaphore other = context.inOtherClient();
            other.acquire(3);
            other.release(3);
            return 3;
        });
        Background<Integer> handled = Background.start("handle", () -> {
            DistributedSemaphore other = context.inOtherClient();
            try (PermitHandle handle = other.acquirePermits(3)) {
                return handle.permits();
            }
        });
        Await.waitingForWakeup(plain.thread());
        Await.waitingForWakeup(handled.thread());
        semaphore.addPermits(1);
        assertEquals(3, plain.get(), "acquire(3) took its permits");
        assertEquals(3, handled.get(), "acquirePermits(3) took its permits");
        assertEquals(3, semaphore.availablePermits());
    }
}
