package dev.synchronizers.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Kind;
import dev.synchronizers.fixture.LeakCheck;
import dev.synchronizers.fixture.SpecContext;
import dev.synchronizers.fixture.SynchronizerSpec;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Code written for {@link java.util.concurrent.Semaphore}, run against {@link DistributedSemaphore}:
 * the situations the JSR-166 TCK's semaphore tests check (a negative start, acquire and release in
 * one thread and across threads, timed and interrupted waits, draining, shrinking), written anew
 * for this API and its client-owned permits. Where the owned-permit model differs (a release of
 * permits never acquired), the test checks the documented difference and the way around it,
 * {@code addPermits}.
 */
@Tag("redis")
@ExtendWith(LeakCheck.class)
class SemaphoreJdkConformanceTest {

    /** As {@code new Semaphore(-1)}: available is negative, and nothing is acquired until it is raised. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void negativeStart_availableIsNegativeUntilRaised(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        assertTrue(semaphore.trySetPermits(-1));
        assertEquals(-1, semaphore.availablePermits());
        assertFalse(semaphore.tryAcquire());
        semaphore.addPermits(1);
        assertEquals(0, semaphore.availablePermits());
        semaphore.addPermits(1);
        assertEquals(1, semaphore.availablePermits());
        semaphore.acquire();
        assertEquals(0, semaphore.availablePermits());
        semaphore.release();
        assertEquals(1, semaphore.availablePermits());
    }

    /** As the TCK's acquire/release in one thread: every acquire is matched and the pool is whole again. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquireReleaseInOneThread_leavesThePoolWhole(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(1);
        for (int i = 0; i < 6; i++) {
            assertTrue(semaphore.tryAcquire(), "round " + i);
            assertEquals(0, semaphore.availablePermits());
            semaphore.release();
            semaphore.acquire();
            semaphore.release();
            assertTrue(semaphore.tryAcquire(1, 30, TimeUnit.SECONDS));
            semaphore.release();
        }
        assertEquals(1, semaphore.availablePermits());
    }

    /** As the TCK's acquire in one thread, release in another: another thread of the client may release. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void acquireInOneThreadReleaseInAnother_isAllowed(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(2);
        semaphore.acquire(2);
        Background<Integer> releaser = Background.start("releaser", () -> {
            semaphore.release(2);
            return semaphore.availablePermits();
        });
        assertEquals(2, releaser.get());
    }

    /**
     * The TCK releases before acquiring, so that a waiter in another thread proceeds. That is the
     * one deliberate difference: a release of permits never acquired throws and changes nothing;
     * {@code addPermits} hands out the permit instead, and the waiter proceeds.
     */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void releaseBeforeAcquire_throwsAndAddPermitsHandsThePermitOut(DistributedSemaphore semaphore,
            SpecContext context) throws Exception {
        semaphore.trySetPermits(0);
        assertThrows(IllegalStateException.class, semaphore::release);
        assertEquals(0, semaphore.availablePermits(), "the failed release added nothing");
        Background<Boolean> waiter = Background.start("waiter", () -> {
            DistributedSemaphore other = context.inOtherClient();
            other.acquire();
            other.release();
            return true;
        });
        // Above a total of 0, the waiter waits out of line, woken when the total grows.
        Await.parked(waiter.thread());
        semaphore.addPermits(1);
        assertTrue(waiter.get());
        assertEquals(1, semaphore.availablePermits());
    }

    /** As the TCK's timed tryAcquire that times out: false, and nothing taken. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void timedTryAcquire_nonePermitted_timesOutWithFalse(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(0);
        long start = System.nanoTime();
        assertFalse(semaphore.tryAcquire(50, TimeUnit.MILLISECONDS));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50), "waited the time out");
        assertFalse(semaphore.tryAcquire(2, 50, TimeUnit.MILLISECONDS));
        assertEquals(0, semaphore.availablePermits());
    }

    /** As the TCK's interrupted acquire and timed tryAcquire: InterruptedException, status cleared, nothing taken. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void interruptedWaits_throwAndTakeNothing(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(0);
        Background<Boolean> untimed = Background.start("untimed", () -> {
            try {
                semaphore.acquire();
                return false;
            } catch (InterruptedException e) {
                return !Thread.currentThread().isInterrupted();
            }
        });
        Background<Boolean> timed = Background.start("timed", () -> {
            try {
                semaphore.tryAcquire(3, 10, TimeUnit.MINUTES);
                return false;
            } catch (InterruptedException e) {
                return !Thread.currentThread().isInterrupted();
            }
        });
        Await.parked(untimed.thread());
        Await.parked(timed.thread());
        untimed.thread().interrupt();
        timed.thread().interrupt();
        assertTrue(untimed.get(), "acquire() threw InterruptedException with the status cleared");
        assertTrue(timed.get(), "tryAcquire(3, ...) above the total threw InterruptedException with the status cleared");
        assertEquals(0, semaphore.availablePermits());
    }

    /** As the TCK's drainPermits: takes all that is free, and 0 when none is. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void drainPermits_takesAllFreeThenNone(DistributedSemaphore semaphore, SpecContext context) {
        semaphore.trySetPermits(3);
        assertTrue(semaphore.tryAcquire());
        assertEquals(2, semaphore.drainPermits());
        assertEquals(0, semaphore.drainPermits());
        assertEquals(0, semaphore.availablePermits());
        semaphore.release(3);
        assertEquals(3, semaphore.availablePermits());
    }

    /** As the TCK's reducePermits: shrinking the total lowers the available count, below zero while held. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.SEMAPHORE)
    void shrinkingTheTotal_lowersAvailableBelowZeroWhileHeld(DistributedSemaphore semaphore, SpecContext context)
            throws Exception {
        semaphore.trySetPermits(2);
        semaphore.acquire(2);
        semaphore.addPermits(-1);
        assertEquals(-1, semaphore.availablePermits());
        assertFalse(semaphore.tryAcquire());
        semaphore.release(2);
        assertEquals(1, semaphore.availablePermits());
    }
}
