package dev.synchronizers.test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Completing stages on the store's event thread, and stages of their own for each caller. */
final class CompletableFutures {

    private CompletableFutures() {
    }

    static <T> void complete(InMemorySynchronizers.Store store, CompletableFuture<T> stage, T value) {
        store.events.execute(() -> stage.complete(value));
    }

    static void fail(InMemorySynchronizers.Store store, CompletableFuture<?> stage, Throwable failure) {
        store.events.execute(() -> stage.completeExceptionally(failure));
    }

    /** A stage of its own that completes as {@code source} does, with the same value or exception. */
    static <T> CompletionStage<T> copy(CompletableFuture<T> source) {
        CompletableFuture<T> copy = new CompletableFuture<>();
        source.whenComplete((value, failure) -> {
            if (failure != null) {
                copy.completeExceptionally(failure);
            } else {
                copy.complete(value);
            }
        });
        return copy;
    }
}
