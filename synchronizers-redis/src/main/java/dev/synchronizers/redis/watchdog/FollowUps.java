package dev.synchronizers.redis.watchdog;

import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The follow-ups of one watchdog that Redis did not answer: the releases, give-backs and leaves
 * that settle a call whose outcome is unknown (DESIGN.md, "Unknown outcomes"), sent again until
 * Redis answers.
 *
 * <p>A follow-up whose sending fails is sent again at every tick of the watchdog until one sending
 * succeeds or its deadline passes; after the deadline, what it would have done is done by a lease
 * running out anyway. When the connection to Redis is back, the pending ones are sent at once, on
 * the watchdog thread ({@link #retryNow}), so that a release that failed during an outage ends its
 * hold then rather than up to a tick later, while others wait for it.
 *
 * <p>A follow-up may be sent while an earlier sending is still in flight, or after one that ran
 * but whose reply was lost, so only a script that is {@linkplain Script#safeToRepeat safe to repeat}
 * is taken. Every follow-up queued for retries is counted once as {@link Recorder.FollowUp#RETRY};
 * what the follow-up is (an undo, a leave, a give-back, a give-up) is counted by its caller.
 *
 * <p>Thread-safe.
 */
public final class FollowUps {

    /** The watchdog's category, in which users may already tune its messages. */
    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    private final Recorder recorder;
    private final Executor thread;
    private final LongSupplier nanoTime;
    private final Set<Retry> retries = ConcurrentHashMap.newKeySet();
    /** Set by {@link #clear}: a retry queued after it is dropped at once. */
    private volatile boolean closed;

    /**
     * @param recorder where queued retries are counted
     * @param thread the watchdog's thread, on which {@link #retryNow} sends the pending retries
     * @param nanoTime the clock that deadlines are read by: {@link System#nanoTime()}, or a test's
     */
    FollowUps(Recorder recorder, Executor thread, LongSupplier nanoTime) {
        this.recorder = recorder;
        this.thread = thread;
        this.nanoTime = nanoTime;
    }

    /**
     * Sends a follow-up now and, if that sending fails, retries it as {@link #retryUntil} does.
     *
     * @param <T> the reply's type
     * @param script the script {@code command} runs
     * @param what what it does, for the log
     * @param command sends the follow-up once
     * @param deadlineNanos {@link System#nanoTime()} after which to stop retrying
     * @return the first sending's reply
     * @throws IllegalArgumentException if {@code script} is not safe to repeat; nothing is sent
     */
    public <T> CompletionStage<T> send(Script script, String what, Supplier<? extends CompletionStage<T>> command,
            long deadlineNanos) {
        return send(script, what, command, deadlineNanos, failure -> true);
    }

    /**
     * Sends a follow-up now and, if that sending fails with a failure {@code worthRetrying},
     * retries it as {@link #retryUntil} does. A failure not worth retrying is one after which
     * nothing can be left to settle, e.g. a refusal to send at all where the call it settles could
     * not have run.
     *
     * @param <T> the reply's type
     * @param script the script {@code command} runs
     * @param what what it does, for the log
     * @param command sends the follow-up once
     * @param deadlineNanos {@link System#nanoTime()} after which to stop retrying
     * @param worthRetrying asked once, with the first sending's failure, whether to retry
     * @return the first sending's reply
     * @throws IllegalArgumentException if {@code script} is not safe to repeat; nothing is sent
     */
    public <T> CompletionStage<T> send(Script script, String what, Supplier<? extends CompletionStage<T>> command,
            long deadlineNanos, Predicate<Throwable> worthRetrying) {
        requireSafeToRepeat(script);
        CompletionStage<T> reply = command.get();
        reply.whenComplete((ok, failure) -> {
            if (failure != null && worthRetrying.test(failure)) {
                log.debug("{}: no answer ({}); retrying until Redis answers or its deadline", what, failure.toString());
                retryUntil(script, what, command, deadlineNanos);
            }
        });
        return reply;
    }

    /**
     * Sends a follow-up now and, if that sending fails, retries it as {@link #retryUntil} does;
     * returns what the first sending that Redis answers gets back, whichever sending it is. A caller
     * that must settle something on the answer (a lost-hold report hangs off a give-back's reply)
     * settles it from this stage, so that a first sending that timed out and a retry that was
     * answered still settle it.
     *
     * @param <T> the reply's type
     * @param script the script {@code command} runs
     * @param what what it does, for the log
     * @param command sends the follow-up once
     * @param deadlineNanos {@link System#nanoTime()} after which to stop retrying
     * @return the first answered sending's reply; completed exceptionally with a
     *     {@link TimeoutException} if no sending is answered before {@code deadlineNanos}, or when
     *     the follow-ups are dropped ({@link #clear}, the watchdog closing). Completed on the
     *     thread that learned it, which may be a network thread: callers hop off it.
     * @throws IllegalArgumentException if {@code script} is not safe to repeat; nothing is sent
     */
    public <T> CompletableFuture<T> sendUntilAnswered(Script script, String what,
            Supplier<? extends CompletionStage<T>> command, long deadlineNanos) {
        requireSafeToRepeat(script);
        CompletableFuture<T> answered = new CompletableFuture<>();
        command.get().whenComplete((reply, failure) -> {
            if (failure == null) {
                answered.complete(reply);
                return;
            }
            log.debug("{}: no answer ({}); retrying until Redis answers or its deadline", what, failure.toString());
            recorder.followUp(Recorder.FollowUp.RETRY);
            queue(new Retry(what, command, deadlineNanos, answered));
        });
        return answered;
    }

    /**
     * Retries a follow-up whose sending failed: sends it again at every tick, and at once when the
     * connection is back, until one sending succeeds or {@code deadlineNanos} passes. Counted as
     * one {@link Recorder.FollowUp#RETRY}.
     *
     * @param script the script {@code command} runs
     * @param what what it does, for the log
     * @param command sends the follow-up once
     * @param deadlineNanos {@link System#nanoTime()} after which to stop retrying
     * @throws IllegalArgumentException if {@code script} is not safe to repeat; nothing is queued
     */
    public void retryUntil(Script script, String what, Supplier<? extends CompletionStage<?>> command,
            long deadlineNanos) {
        requireSafeToRepeat(script);
        recorder.followUp(Recorder.FollowUp.RETRY);
        queue(new Retry(what, command, deadlineNanos, null));
    }

    /**
     * Sends the pending retries now, on the watchdog thread, instead of at the next tick: called
     * when the connection to Redis is back. Does nothing once the watchdog is closed.
     */
    public void retryNow() {
        if (!retries.isEmpty()) {
            try {
                thread.execute(this::retryPending);
            } catch (RejectedExecutionException e) {
                // Closed meanwhile: nothing is retried any more.
            }
        }
    }

    /**
     * Returns the number of follow-ups waiting to be retried, for leak checks and a gauge.
     *
     * @return how many retries are pending
     */
    public int pending() {
        return retries.size();
    }

    /** Sends every pending retry once, and drops those past their deadline. Run at every tick. */
    void retryPending() {
        long now = nanoTime.getAsLong();
        for (Retry retry : retries) {
            if (now - retry.deadlineNanos >= 0) {
                retries.remove(retry);
                log.debug("gave up retrying {}: its lease has run out anyway", retry.what);
                retry.unanswered("no sending was answered before its deadline");
                continue;
            }
            retry.command.get().whenComplete((reply, failure) -> {
                if (failure == null) {
                    retries.remove(retry);
                    retry.answered(reply);
                }
            });
        }
    }

    /**
     * Drops every pending retry: the watchdog is closed. A caller waiting for one to be answered
     * ({@link #sendUntilAnswered}) is told now, on this thread, that none will be.
     */
    void clear() {
        closed = true;
        for (Retry retry : retries) {
            if (retries.remove(retry)) {
                retry.unanswered("the client closed before any sending was answered");
            }
        }
    }

    /** Queues a retry, unless the follow-ups were dropped already (then it is unanswered now). */
    private void queue(Retry retry) {
        retries.add(retry);
        if (closed && retries.remove(retry)) {
            retry.unanswered("the client closed before any sending was answered");
        }
    }

    private static void requireSafeToRepeat(Script script) {
        if (!script.safeToRepeat) {
            throw new IllegalArgumentException(script.file + " is not safe to repeat, so it cannot be a retried"
                    + " follow-up (Script.safeToRepeat)");
        }
    }

    /** A follow-up to send again until it succeeds or its deadline passes. Identity is object identity. */
    private static final class Retry {
        final String what;
        final Supplier<? extends CompletionStage<?>> command;
        final long deadlineNanos;
        /** Told the first answer, or that none came; null if nobody asked. */
        private final CompletableFuture<Object> answered;

        @SuppressWarnings("unchecked")
        Retry(String what, Supplier<? extends CompletionStage<?>> command, long deadlineNanos,
                CompletableFuture<?> answered) {
            this.what = what;
            this.command = command;
            this.deadlineNanos = deadlineNanos;
            // Completed only with what command's stages hold, so the cast never lies.
            this.answered = (CompletableFuture<Object>) answered;
        }

        void answered(Object reply) {
            if (answered != null) {
                answered.complete(reply);
            }
        }

        void unanswered(String why) {
            if (answered != null) {
                answered.completeExceptionally(new TimeoutException(what + ": " + why));
            }
        }
    }
}
