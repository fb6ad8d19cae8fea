package dev.synchronizers.test;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * An acquisition run on the store's async threads. Completing the returned stage before it is granted
 * (cancel, complete, orTimeout, ...) interrupts the waiting acquisition, and a grant that raced the
 * caller's completion is given back.
 */
final class Async {

    @FunctionalInterface
    interface Acquisition<T> {
        T run() throws Exception;
    }

    private Async() {
    }

    static <T> CompletableFuture<T> run(InMemorySynchronizers.Store store, Acquisition<T> acquisition,
            Consumer<T> giveBack) {
        CompletableFuture<T> stage = new CompletableFuture<>();
        Object guard = new Object();
        Thread[] worker = new Thread[1];
        stage.whenComplete((value, failure) -> {
            synchronized (guard) {
                if (worker[0] != null) {
                    worker[0].interrupt();
                }
            }
        });
        store.async.execute(() -> {
            synchronized (guard) {
                if (stage.isDone()) {
                    return;
                }
                worker[0] = Thread.currentThread();
            }
            T value = null;
            Throwable failure = null;
            try {
                value = acquisition.run();
            } catch (Throwable t) {
                failure = t;
            }
            synchronized (guard) {
                worker[0] = null;
                Thread.interrupted();
            }
            if (failure instanceof InterruptedException) {
                stage.completeExceptionally(new CancellationException("withdrawn"));
            } else if (failure != null) {
                stage.completeExceptionally(failure);
            } else if (!stage.complete(value) && value != null) {
                giveBack.accept(value);
            }
        });
        return stage;
    }
}
