package dev.synchronizers.redis.semaphore;

import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.LostHoldListeners;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.SemaphoreReleaseReply;
import dev.synchronizers.redis.semaphore.Grants.Grant;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How one semaphore's grants end in Redis, other than by a give-back of an acquisition that did
 * not count ({@link Acquisitions}): a plain release, a handle's release, a give-up of an acquisition
 * whose outcome is unknown, and a loss the watchdog reports. Books first, then Redis: what the
 * books took is sent as what each grant keeps (semaphore-release.lua), so running it twice
 * releases once, and a call whose reply does not come is retried by the follow-ups.
 */
final class GrantEnds {

    private final SemaphoreParts parts;
    private final Machinery machinery;

    GrantEnds(SemaphoreParts parts) {
        this.parts = parts;
        this.machinery = parts.machinery();
    }

    /**
     * A plain release of {@code permits} by the calling thread: takes them from this client's
     * grants in the books' order ({@link Grants#release}), sends what the live ones keep, and
     * throws if some of them were lost.
     *
     * @param permits at least 1
     */
    void release(int permits) {
        Grants.Taken taken = parts.grants().release(Machinery.currentThreadId(), permits);
        if (!taken.keep().isEmpty()) {
            sendRelease(taken.keep(), false);
        }
        if (taken.lostCause() != null) {
            throw new LostHoldException(parts.name(), taken.lostCause(), parts.what("") + ": release of " + permits
                    + " permits failed: " + taken.lostPermits() + " of them were lost: "
                    + LostHoldListeners.describe(taken.lostCause()));
        }
    }

    /**
     * Ends a handle's grant, whose handle has just been marked released: in Redis if it is live,
     * otherwise by throwing what it was lost for.
     */
    void releaseHandle(Grant grant, String what) {
        LostHold.Cause lostCause = parts.grants().releaseHandle(grant);
        if (lostCause != null) {
            throw new LostHoldException(parts.name(), lostCause, parts.what("") + ": " + what + " of a handle's "
                    + grant.permits + " permits failed: they were lost: " + LostHoldListeners.describe(lostCause));
        }
        sendRelease(grant.id + "=0", true);
    }

    /**
     * Sends a release that sets what each named grant keeps. Booked here already: if its reply does
     * not come it is retried (it is idempotent) until Redis answers or a lease has passed, and the
     * caller is told; a grant Redis no longer had was lost, and is reported so.
     *
     * @param ofHandle whether it releases a handle's grant (reported with thread id -1)
     */
    private void sendRelease(String keep, boolean ofHandle) {
        Supplier<CompletionStage<List<Object>>> release = () -> machinery.scripts.run(Script.SEMAPHORE_RELEASE,
                parts.keys().forQueue(), keep);
        List<Object> reply;
        machinery.releasing(release);
        try {
            reply = machinery.await(release.get(), parts.what("release permits of")
                    + " (dropped locally; the release is retried until Redis answers, and the permits expire with"
                    + " their lease at the latest)");
        } catch (SynchronizerUnavailableException e) {
            machinery.followUps.retryUntil(Script.SEMAPHORE_RELEASE, "release permits of " + parts.what(""), release,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
            throw e;
        }
        List<String> missing = SemaphoreReleaseReply.of(Script.SEMAPHORE_RELEASE, reply).missing();
        if (!missing.isEmpty()) {
            for (String grant : missing) {
                machinery.listeners.report(new LostHold(parts.name(), SemaphoreParts.KIND,
                        ofHandle ? -1 : threadOf(grant), -1, LostHold.Cause.GONE));
            }
            throw new LostHoldException(parts.name(), LostHold.Cause.GONE, parts.what("") + ": release failed: Redis"
                    + " no longer had the permits of " + String.join(" ", missing) + ": "
                    + LostHoldListeners.describe(LostHold.Cause.GONE));
        }
    }

    /** The thread id inside a grant's name, {@code <client-id>:<thread-id>:<sequence>}. */
    private static long threadOf(String grant) {
        return Owner.parse(grant).threadId();
    }

    /**
     * Told by the watchdog that a grant's lease is gone or could not be renewed in time: its
     * permits are back in the pool, or will be when the lease runs out. The grant is given up in
     * Redis for good, so no later call of this client can revive it, and kept here as lost for
     * the release that reaches it to report; a handle's grant leaves the books, since only its
     * handle, which keeps it, can reach it.
     */
    void lost(Grant grant, LostHold.Cause cause) {
        parts.grants().lost(grant, cause);
        giveUp(grant.id);
        LostHold report = new LostHold(parts.name(), SemaphoreParts.KIND, grant.threadId, -1, cause);
        machinery.listeners.report(report);
        if (grant.loss != null) {
            grant.loss.lost(report);
        }
    }

    /**
     * Gives up an acquisition whose outcome is unknown or whose permits are lost: takes it out of
     * the line, gives back its grant if Redis has one, and marks it so that a late run of its call
     * changes nothing. Idempotent; retried by the watchdog until Redis answers or a lease has
     * passed (then the grant and the place have expired anyway).
     */
    void giveUp(String acquisition) {
        machinery.metrics.followUp(Recorder.FollowUp.GIVE_UP);
        machinery.followUps.send(Script.SEMAPHORE_LEAVE, "give up acquisition " + acquisition + " of " + parts.what(""),
                () -> machinery.scripts.run(Script.SEMAPHORE_LEAVE, parts.keys().forQueue(), acquisition,
                        Long.toString(machinery.leaseMillis)),
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
    }
}
