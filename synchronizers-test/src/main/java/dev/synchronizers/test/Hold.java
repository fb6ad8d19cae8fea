package dev.synchronizers.test;

import dev.synchronizers.LostHold;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/** One hold of a lock name: a thread's (reentrant) or a handle's. Guarded by the store's lock. */
final class Hold {
    final LockState state;
    final InMemorySynchronizers client;
    final Object owner;
    /** The owning thread's id; -1 for a handle. */
    final long threadId;
    final boolean read;
    final long token;
    int count;
    /** The fixed lease it was taken with, 0 if renewed. */
    long leaseNanos;
    boolean fixed;
    long deadline;
    ScheduledFuture<?> expiry;
    boolean ended;
    LostHold.Cause lostCause;
    MemLockHandle handle;
    final CompletableFuture<LostHold> lostStage = new CompletableFuture<>();

    Hold(LockState state, InMemorySynchronizers client, Object owner, long threadId, boolean read, long token) {
        this.state = state;
        this.client = client;
        this.owner = owner;
        this.threadId = threadId;
        this.read = read;
        this.token = token;
    }

    long leaseRemainingMillis() {
        long nanos = fixed ? deadline - System.nanoTime() : state.store.leaseNanos;
        return Math.max(0, nanos / 1_000_000);
    }
}
