package dev.synchronizers.redis.lock;

import dev.synchronizers.LockHandle;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.redis.client.LossSignal;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A hold of a {@link RedisLock} that belongs to this object, not to a thread: see {@link LockHandle}.
 * The lock books it among its holds ({@link Holds#addHandle}) and keeps its lease with its backend,
 * as it does a thread's; this object decides, once, how the hold ends (released, let go after a
 * while, or lost) and says so to its owner.
 */
final class RedisLockHandle implements LockHandle {

    private final RedisLock lock;
    private final Holds.Hold hold;
    /** Set once, by release(), releaseAfter() or close(): from then on the handle holds nothing. */
    private final AtomicBoolean released = new AtomicBoolean();
    /** What {@link #lost()} tells: settled by the loss, or by the release. */
    private final LossSignal loss;

    RedisLockHandle(RedisLock lock, Holds.Hold hold) {
        this.lock = lock;
        this.hold = hold;
        this.loss = new LossSignal(lock.context.async, lock.context.lossSignals,
                () -> new LostHold(lock.name(), lock.kind, -1, hold.token, LostHold.Cause.ABANDONED, this));
    }

    /** Told by the lease's keeper that the hold ended other than by its release. */
    void lost(LostHold.Cause cause) {
        lock.holds.removeHandle(hold);
        lock.unpin(hold, false);
        LostHold report = new LostHold(lock.name(), lock.kind, -1, hold.token, cause, this);
        lock.context.listeners.report(report);
        loss.lost(report);
        lock.backend.acquirer.wakeHead();
    }

    @Override
    public CompletionStage<LostHold> lost() {
        return loss.stage();
    }

    /**
     * Runs what ends the hold for its owner (release, let go), and settles {@link #lost()}: with
     * the loss it finds, or cancelled however else it ends.
     */
    private void ending(Runnable end) {
        try {
            end.run();
        } catch (LostHoldException e) {
            loss.lost(new LostHold(lock.name(), lock.kind, -1, hold.token, e.lostCause(), this));
            throw e;
        } finally {
            loss.released();
        }
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
        return !released.get() && hold.lease.endedBecause() == null && lock.context.isOpen();
    }

    @Override
    public boolean verify() {
        if (!isHeld()) {
            return false;
        }
        return lock.verify(hold);
    }

    @Override
    public boolean extend(Duration lease) {
        long millis = lock.fixedLease(lease);
        checkNotReleased("extend()");
        lock.context.checkOpen();
        if (hold.lease.endedBecause() != null) {
            return false;
        }
        HoldLease next = lock.backend.relet(hold, millis, this::lost);
        if (next == null) {
            return false;
        }
        hold.lease = next;
        return true;
    }

    @Override
    public void releaseAfter(Duration keepClosedFor) {
        Objects.requireNonNull(keepClosedFor, "keepClosedFor");
        if (keepClosedFor.isNegative()) {
            throw new IllegalArgumentException("keepClosedFor must be >= 0: " + keepClosedFor);
        }
        if (keepClosedFor.isZero()) {
            release();
            return;
        }
        long millis = RedisLock.leaseMillis(Math.max(1, keepClosedFor.toMillis()), TimeUnit.MILLISECONDS);
        lock.context.checkOpen();
        if (!released.compareAndSet(false, true)) {
            throw new IllegalStateException(describe() + ": releaseAfter() of a handle already released");
        }
        ending(() -> letGo(millis));
    }

    private void letGo(long millis) {
        lock.holds.removeHandle(hold);
        LostHold.Cause ended = hold.lease.endedBecause();
        if (ended != null) {
            lock.backend.endLease(hold.lease);
            lock.unpin(hold, false);
            throw lock.lost(ended, "releaseAfter()");
        }
        boolean closed;
        try {
            closed = lock.backend.keepClosed(hold, millis);
        } catch (RuntimeException e) {
            // Unknown whether it took: the hold ends with its current lease at the latest.
            lock.backend.endLease(hold.lease);
            lock.unpin(hold, false);
            throw e;
        }
        if (!closed) {
            lock.unpin(hold, false);
            throw lock.lost(LostHold.Cause.GONE, "releaseAfter()");
        }
        lock.unpin(hold, true);
    }

    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            throw new IllegalStateException(describe() + ": release() of a handle already released");
        }
        lock.holds.removeHandle(hold);
        ending(() -> lock.end(hold, -1, this, "release()"));
    }

    @Override
    public CompletionStage<Void> releaseAsync() {
        return lock.context.runAsync(this::release);
    }

    @Override
    public void close() {
        if (released.compareAndSet(false, true)) {
            lock.holds.removeHandle(hold);
            ending(() -> lock.end(hold, -1, this, "close()"));
        }
    }

    private void checkNotReleased(String what) {
        if (released.get()) {
            throw new IllegalStateException(describe() + ": " + what + " of a handle already released");
        }
    }

    private String describe() {
        return lock.kind + " '" + lock.name() + "' handle with token " + hold.token;
    }

    @Override
    public String toString() {
        return "LockHandle[" + lock.kind + " " + lock.name() + ", token " + hold.token + ", "
                + (released.get() ? "released" : isHeld() ? "held" : "lost") + "]";
    }
}
