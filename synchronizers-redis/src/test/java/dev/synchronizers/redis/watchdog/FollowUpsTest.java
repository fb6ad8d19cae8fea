package dev.synchronizers.redis.watchdog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link FollowUps} on completable futures standing in for Redis's replies, a clock the test moves
 * and an executor that keeps what it is given until the test runs it: no Redis, no threads, no
 * sleeps. {@link FollowUps#retryPending} is what each watchdog tick runs.
 */
class FollowUpsTest {

    private static final Script SAFE = Script.LOCK_RELEASE;
    private static final long DEADLINE = 1_000;

    /** The clock the follow-ups read deadlines by. */
    private long now;
    /** Tasks handed to the watchdog thread, not run until the test runs them. */
    private final Deque<Runnable> watchdogThread = new ArrayDeque<>();
    /** How many retries were counted in the metrics. */
    private final AtomicInteger retriesCounted = new AtomicInteger();
    private final Recorder recorder = new Recorder() {
        @Override
        public void followUp(FollowUp action) {
            if (action == FollowUp.RETRY) {
                retriesCounted.incrementAndGet();
            }
        }
    };
    private final FollowUps followUps = new FollowUps(recorder, watchdogThread::add, () -> now);

    /** A follow-up whose sendings answer as the test says, in order, then stay pending. */
    private static final class Command implements Supplier<CompletionStage<Long>> {
        final List<CompletableFuture<Long>> sent = new ArrayList<>();

        @Override
        public CompletionStage<Long> get() {
            CompletableFuture<Long> reply = new CompletableFuture<>();
            sent.add(reply);
            return reply;
        }

        void answer() {
            sent.get(sent.size() - 1).complete(1L);
        }

        void fail() {
            sent.get(sent.size() - 1).completeExceptionally(new IllegalStateException("no answer"));
        }
    }

    /* --------------- send --------------- */

    @Test
    void send_answered_isNotRetried() {
        Command command = new Command();
        CompletionStage<Long> reply = followUps.send(SAFE, "release", command, DEADLINE);
        command.answer();
        followUps.retryPending();
        assertSame(command.sent.get(0), reply, "the first sending's reply is returned");
        assertEquals(1, command.sent.size());
        assertEquals(0, followUps.pending());
        assertEquals(0, retriesCounted.get());
    }

    @Test
    void send_failed_isRetriedAtEveryTickAndCountedOnce() {
        Command command = new Command();
        followUps.send(SAFE, "release", command, DEADLINE);
        command.fail();
        assertEquals(1, followUps.pending());
        assertEquals(1, retriesCounted.get(), "counted when queued");
        followUps.retryPending();
        command.fail();
        followUps.retryPending();
        assertEquals(3, command.sent.size(), "sent once, then again at each of two ticks");
        assertEquals(1, retriesCounted.get(), "a sending again is not counted again");
    }

    @Test
    void send_failureNotWorthRetrying_isNotRetried() {
        Command command = new Command();
        followUps.send(SAFE, "release", command, DEADLINE, failure -> false);
        command.fail();
        followUps.retryPending();
        assertEquals(1, command.sent.size());
        assertEquals(0, followUps.pending());
        assertEquals(0, retriesCounted.get());
    }

    @Test
    void send_scriptNotSafeToRepeat_throwsAndSendsNothing() {
        Command command = new Command();
        assertThrows(IllegalArgumentException.class, () -> followUps.send(Script.LOCK_ACQUIRE, "acquire", command,
                DEADLINE));
        assertEquals(0, command.sent.size());
    }

    /* --------------- retryUntil --------------- */

    @Test
    void retryUntil_succeeds_stopsRetrying() {
        Command command = new Command();
        followUps.retryUntil(SAFE, "release", command, DEADLINE);
        followUps.retryPending();
        command.fail();
        followUps.retryPending();
        command.answer();
        assertEquals(0, followUps.pending(), "done once a sending succeeded");
        followUps.retryPending();
        assertEquals(2, command.sent.size(), "not sent after it succeeded");
    }

    @Test
    void retryUntil_deadlinePasses_stopsRetryingWithoutSending() {
        Command command = new Command();
        followUps.retryUntil(SAFE, "release", command, DEADLINE);
        now = DEADLINE - 1;
        followUps.retryPending();
        command.fail();
        now = DEADLINE;
        followUps.retryPending();
        assertEquals(1, command.sent.size(), "sent before the deadline, not at it");
        assertEquals(0, followUps.pending());
    }

    @Test
    void retryUntil_scriptNotSafeToRepeat_throwsAndQueuesNothing() {
        assertThrows(IllegalArgumentException.class, () -> followUps.retryUntil(Script.LOCK_FORCE_UNLOCK, "force",
                new Command(), DEADLINE));
        assertEquals(0, followUps.pending());
        assertEquals(0, retriesCounted.get());
    }

    @Test
    void retryUntil_everyScriptMarkedSafe_isTaken() {
        for (Script script : Script.values()) {
            if (script.safeToRepeat) {
                followUps.retryUntil(script, script.file, new Command(), DEADLINE);
            } else {
                assertThrows(IllegalArgumentException.class,
                        () -> followUps.retryUntil(script, script.file, new Command(), DEADLINE), script.file);
            }
        }
    }

    /* --------------- retryNow --------------- */

    @Test
    void retryNow_pending_sendsAtOnceOnTheWatchdogThread() {
        Command command = new Command();
        followUps.send(SAFE, "release", command, DEADLINE);
        command.fail();
        followUps.retryNow();
        assertEquals(1, command.sent.size(), "not sent on the caller's thread");
        assertEquals(1, watchdogThread.size());
        watchdogThread.poll().run();
        assertEquals(2, command.sent.size(), "sent by the task on the watchdog thread");
        command.answer();
        assertEquals(0, followUps.pending());
    }

    @Test
    void retryNow_nothingPending_schedulesNothing() {
        followUps.retryNow();
        assertTrue(watchdogThread.isEmpty());
    }

    @Test
    void retryNow_watchdogClosed_doesNothing() {
        FollowUps closed = new FollowUps(recorder, task -> {
            throw new RejectedExecutionException("closed");
        }, () -> now);
        Command command = new Command();
        closed.retryUntil(SAFE, "release", command, DEADLINE);
        closed.retryNow();
        assertEquals(0, command.sent.size());
    }

    /* --------------- clear --------------- */

    @Test
    void clear_dropsEveryRetry() {
        Command command = new Command();
        followUps.retryUntil(SAFE, "release", command, DEADLINE);
        followUps.clear();
        followUps.retryPending();
        assertEquals(0, followUps.pending());
        assertEquals(0, command.sent.size());
    }
}
