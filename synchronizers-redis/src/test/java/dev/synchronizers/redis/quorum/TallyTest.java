package dev.synchronizers.redis.quorum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Tally} on completable futures standing in for the nodes' replies: no Redis, no sleeps.
 * Whether the tally is decided is read by a thread that calls {@link Tally#await} with a far
 * deadline: it returns at once if the tally is decided, and parks otherwise.
 */
class TallyTest {

    /** The replies of the tally made last, by node. */
    private final List<CompletableFuture<Long>> replies = new ArrayList<>();
    /** Every reply made by this test, completed after it so that no waiter is left parked. */
    private final List<CompletableFuture<Long>> allReplies = new ArrayList<>();
    /** Every thread this test started to watch a wait. */
    private final List<Thread> waiters = new ArrayList<>();
    /** Five nodes, a quorum of three; a reply is yes when it is {@code 1L}. */
    private final Tally<Long> tally = tally(5, 3);

    private Tally<Long> tally(int nodes, int needed) {
        Tally<Long> t = new Tally<>(nodes, needed, reply -> reply == 1L);
        replies.clear();
        for (int i = 0; i < nodes; i++) {
            CompletableFuture<Long> reply = reply();
            replies.add(reply);
            t.watch(i, reply);
        }
        return t;
    }

    /** Completes every reply still pending, which ends every wait this test left parked, and joins the waiters. */
    @AfterEach
    void releaseWaiters() throws InterruptedException {
        allReplies.forEach(reply -> reply.completeExceptionally(new IllegalStateException("test over")));
        for (Thread waiter : waiters) {
            waiter.join();
        }
    }

    /** A reply that {@link #releaseWaiters} completes if the test leaves it pending. */
    private CompletableFuture<Long> reply() {
        CompletableFuture<Long> reply = new CompletableFuture<>();
        allReplies.add(reply);
        return reply;
    }

    /** Whether {@link Tally#await} returns at once: the tally is decided by the replies given so far. */
    private boolean decided(Tally<?> tally) {
        return returnsWithoutParking(() -> tally.await(farDeadline()));
    }

    /** Whether {@link Tally#awaitAll} returns at once: no node is pending. */
    private boolean complete(Tally<?> tally) {
        return returnsWithoutParking(() -> tally.awaitAll(farDeadline()));
    }

    private static long farDeadline() {
        return System.nanoTime() + TimeUnit.DAYS.toNanos(1);
    }

    /**
     * Runs {@code wait} on a thread of its own and reports whether it returned rather than parking.
     * Nothing completes a reply meanwhile, so the waiter does one or the other for good: it returns
     * at once if the tally is already where the wait ends, and otherwise parks in
     * {@code CompletableFuture.get} until {@link #releaseWaiters} ends the test's replies.
     */
    private boolean returnsWithoutParking(Runnable wait) {
        AtomicBoolean returned = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            wait.run();
            returned.set(true);
        });
        waiters.add(waiter);
        waiter.start();
        while (waiter.isAlive() && waiter.getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
        }
        return returned.get();
    }

    /* --------------- deciding --------------- */

    @Test
    void await_quorumSaysYes_decidesWithoutTheRest() {
        replies.get(0).complete(1L);
        replies.get(3).complete(1L);
        assertFalse(decided(tally), "two yes of a quorum of three");
        replies.get(4).complete(1L);

        assertTrue(decided(tally));
        assertFalse(complete(tally), "nodes 1 and 2 are still pending");
        assertEquals(3, tally.yes());
        assertEquals(3, tally.answered());
        assertTrue(tally.isPending(1));
        assertTrue(tally.isPending(2));
    }

    @Test
    void await_quorumCanNoLongerSayYes_decidesOnceAQuorumAnswered() {
        replies.get(0).complete(0L);
        replies.get(1).complete(0L);
        assertFalse(decided(tally), "three pending could still make a quorum");
        replies.get(2).complete(1L);
        replies.get(3).complete(0L);

        assertTrue(decided(tally), "1 yes + 1 pending < 3, and 4 answered");
        assertEquals(1, tally.yes());
        assertEquals(4, tally.answered());
        assertTrue(tally.isNo(0));
        assertTrue(tally.isYes(2));
        assertTrue(tally.isPending(4));
    }

    @Test
    void await_quorumCannotSayYesButFewerAnswered_waitsForThePending() {
        // No majority possible after two failures and one no, but only one node answered: whether
        // the call was refused or went unanswered depends on the nodes still pending.
        replies.get(0).completeExceptionally(new RedisException("down"));
        replies.get(1).completeExceptionally(new RedisException("down"));
        replies.get(2).complete(0L);
        assertFalse(decided(tally));

        replies.get(3).complete(0L);
        assertFalse(decided(tally), "2 answered of a quorum of 3; node 4 may still answer");
        replies.get(4).complete(0L);
        assertTrue(decided(tally));
        assertTrue(complete(tally));
        assertEquals(3, tally.answered());
        assertEquals(0, tally.yes());
    }

    @Test
    void await_everyReplyIn_decidesWhateverTheyAre() {
        for (int i = 0; i < 5; i++) {
            replies.get(i).completeExceptionally(new RedisException("timeout " + i));
        }
        assertTrue(decided(tally));
        assertTrue(complete(tally));
        assertEquals(0, tally.answered());
    }

    @Test
    void await_deadlinePassed_returnsUndecided() {
        long before = System.nanoTime();
        tally.await(before);
        tally.awaitAll(before - 1);
        assertFalse(decided(tally));
        for (int i = 0; i < 5; i++) {
            assertTrue(tally.isPending(i), "a deadline does not change a node's state");
        }
    }

    @Test
    void await_repliesComeWhileWaiting_returnsOnceDecided() throws Exception {
        CountDownLatch returned = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            tally.await(System.nanoTime() + TimeUnit.MINUTES.toNanos(10));
            returned.countDown();
        });
        waiter.start();
        for (int i = 0; i < 3; i++) {
            replies.get(i).complete(1L);
        }
        assertTrue(returned.await(10, TimeUnit.MINUTES));
        waiter.join();
        assertEquals(3, tally.yes());
    }

    @Test
    void await_interrupted_keepsWaitingAndKeepsTheInterrupt() throws Exception {
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            Thread.currentThread().interrupt();
            tally.await(System.nanoTime() + TimeUnit.MINUTES.toNanos(10));
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        waiter.start();
        // The interrupt ends the first CompletableFuture.get at once; the wait then parks again.
        while (waiter.getState() != Thread.State.TIMED_WAITING) {
            assertTrue(waiter.isAlive(), "await returned on an interrupt while undecided");
            Thread.onSpinWait();
        }
        for (int i = 0; i < 3; i++) {
            replies.get(i).complete(1L);
        }
        waiter.join();
        assertTrue(interruptedAfter.get(), "the interrupt status is set again on return");
    }

    /* --------------- counting --------------- */

    @Test
    void failures_countTowardNeitherYesNorAnswered() {
        RedisException first = new RedisException("first");
        replies.get(1).completeExceptionally(new CompletionException(first));
        replies.get(3).completeExceptionally(new RedisException("second"));
        replies.get(0).complete(1L);
        replies.get(2).complete(0L);

        assertEquals(1, tally.yes());
        assertEquals(2, tally.answered());
        assertTrue(tally.isUnanswered(1), "failed");
        assertTrue(tally.isUnanswered(4), "pending");
        assertFalse(tally.isUnanswered(0));
        assertFalse(tally.isUnanswered(2));
        assertFalse(tally.isPending(1));
        assertFalse(tally.isYes(1));
        assertFalse(tally.isNo(1));
        assertSame(first, unwrap(tally.firstFailure()));
    }

    @Test
    void replyOfUnexpectedShape_countsAsFailure() {
        Tally<List<Object>> shapes = new Tally<>(3, 2, reply -> (Long) reply.get(0) == 1L);
        shapes.watch(0, CompletableFuture.completedFuture(List.of(1L, 7L)));
        shapes.watch(1, CompletableFuture.completedFuture(List.of("not a number")));
        shapes.watch(2, CompletableFuture.completedFuture(List.of(0L, 42L)));

        assertTrue(shapes.isYes(0));
        assertEquals(List.of(1L, 7L), shapes.reply(0));
        assertTrue(shapes.isUnanswered(1));
        assertTrue(shapes.firstFailure() instanceof ClassCastException, String.valueOf(shapes.firstFailure()));
        assertTrue(shapes.isNo(2));
        assertEquals(List.of(0L, 42L), shapes.reply(2));
        assertEquals(2, shapes.answered());
        assertTrue(decided(shapes));
    }

    @Test
    void skip_countsTowardNothingAndEndsPending() {
        Tally<Long> three = new Tally<>(3, 2, reply -> reply == 1L);
        CompletableFuture<Long> one = reply();
        CompletableFuture<Long> two = reply();
        three.skip(0);
        three.watch(1, one);
        three.watch(2, two);
        one.complete(1L);
        assertFalse(decided(three), "1 yes + 1 pending can still make 2");
        assertFalse(three.isPending(0));
        assertFalse(three.isUnanswered(0), "a skipped node was not asked");
        assertNull(three.reply(0));

        two.complete(0L);
        assertTrue(decided(three));
        assertTrue(complete(three));
        assertEquals(1, three.yes());
        assertEquals(2, three.answered());
    }

    @Test
    void noFailure_firstFailureIsNull() {
        replies.get(0).complete(1L);
        assertNull(tally.firstFailure());
        assertNull(tally.reply(1), "pending");
    }

    /* --------------- onYes --------------- */

    @Test
    void onYes_runsOnceWhenTheNodeSaysYes_nowOrLater() {
        AtomicInteger early = new AtomicInteger();
        AtomicInteger late = new AtomicInteger();
        tally.onYes(0, early::incrementAndGet);
        assertEquals(0, early.get());
        replies.get(0).complete(1L);
        assertEquals(1, early.get(), "run by the thread that completed the reply");

        replies.get(1).complete(1L);
        tally.onYes(1, late::incrementAndGet);
        assertEquals(1, late.get(), "already yes: run at once");
    }

    @Test
    void onYes_nodeSaysNoOrFailsOrIsSkipped_neverRuns() {
        AtomicInteger runs = new AtomicInteger();
        for (int i = 0; i < 2; i++) {
            tally.onYes(i, runs::incrementAndGet);
        }
        replies.get(0).complete(0L);
        replies.get(1).completeExceptionally(new RedisException("down"));
        tally.onYes(0, runs::incrementAndGet);
        tally.onYes(1, runs::incrementAndGet);
        assertEquals(0, runs.get());

        Tally<Long> skipped = new Tally<>(1, 1, reply -> reply == 1L);
        skipped.onYes(0, runs::incrementAndGet);
        skipped.skip(0);
        skipped.onYes(0, runs::incrementAndGet);
        assertEquals(0, runs.get());
    }

    /* --------------- refused while disconnected --------------- */

    @Test
    void onYesOrFailed_runsOnYesAndOnFailure_nowOrLater_neverOnNo() {
        AtomicInteger runs = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            tally.onYesOrFailed(i, runs::incrementAndGet);
        }
        replies.get(0).complete(1L);
        assertEquals(1, runs.get(), "a yes runs it, on the thread that completed the reply");
        replies.get(1).completeExceptionally(new RedisException("reply lost"));
        assertEquals(2, runs.get(), "a failure runs it: the call may have run");
        replies.get(2).complete(0L);
        assertEquals(2, runs.get(), "a no never runs it");

        for (int i = 0; i < 3; i++) {
            tally.onYesOrFailed(i, runs::incrementAndGet);
        }
        assertEquals(4, runs.get(), "already yes or failed: run at once; already no: never");
    }

    @Test
    void neverSent_onlyForAFailureRefusedWhileDisconnected() {
        replies.get(0).completeExceptionally(new RedisException("Currently not connected. Commands are rejected."));
        replies.get(1).completeExceptionally(new RedisException("Command timed out"));
        replies.get(2).complete(0L);

        assertTrue(tally.neverSent(0));
        assertFalse(tally.neverSent(1), "may have run");
        assertFalse(tally.neverSent(2), "answered");
        assertFalse(tally.neverSent(3), "pending");
    }

    /* --------------- concurrency --------------- */

    /**
     * Replies completed at once on many threads, each racing an {@link Tally#onYes} for its node:
     * every count comes out exact, and each action runs exactly once for a yes and never for a no.
     */
    @Test
    void concurrentReplies_countExactly_andRunEachOnYesOnce() throws Exception {
        int nodes = 8;
        ExecutorService pool = Executors.newFixedThreadPool(2 * nodes);
        try {
            for (int round = 0; round < 500; round++) {
                Tally<Long> many = tally(nodes, nodes / 2 + 1);
                AtomicIntegerArray runs = new AtomicIntegerArray(nodes);
                CyclicBarrier start = new CyclicBarrier(2 * nodes);
                List<Future<?>> tasks = new ArrayList<>();
                for (int i = 0; i < nodes; i++) {
                    int node = i;
                    long reply = node % 3 == 0 ? 0L : 1L;
                    tasks.add(pool.submit(() -> {
                        awaitQuietly(start);
                        replies.get(node).complete(reply);
                    }));
                    tasks.add(pool.submit(() -> {
                        awaitQuietly(start);
                        many.onYes(node, () -> runs.incrementAndGet(node));
                    }));
                }
                for (Future<?> task : tasks) {
                    task.get();
                }
                int yes = 0;
                for (int i = 0; i < nodes; i++) {
                    int expected = i % 3 == 0 ? 0 : 1;
                    yes += expected;
                    assertEquals(expected, runs.get(i), "round " + round + ", node " + i + ": onYes runs");
                }
                assertEquals(yes, many.yes(), "round " + round);
                assertEquals(nodes, many.answered(), "round " + round);
                assertTrue(decided(many), "round " + round);
                assertTrue(complete(many), "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void awaitQuietly(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
