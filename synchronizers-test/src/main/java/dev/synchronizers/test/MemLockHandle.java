package dev.synchronizers.test;

import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A lock hold that belongs to this object. */
final class MemLockHandle implements LockHandle {

    private final MemLock lock;
    private final Hold hold;
    private final InMemorySynchronizers.Store store;
    /** Released (or let go by releaseAfter); guarded by the store's lock. */
    boolean released;

    MemLockHandle(MemLock lock, Hold hold) {
        this.lock = lock;
        this.hold = hold;
        this.store = lock.client.store;
    }

    @Override
    public String name() {
        return lock.name();
    }

    @Override
    public long fencingToken() {
        return hold.token;
    }

    @Override
    public boolean isHeld() {
        store.mutex.lock();
        try {
            return !hold.ended && !released && !hold.client.closed;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public CompletionStage<LostHold> lost() {
        return CompletableFutures.copy(hold.lostStage);
    }

    @Override
    public boolean verify() {
        store.mutex.lock();
        try {
            lock.client.check();
            return !hold.ended && !released && !hold.client.closed;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public boolean extend(Duration lease) {
        long nanos = InMemorySynchronizers.leaseNanos(lease);
        store.mutex.lock();
        try {
            lock.client.check();
            if (hold.ended || released) {
                return false;
            }
            hold.state.fix(hold, System.nanoTime() + nanos, false);
            return true;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public void releaseAfter(Duration keepClosedFor) {
        if (keepClosedFor.isNegative() || keepClosedFor.isZero()) {
            release();
            return;
        }
        long nanos = InMemorySynchronizers.leaseNanos(keepClosedFor);
        store.mutex.lock();
        try {
            lock.client.check();
            throwIfDone();
            released = true;
            hold.state.fix(hold, System.nanoTime() + nanos, true);
            CompletableFutures.fail(store, hold.lostStage, new CancellationException("let go by releaseAfter"));
        } finally {
            store.mutex.unlock();
        }
    }

    private void throwIfDone() {
        if (released) {
            throw new IllegalStateException("the handle of '" + name() + "' was already released");
        }
        if (hold.lostCause != null) {
            released = true;
            throw hold.state.lostException(hold);
        }
    }

    @Override
    public void release() {
        store.mutex.lock();
        try {
            throwIfDone();
            hold.state.end(hold);
            if (store.unavailable) {
                throw new SynchronizerUnavailableException("release of '" + name()
                        + "' could not reach the store (setUnavailable(true)); the hold was dropped", null);
            }
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public CompletionStage<Void> releaseAsync() {
        return CompletableFuture.runAsync(this::release, store.async);
    }

    @Override
    public void close() {
        store.mutex.lock();
        try {
            if (released) {
                return;
            }
            release();
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public String toString() {
        return "LockHandle[" + lock + ", token " + hold.token + "]";
    }
}
