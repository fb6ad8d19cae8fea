package dev.synchronizers.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
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
 * The contract of {@link DistributedCountDownLatch}: {@link java.util.concurrent.CountDownLatch}'s
 * javadoc for counting down, awaiting, timeouts and interrupts, and ours for setting and deleting.
 */
@Tag("redis")
@ExtendWith(LeakCheck.class)
class DistributedCountDownLatchContractTest {

    /* --------------- trySetCount --------------- */

    /** trySetCount(): "only while the latch is at zero or unset"; false while counting, nothing changed. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LATCH)
    void trySetCount_whileCounting_returnsFalse(DistributedCountDownLatch latch, SpecContext context) {
        assertEquals(0, latch.getCount());
        assertTrue(latch.trySetCount(2));
        assertFalse(context.<DistributedCountDownLatch>inOtherClient().trySetCount(5));
        assertEquals(2, latch.getCount());
        latch.countDown();
        latch.countDown();
        assertTrue(latch.trySetCount(1), "at zero it can be set again");
        latch.countDown();
    }

    /** trySetCount(): "IllegalArgumentException if count is negative; nothing changes"; zero sets nothing. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LATCH)
    void trySetCount_negativeOrZero_changesNothing(DistributedCountDownLatch latch, SpecContext context) {
        IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class, () -> latch.trySetCount(-1));
        assertTrue(thrown.getMessage().contains("count") && thrown.getMessage().contains("-1"), thrown.getMessage());
        assertTrue(latch.trySetCount(0), "zero: the latch is open");
        assertEquals(0, latch.getCount());
        assertTrue(context.keys().isEmpty(), "nothing written: " + context.keys());
    }

    /* --------------- countDown --------------- */

    /** countDown(): "Does nothing if the count is zero already" — it never goes below zero. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LATCH)
    void countDown_atZero_staysAtZero(DistributedCountDownLatch latch, SpecContext context) {
        latch.trySetCount(1);
        latch.countDown();
        latch.countDown();
        latch.countDown();
        assertEquals(0, latch.getCount());
        assertTrue(context.keys().stream().allMatch(key -> key.endsWith(":epoch")),
                "a latch at zero leaves no count, only the leased mark of its last crossing: " + context.keys());
        assertTrue(latch.trySetCount(1), "and can be set again, not stuck below zero");
        latch.countDown();
    }

    /* --------------- await --------------- */

    /** await(): "returns at once if it is zero." */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LATCH)
    void await_atZero_returnsAtOnce(DistributedCountDownLatch latch, SpecContext context) throws Exception {
        latch.await();
        assertTrue(latch.await(0, TimeUnit.SECONDS));
    }

    /** await(): waits until another client counts down to zero. */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LATCH)
    void await_countedDownByOtherClient_returns(DistributedCountDownLatch latch, SpecContext context) throws Exception {
        latch.trySetCount(2);
        Background<Boolean> waiter = Background.start("waiter", () -> {
            latch.await();
            return true;
        });
        Await.parked(waiter.thread());
        DistributedCountDownLatch other = context.inOtherClient();
        other.countDown();
        assertEquals(1, latch.getCount());
        other.countDown();
        assertTrue(waiter.get());
    }

    /** await(timeout): "false if the waiting time elapsed first." */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LATCH)
    void await_timedOut_returnsFalse(DistributedCountDownLatch latch, SpecContext context) throws Exception {
        latch.trySetCount(1);
        assertFalse(latch.await(200, TimeUnit.MILLISECONDS));
        assertFalse(latch.await(0, TimeUnit.MILLISECONDS));
        latch.countDown();
        assertTrue(latch.await(0, TimeUnit.MILLISECONDS));
    }

    /** await(): "InterruptedException if the current thread is interrupted on entry or while waiting." */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LATCH)
    void await_interrupted_throwsAndClearsStatus(DistributedCountDownLatch latch, SpecContext context) throws Exception {
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, latch::await, "even at zero, as CountDownLatch does");
        assertFalse(Thread.interrupted());
        latch.trySetCount(1);
        Background<Boolean> waiter = Background.start("waiter", () -> {
            try {
                latch.await();
                return false;
            } catch (InterruptedException e) {
                return !Thread.currentThread().isInterrupted();
            }
        });
        Await.parked(waiter.thread());
        waiter.thread().interrupt();
        assertTrue(waiter.get());
        latch.countDown();
    }

    /* --------------- delete --------------- */

    /** delete(): "its waiters return as if the count had reached zero, and nothing of it remains." */
    @ParameterizedTest
    @SynchronizerSpec(kind = Kind.LATCH)
    void delete_whileCounting_releasesWaiters(DistributedCountDownLatch latch, SpecContext context) throws Exception {
        latch.trySetCount(5);
        Background<Boolean> waiter = Background.start("waiter", () -> {
            context.<DistributedCountDownLatch>inOtherClient().await();
            return true;
        });
        Await.parked(waiter.thread());
        assertTrue(latch.delete());
        assertTrue(waiter.get());
        assertFalse(latch.delete());
        assertTrue(context.keys().stream().allMatch(key -> key.endsWith(":epoch")), context.keys().toString());
    }
}
