package dev.synchronizers.redis.lock;

import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.LocalLine;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.script.HandoverReply;
import dev.synchronizers.redis.script.ReleaseReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.wakeup.WakeupMessage;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The release path of a {@link ServerLockBackend}: the last unlock of a hold, as a release that
 * wakes the waiters it frees, or as a hand-over to this client's first waiter; and the
 * token-checked release that every path ends a hold in Redis with, sent again in the background
 * while Redis does not answer.
 */
final class ServerRelease {

    private final String name;
    private final String kind;
    private final LockKeys keys;
    private final LockPolicy policy;
    private final Machinery machinery;
    private final Acquirer acquirer;
    /** This client's cache of the lock, or null (see {@link ServerLockBackend}). */
    private final LockCache cache;
    /** Hand-overs in a row within this client while others were marked as waiting. */
    private final AtomicInteger localStreak = new AtomicInteger();

    ServerRelease(ServerLockBackend backend, LockCache cache) {
        this.name = backend.name;
        this.kind = backend.kind;
        this.keys = backend.keys;
        this.policy = backend.policy;
        this.machinery = backend.machinery;
        this.acquirer = backend.acquirer;
        this.cache = cache;
    }

    /** Sends a token-checked release and does not wait for it; one that fails is retried until the lease is over. */
    void quietly(String owner, long token) {
        machinery.followUps.send(policy.release, "release of " + kind + " '" + name + "'",
                () -> command(owner, token),
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
    }

    /** The token-checked release of {@code owner}'s hold, sent now. */
    CompletionStage<List<Object>> command(String owner, long token) {
        return machinery.scripts.run(policy.release, keys.keysFor(policy.release), owner, Long.toString(token));
    }

    /** See {@link ServerLockBackend#unlockedLost}: a hold whose renewal failed may still be in Redis. */
    void unlockedLost(Holds.Hold held, LostHold.Cause cause) {
        if (cause == LostHold.Cause.UNRENEWABLE) {
            // Redis may still have it: do not leave it to run out if it can be ended now.
            quietly(held.owner, held.token);
        }
    }

    /** See {@link ServerLockBackend#release}. */
    LostHold.Cause release(long threadId, Holds.Hold held) {
        machinery.checkOpen();
        if (held.lease instanceof CacheTake take) {
            // Kept as an idle cache (no round trip) unless asked back; the local head takes it next.
            try {
                return cache.release(take);
            } finally {
                acquirer.wakeHead();
            }
        }
        if (policy.localQueue) {
            LocalLine.Handover next = localStreak.get() < ServerLockBackend.MAX_LOCAL_STREAK
                    ? acquirer.line().reserveHead()
                    : null;
            if (next != null) {
                return handOver(held, next);
            }
        }
        if (policy.localQueue) {
            localStreak.set(0);
        }
        List<Object> released;
        machinery.releasing(() -> command(held.owner, held.token));
        try {
            released = machinery.await(command(held.owner, held.token),
                    "release " + kind + " '" + name + "' (the hold was dropped locally; the release is retried"
                            + " until Redis answers, and the hold expires with its lease at the latest)");
        } catch (RuntimeException e) {
            acquirer.wakeHead();
            if (!(e instanceof SynchronizerUnavailableException)) {
                throw e;
            }
            retryRelease(held);
            throw e;
        }
        ReleaseReply release = ReleaseReply.of(policy.release, released);
        if (!release.released()) {
            acquirer.wakeHead();
            return lostAtUnlock(held);
        }
        wakeLocally(release);
        return null;
    }

    /**
     * Ends this thread's hold by handing the lock to the first local waiter, reserved while idle,
     * in one script call (lock-handover.lua): a new hold with a new token, without the head's own
     * round trip. Counts the streak of hand-overs while other waiters are marked, so that
     * {@link ServerLockBackend#MAX_LOCAL_STREAK} of them in a row are followed by a real release.
     */
    private LostHold.Cause handOver(Holds.Hold held, LocalLine.Handover next) {
        long sent = System.nanoTime();
        List<Object> reply;
        // Sent again after a switch as a plain release: on a new master that still has this hold.
        machinery.releasing(() -> command(held.owner, held.token));
        try {
            // The waiters behind the one handed the lock, for other clients' snapshots.
            String waitersLeft = Integer.toString(Math.max(0, acquirer.localWaiters() - 1));
            reply = machinery.await(machinery.scripts.run(Script.LOCK_HANDOVER, keys.keysFor(Script.LOCK_HANDOVER),
                    held.owner, Long.toString(held.token), next.owner(), Long.toString(machinery.leaseMillis),
                    waitersLeft),
                    "hand " + kind + " '" + name + "' over (the hold was dropped locally; a release is retried"
                            + " until Redis answers, and the hold expires with its lease at the latest)");
        } catch (RuntimeException e) {
            // The head tries for itself: if the hand-over did happen, its try finds it the owner
            // and takes the lock afresh; the token-checked release below is then a no-op. If it
            // stops without a try's answer instead, it gives the lock back (Waiter#done).
            acquirer.line().settleInDoubt(next);
            if (e instanceof SynchronizerUnavailableException) {
                retryRelease(held);
            }
            throw e;
        }
        HandoverReply handover = HandoverReply.of(Script.LOCK_HANDOVER, reply);
        if (!handover.handedOver()) {
            acquirer.line().settle(next, null);
            return lostAtUnlock(held);
        }
        if (handover.waitingMarked()) {
            localStreak.incrementAndGet();
        } else {
            localStreak.set(0);
        }
        acquirer.line().settle(next, new WakeupMessage.LocalHandover(handover.token(), sent).encode());
        return null;
    }

    /**
     * Ends, as soon as Redis is back, a hold whose release could not be sent: left in Redis it
     * would keep everyone out for a whole lease, even this thread's own local queue. Retried until
     * Redis answers or the lease is over; token-checked, so always safe.
     */
    private void retryRelease(Holds.Hold held) {
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(held.lease.fixed() ? held.lease.fixedMillis() : machinery.leaseMillis);
        machinery.followUps.retryUntil(policy.release, "release of " + kind + " '" + name + "'",
                () -> command(held.owner, held.token), System.nanoTime() + leaseNanos);
    }

    /** Why Redis no longer had a hold when unlock() came. */
    private static LostHold.Cause lostAtUnlock(Holds.Hold held) {
        return held.lease.endedBecause() == LostHold.Cause.LEASE_EXPIRED
                ? LostHold.Cause.LEASE_EXPIRED
                : LostHold.Cause.GONE;
    }

    /**
     * Tells this client's waiters what the release did for them, at once rather than when the
     * published message comes back: the fair waiter it handed the lock to (with the token), or
     * the local queue's head. A waiter of another client is not here and hears it from Redis.
     */
    private void wakeLocally(ReleaseReply released) {
        String woken = released.woken();
        if (released.handedOver()) {
            machinery.wakeups.wake(keys.clientWakeups(machinery.clientId),
                    WakeupMessage.granted(woken, String.valueOf(released.grantedToken())).encode());
        } else if (woken.equals(WakeupMessage.RELEASED)) {
            machinery.wakeups.wake(keys.wakeups(), woken);
        } else if (!woken.isEmpty()) {
            machinery.wakeups.wake(keys.clientWakeups(machinery.clientId), woken);
        }
        // The local line's first waiter tries now: it takes a free lock, or takes its place in
        // Redis's line behind the client the lock was handed to (not handed over to it locally
        // when a streak of local hand-overs ended, so that other clients get their turn).
        if (woken.isEmpty() || released.handedOver() && policy.localQueue) {
            acquirer.wakeHead();
        }
    }
}
