package dev.synchronizers.redis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
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
 * thread nor on a network thread. Cancelling a stage before it completes withdraws it: a pending
 * one leaves the line; the one being waited for is interrupted, which leaves the synchronizer's line
 * and queue as an interrupted thread does. What an acquisition got anyway (a grant that raced the
 * cancel, or a timeout's completion) is given back. A timed acquisition times out by its own deadline
 * even while older ones are still waited for. Once the client is closed, every pending stage fails
 * with {@link IllegalStateException}.
 */
final class AsyncLine {

    private static final Logger log = LoggerFactory.getLogger(AsyncLine.class);

    /** One acquisition's blocking wait. */
    interface Wait<R> {
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
    interface GiveBack<R> {
        void giveBack(R acquired);
    }

    private final ClientContext context;
    private final String what;
    /** Guards {@link #pending}, {@link #driving} and each request's {@code waiter}. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Deque<Request<?>> pending = new ArrayDeque<>();
    private boolean driving;

    /** @param what the synchronizer, for messages */
    AsyncLine(ClientContext context, String what) {
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
     * @return the stage, which {@code cancel} withdraws
     * @throws IllegalStateException if the client is closed
     */
    <R> CompletableFuture<R> submit(long timeoutNanos, R timedOut, Wait<R> wait, GiveBack<R> giveBack) {
        context.checkOpen();
        long start = System.nanoTime();
        Request<R> request = new Request<>(start, timeoutNanos, timedOut, wait, giveBack);
        if (timeoutNanos != Acquirer.FOREVER) {
            // Times out on its own deadline, also while older acquisitions are waited for.
            CompletableFuture.delayedExecutor(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS)
                    .execute(() -> deliver(() -> request.complete(timedOut)));
        }
        boolean first;
        lock.lock();
        try {
            pending.addLast(request);
            first = !driving;
            driving = true;
        } finally {
            lock.unlock();
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
                stranded.forEach(each -> each.completeExceptionally(failure));
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
                    continue;   // cancelled or timed out while it was pending
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
            deliver(() -> request.complete(request.timedOut));   // a no-op if cancelled, as it was
            return;
        }
        if (failure != null) {
            Throwable thrown = failure;
            deliver(() -> request.completeExceptionally(thrown));
            return;
        }
        R acquired = got;
        if (acquired == request.timedOut) {
            deliver(() -> request.complete(acquired));
            return;
        }
        deliver(() -> {
            if (!request.complete(acquired)) {
                // Cancelled, or timed out by its deadline, while the grant was on its way: not the caller's.
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

    /** One pending acquisition: its stage, whose {@code cancel} withdraws it. */
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

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
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
            return cancelled;
        }

        @Override
        public String toString() {
            return "async acquisition of " + what + (isDone() ? " (done)" : " (pending)");
        }
    }
}
