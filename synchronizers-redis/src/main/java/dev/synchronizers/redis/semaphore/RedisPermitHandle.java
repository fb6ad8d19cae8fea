package dev.synchronizers.redis.semaphore;

import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.semaphore.Grants.Grant;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Permits of a {@link RedisSemaphore} that belong to this object: see {@link PermitHandle}. They
 * are one grant, booked as the handle's ({@link Grant#ofHandle}), so that only this object releases
 * it, all at once ({@link GrantEnds#releaseHandle}); this object decides, once, that it is released.
 */
final class RedisPermitHandle implements PermitHandle {
    private final String name;
    private final Machinery machinery;
    private final GrantEnds ends;
    private final Grant grant;
    private final int permits;
    /** Set once, by release() or close(): from then on the handle holds nothing. */
    private final AtomicBoolean released = new AtomicBoolean();

    RedisPermitHandle(SemaphoreParts parts, GrantEnds ends, Grant grant) {
        this.name = parts.name();
        this.machinery = parts.machinery();
        this.ends = ends;
        this.grant = grant;
        this.permits = grant.permits;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int permits() {
        return permits;
    }

    @Override
    public boolean isHeld() {
        // The watchdog ends the lease before it reports a loss.
        return !released.get() && grant.lease.endedBecause() == null && machinery.isOpen();
    }

    @Override
    public void release() {
        if (!tryClaimRelease()) {
            throw new IllegalStateException(describe() + ": release() of a handle already released");
        }
        end("release()");
    }

    @Override
    public CompletionStage<LostHold> lost() {
        return grant.loss.stage();
    }

    /** Releases the grant, once claimed, and settles {@link #lost()}: with the loss it finds, or cancelled. */
    private void end(String what) {
        try {
            ends.releaseHandle(grant, what);
        } catch (LostHoldException e) {
            grant.loss.lost(new LostHold(name, SemaphoreParts.KIND, -1, -1, e.lostCause()));
            throw e;
        } finally {
            grant.loss.released();
        }
    }

    @Override
    public CompletionStage<Void> releaseAsync() {
        return machinery.runAsync(this::release);
    }

    @Override
    public void close() {
        if (!released.get() && tryClaimRelease()) {
            end("close()");
        }
    }

    /**
     * Marks the handle released, once, after checking that the client is open, so that a
     * release refused by a closed client changes nothing.
     *
     * @return false if it was released before
     */
    private boolean tryClaimRelease() {
        if (released.get()) {
            return false;
        }
        machinery.checkOpen();
        return released.compareAndSet(false, true);
    }

    private String describe() {
        return SemaphoreParts.KIND + " '" + name + "' handle of " + permits + " permits";
    }

    @Override
    public String toString() {
        return "PermitHandle[" + SemaphoreParts.KIND + " " + name + ", " + permits + " permits, "
                + (released.get() ? "released" : isHeld() ? "held" : "lost") + "]";
    }
}
