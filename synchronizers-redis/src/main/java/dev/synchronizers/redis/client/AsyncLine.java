package dev.synchronizers.redis.client;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The async acquisitions of one synchronizer object in one client ({@code acquireAsync()} and the
 * like), waited for one at a time, in the order they were made, by the same blocking machinery as
 * the synchronous ones: the oldest pending acquisition takes its turn in the synchronizer's line
 * (the local line, a fair queue's place in Redis, the wake-ups) exactly as a thread calling the
 * blocking method would, and the next one starts when it is done. However many are pending, one
 * thread waits for them: a thread of the client's pool of waiting threads, taken while the line has
 * pending acquisitions and given back when it is empty.
 *
 * <p>Each acquisition's stage completes on the client's async executor, never on the waiting
 * thread nor on a network thread. A stage that its caller completes before the line does withdraws
 * the acquisition, whichever way the caller completes it: {@code cancel}, {@code complete}, {@code
 * completeExceptionally}, {@code orTimeout}, {@code completeOnTimeout}, {@code completeAsync} or an
 * {@code obtrude} method. A pending acquisition leaves the line; the one being waited for is
 * interrupted, which leaves the synchronizer's line and queue as an interrupted thread does. What an
 * acquisition got anyway (a grant that raced the caller's completion) is given back, and the
 * caller's outcome stands. Only the stage itself withdraws: a stage derived from
 * it ({@code thenApply} and the like, {@code copy}) completes on its own. An {@code obtrude} method
 * called after the line completed the stage replaces the outcome but does not give back what the
 * stage held: that was delivered. A timed acquisition times out by its own deadline even while older
 * ones are still waited for; once its own wait has begun, the stage completes when that wait ends
 * (by the same deadline), so that a stage completed empty leaves nothing held. Once the client is
 * closed, every pending stage fails with {@link IllegalStateException}.
 */
public final class AsyncLine {

    private static final Logger log = LoggerFactory.getLogger(AsyncLine.class);

    /** One acquisition's blocking wait. */
    public interface Wait<R> {
        /**
         * Waits for the synchronizer on the calling thread.
         *
         * @param timeoutNanos {@link Acquirer#FOREVER}, or how long to wait (zero or less: one try)
         * @return what it got, or the timed-out value
         * @throws InterruptedException if the wait was withdrawn; nothing is held then
         */
        R await(long timeoutNanos) throws InterruptedException;
    }

    /** Gives back what an acquisition got after its stage was cancelled or had timed out. */
    public interface GiveBack<R> {
        void giveBack(R acquired);
    }

    private final ClientContext context;
    private final String what;
    /** Guards {@link #pending}, {@link #driving} and each request's {@code waiter}. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Deque<Request<?>> pending = new ArrayDeque<>();
    private boolean driving;

    /** @param what the synchronizer, for messages */
    public AsyncLine(ClientContext context, String what) {
        this.context = context;
        this.what = what;
    }

    /**
     * Adds an acquisition to the line.
     *
     * @param timeoutNanos {@link Acquirer#FOREVER}, or how long to wait from now
     * @param timedOut what the stage completes with if the wait ends without the synchronizer
     * @param wait the acquisition's blocking wait
     * @param giveBack gives back what the acquisition got if its caller no longer wants it
     * @return the stage, which any completion by the caller withdraws
     * @throws IllegalStateException if the client is closed
     */
    public <R> CompletableFuture<R> submit(long timeoutNanos, R timedOut, Wait<R> wait, GiveBack<R> giveBack) {
        context.checkOpen();
        long start = System.nanoTime();
        Request<R> request = new Request<>(start, timeoutNanos, timedOut, wait, giveBack);
        boolean first;
        lock.lock();
        try {
            pending.addLast(request);
            first = !driving;
            driving = true;
        } finally {
            lock.unlock();
        }
        if (timeoutNanos != Acquirer.FOREVER && !first) {
            // Times out on its own deadline while older acquisitions are waited for. Once its own wait
            // has begun, that wait ends by the same deadline and completes the stage: completing it
            // here too would report "not acquired" while the wait could still take the synchronizer.
            CompletableFuture.delayedExecutor(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS).execute(() -> {
                boolean stillPending;
                lock.lock();
                try {
                    stillPending = pending.remove(request);
                } finally {
                    lock.unlock();
                }
                if (stillPending) {
                    deliver(() -> request.settle(timedOut));
                }
            });
        }
        if (first) {
            try {
                context.waiting.execute(this::drive);
            } catch (RuntimeException e) {
                // No thread to wait (the client closed meanwhile): fail this one and any that came
                // after it, which counted on this one's thread.
                List<Request<?>> stranded;
                lock.lock();
                try {
                    driving = false;
                    stranded = new ArrayList<>(pending);
                    pending.clear();
                } finally {
                    lock.unlock();
                }
                RuntimeException failure = context.unlessClosed(e);
                stranded.forEach(each -> each.fail(failure));
            }
        }
        return request;
    }

    /** Waits for the pending acquisitions one by one until none is left; runs on a waiting thread. */
    private void drive() {
        while (true) {
            Request<?> request;
            lock.lock();
            try {
                request = pending.pollFirst();
                if (request == null) {
                    driving = false;
                    return;
                }
                if (request.isDone()) {
                    continue;   // withdrawn or timed out while it was pending
                }
                request.waiter = Thread.currentThread();
            } finally {
                lock.unlock();
            }
            run(request);
        }
    }

    private <R> void run(Request<R> request) {
        R got = null;
        Throwable failure = null;
        boolean withdrawn = false;
        try {
            if (context.isClosed()) {
                context.checkOpen();
            }
            long timeout = request.timeoutNanos == Acquirer.FOREVER
                    ? Acquirer.FOREVER
                    : request.timeoutNanos - (System.nanoTime() - request.startNanos);
            got = request.wait.await(timeout);
        } catch (InterruptedException e) {
            withdrawn = true;
        } catch (RuntimeException | Error e) {
            failure = e instanceof RuntimeException runtime ? context.unlessClosed(runtime) : e;
        } finally {
            lock.lock();
            try {
                request.waiter = null;
            } finally {
                lock.unlock();
            }
            // An interrupt meant for this acquisition, delivered after its wait returned: not the next one's.
            Thread.interrupted();
        }
        if (withdrawn) {
            deliver(() -> request.settle(request.timedOut));   // a no-op if withdrawn, as it was
            return;
        }
        if (failure != null) {
            Throwable thrown = failure;
            deliver(() -> request.fail(thrown));
            return;
        }
        R acquired = got;
        if (acquired == request.timedOut) {
            deliver(() -> request.settle(acquired));
            return;
        }
        deliver(() -> {
            if (!request.settle(acquired)) {
                // Completed by its caller while the grant was on its way: not the caller's.
                give(request.giveBack, acquired);
            }
        });
    }

    /**
     * Completes a stage on the client's async executor; on this thread if that executor refuses (it
     * is shut down with the client), so that no stage is left pending.
     */
    private void deliver(Runnable completion) {
        try {
            context.async.execute(completion);
        } catch (RejectedExecutionException e) {
            completion.run();
        }
    }

    private <R> void give(GiveBack<R> giveBack, R acquired) {
        try {
            giveBack.giveBack(acquired);
        } catch (RuntimeException e) {
            log.debug("{}: could not give back an async acquisition nobody wanted any more: {}", what, e.toString());
        }
    }

    /**
     * One pending acquisition: its stage, which any completion by the caller withdraws. The line
     * completes it with {@link #settle} and {@link #fail} only; every public way to complete it is
     * the caller's.
     */
    private final class Request<R> extends CompletableFuture<R> {
        final long startNanos;
        final long timeoutNanos;
        final R timedOut;
        final Wait<R> wait;
        final GiveBack<R> giveBack;
        /** The thread waiting for it, while it does; guarded by {@link #lock}. */
        Thread waiter;

        Request(long startNanos, long timeoutNanos, R timedOut, Wait<R> wait, GiveBack<R> giveBack) {
            this.startNanos = startNanos;
            this.timeoutNanos = timeoutNanos;
            this.timedOut = timedOut;
            this.wait = wait;
            this.giveBack = giveBack;
        }

        /** Completes the stage with what the line's wait ended with; false if the caller completed it first. */
        boolean settle(R value) {
            return super.complete(value);
        }

        /** Completes the stage with the line's failure; false if the caller completed it first. */
        boolean fail(Throwable failure) {
            return super.completeExceptionally(failure);
        }

        @Override
        public boolean complete(R value) {
            return withdrawnIf(super.complete(value));
        }

        @Override
        public boolean completeExceptionally(Throwable failure) {
            return withdrawnIf(super.completeExceptionally(failure));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = !isDone() && super.cancel(mayInterruptIfRunning);
            return withdrawnIf(cancelled) || isCancelled();
        }

        /** As {@link #complete} while the stage is pending; on a completed stage, replaces the outcome. */
        @Override
        public void obtrudeValue(R value) {
            if (!complete(value)) {
                super.obtrudeValue(value);
            }
        }

        /** As {@link #completeExceptionally} while the stage is pending; on a completed stage, replaces the outcome. */
        @Override
        public void obtrudeException(Throwable failure) {
            if (!completeExceptionally(Objects.requireNonNull(failure, "failure"))) {
                super.obtrudeException(failure);
            }
        }

        /**
         * Completes the stage with the supplier's value on {@code executor}, as {@link
         * CompletableFuture#completeAsync(Supplier, Executor)} does, through {@link #complete} so that
         * the acquisition is withdrawn. The one-argument form calls this one.
         */
        @Override
        public CompletableFuture<R> completeAsync(Supplier<? extends R> supplier, Executor executor) {
            Objects.requireNonNull(supplier, "supplier");
            Objects.requireNonNull(executor, "executor");
            executor.execute(() -> {
                if (isDone()) {
                    return;
                }
                try {
                    complete(supplier.get());
                } catch (Throwable e) {
                    completeExceptionally(e instanceof CompletionException ? e : new CompletionException(e));
                }
            });
            return this;
        }

        /**
         * Withdraws the acquisition if {@code completedByCaller}: takes it out of the line if it is
         * pending, interrupts its wait if it is waited for, does nothing if its wait is over.
         */
        private boolean withdrawnIf(boolean completedByCaller) {
            if (completedByCaller) {
                lock.lock();
                try {
                    if (waiter != null) {
                        waiter.interrupt();
                    } else {
                        pending.remove(this);
                    }
                } finally {
                    lock.unlock();
                }
            }
            return completedByCaller;
        }

        @Override
        public String toString() {
            return "async acquisition of " + what + (isDone() ? " (done)" : " (pending)");
        }
    }
}
