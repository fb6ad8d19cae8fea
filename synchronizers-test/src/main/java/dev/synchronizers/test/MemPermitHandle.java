package dev.synchronizers.test;

import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.SynchronizerUnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Permits that belong to this object: one grant. */
final class MemPermitHandle implements PermitHandle {

    private final InMemorySynchronizers client;
    private final SemState state;
    private final SemState.Grant grant;
    private final int permits;
    /** Guarded by the store's lock. */
    private boolean released;

    MemPermitHandle(InMemorySynchronizers client, SemState state, SemState.Grant grant) {
        this.client = client;
        this.state = state;
        this.grant = grant;
        this.permits = grant.permits;
    }

    @Override
    public String name() {
        return state.name;
    }

    @Override
    public int permits() {
        return permits;
    }

    @Override
    public boolean isHeld() {
        client.store.mutex.lock();
        try {
            return !grant.ended && !released && !grant.client.closed;
        } finally {
            client.store.mutex.unlock();
        }
    }

    @Override
    public CompletionStage<LostHold> lost() {
        return CompletableFutures.copy(grant.lostStage);
    }

    @Override
    public void release() {
        client.store.mutex.lock();
        try {
            if (released) {
                throw new IllegalStateException("the permit handle of semaphore '" + name() + "' was already released");
            }
            released = true;
            if (grant.lostCause != null) {
                throw new LostHoldException(name(), grant.lostCause, "permits of semaphore '" + name()
                        + "' were lost: " + grant.lostCause);
            }
            state.end(grant);
            if (client.store.unavailable) {
                throw new SynchronizerUnavailableException("release of semaphore '" + name()
                        + "' could not reach the store (setUnavailable(true)); the permits were dropped", null);
            }
        } finally {
            client.store.mutex.unlock();
        }
    }

    @Override
    public CompletionStage<Void> releaseAsync() {
        return CompletableFuture.runAsync(this::release, client.store.async);
    }

    @Override
    public void close() {
        client.store.mutex.lock();
        try {
            if (!released) {
                release();
            }
        } finally {
            client.store.mutex.unlock();
        }
    }
}
