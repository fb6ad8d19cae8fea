package dev.synchronizers.redis.client;

import dev.synchronizers.LostHold;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The {@code lost()} stage of one handle ({@code RedisLockHandle}, a semaphore's permit handle):
 * settled once, by the loss (with its report) or by the release (cancelled), whichever comes
 * first, and completed on the client's async executor, so that neither a network thread nor the
 * watchdog thread runs what users chain on it. A closed client's executor may refuse the task: the
 * stage then completes on the thread that settles it. One still open when the client closes is
 * settled by {@link LossSignals#close()} with the report {@code atClose} makes.
 */
public final class LossSignal {

    private final Executor executor;
    private final AtomicBoolean settled = new AtomicBoolean();
    private final CompletableFuture<LostHold> outcome = new CompletableFuture<>();

    private final LossSignals open;
    private final Supplier<LostHold> atClose;

    /**
     * @param open the client's open signals, which track this one until it is settled
     * @param atClose makes the report for the client's close, if this signal is still open then
     */
    public LossSignal(Executor executor, LossSignals open, Supplier<LostHold> atClose) {
        this.executor = executor;
        this.open = open;
        this.atClose = atClose;
        open.opened(this);
    }

    /** The client closed while the hold was open: completes the stage with the close's report. */
    void abandoned() {
        lost(atClose.get());
    }

    /** The hold was lost: completes the stage with {@code report}, unless it was settled before. */
    public void lost(LostHold report) {
        if (settled.compareAndSet(false, true)) {
            open.settled(this);
            complete(() -> outcome.complete(report));
        }
    }

    /** The hold was released (or let go) without a loss: cancels the stage, unless it was settled before. */
    public void released() {
        if (settled.compareAndSet(false, true)) {
            open.settled(this);
            complete(() -> outcome.cancel(false));
        }
    }

    /**
     * A new stage of the outcome, so that a caller completing its own changes nobody else's; it
     * completes exceptionally with the very {@link CancellationException} of a release.
     */
    public CompletionStage<LostHold> stage() {
        CompletableFuture<LostHold> mine = new CompletableFuture<>();
        outcome.whenComplete((report, failure) -> {
            if (failure == null) {
                mine.complete(report);
            } else {
                mine.completeExceptionally(failure);
            }
        });
        return mine;
    }

    private void complete(Runnable completion) {
        try {
            executor.execute(completion);
        } catch (RejectedExecutionException closed) {
            completion.run();
        }
    }
}
