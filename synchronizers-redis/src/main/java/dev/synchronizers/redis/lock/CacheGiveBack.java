package dev.synchronizers.redis.lock;

import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.lock.CacheState.Ending;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.ReleaseReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * Ends this client's cache of one lock (docs/design/lock-caching.md) and gives it back in Redis:
 * when another client asks for the lock, when the cache is dropped (its lease may have run out, an
 * acquisition bypasses it, a take inside was abandoned, a reservation failed) or lost while Redis
 * may still have it, when the client closes, at the release of a take asked back, when a take does
 * not count, and after a take in doubt.
 *
 * <p>A cache whose base is known goes by its base ({@code lock-release.lua}, token-checked, so
 * always safe); one left by a take that got no answer goes by owner ({@code lock-give-back.lua},
 * section 6). Every give-back is a follow-up retried until Redis answers or a lease has passed, and
 * one by base is recorded to be sent again to a new master after a Sentinel switch, as a release is.
 * A give-back that finds the cache gone tells the holders of the takes it did not confirm
 * ({@link UnconfirmedTakes}).
 *
 * <p>Each ending forgets the cache under the {@link CacheState}'s guard first, then gives it back
 * without holding the guard (except the background sending of a drop, which only queues).
 */
final class CacheGiveBack {

    private static final Logger log = CacheState.log;

    private final CacheState state;
    private final String name;
    private final LockKeys keys;
    private final Machinery machinery;
    /** The cache's owner string in Redis: {@code <client-id>:cache}. */
    private final String owner;

    CacheGiveBack(CacheState state) {
        this.state = state;
        this.name = state.name;
        this.keys = state.keys;
        this.machinery = state.machinery;
        this.owner = state.owner;
    }

    /**
     * Ends {@code take} by its holder: the cache stays, idle, unless it was asked back, when it is
     * given back in Redis (one round trip).
     *
     * @return null if released; otherwise why Redis no longer had the cache
     * @throws SynchronizerUnavailableException if the give-back went unanswered (it is retried)
     */
    LostHold.Cause release(CacheTake take) {
        String giveBackBase;
        Watchdog.Lease ending;
        List<Consumer<LostHold.Cause>> suspects;
        state.guard.lock();
        try {
            if (state.current != take || state.phase != CacheState.Phase.HELD) {
                return LostHold.Cause.GONE;
            }
            state.current = null;
            if (take.cacheLease().endedBecause() != null) {
                return take.cacheLease().endedBecause();
            }
            if (!state.askedBack) {
                state.phase = CacheState.Phase.IDLE;
                state.holderThreadId = -1;
                state.unconfirmed.keep(take::tellLost, state.lease);
                return null;
            }
            giveBackBase = state.base;
            ending = state.lease;
            state.meters.cacheEnded(state.awaitGiveBack ? Ending.AWAIT.tag : Ending.ASKED.tag);
            suspects = state.unconfirmed.since(state.lease);
            state.forgetLocked();
        } finally {
            state.guard.unlock();
        }
        boolean active = machinery.watchdog.unregister(ending);
        return atRelease(giveBackBase, active, suspects, take::tellLost);
    }

    /**
     * Gives an idle cache back (in the background, on the connection every later call of this
     * client goes by, so before them), for an acquisition that does not use the cache: a fixed
     * lease. Does nothing to a held cache or none.
     */
    void ifIdle() {
        state.guard.lock();
        try {
            if (state.phase == CacheState.Phase.IDLE) {
                dropLocked(Ending.BYPASS);
            }
        } finally {
            state.guard.unlock();
        }
    }

    /**
     * Gives an idle cache back because the client closes, in the background; a cache it finds gone
     * tells the takes it did not confirm, as a renewal would, and the closing client waits for
     * that ({@link Machinery#giveBackCaches}). A held one is left to its lease, as a thread's hold is.
     */
    void onClose() {
        String giveBackBase;
        Watchdog.Lease ending;
        List<Consumer<LostHold.Cause>> suspects;
        state.guard.lock();
        try {
            if (state.phase != CacheState.Phase.IDLE) {
                return;
            }
            giveBackBase = state.base;
            ending = state.lease;
            state.meters.cacheEnded(Ending.CLOSE.tag);
            suspects = state.unconfirmed.since(state.lease);
            state.forgetLocked();
        } finally {
            state.guard.unlock();
        }
        reporting(giveBackBase, machinery.watchdog.unregister(ending), suspects);
    }

    /**
     * Told that another client asks for the lock, by a message on this client's ask channel or by
     * the watchdog (a renewal's answer): an idle cache goes back at once, a held one at its release.
     */
    void askedBack() {
        CacheTake abandoned = null;
        state.guard.lock();
        try {
            state.askedBack = true;
            if (state.phase == CacheState.Phase.IDLE) {
                dropLocked(Ending.ASKED);
            } else {
                abandoned = abandonIfEndedLocked();
            }
        } finally {
            state.guard.unlock();
        }
        reportAbandoned(abandoned);
    }

    /**
     * A take whose thread ended without unlock() is reported {@code ABANDONED} and the cache given
     * back, which wakes the client's threads waiting behind it (they sleep until the holder's
     * release, and none will come).
     */
    void checkAbandoned() {
        CacheTake abandoned = null;
        state.guard.lock();
        try {
            abandoned = abandonIfEndedLocked();
        } finally {
            state.guard.unlock();
        }
        reportAbandoned(abandoned);
    }

    /**
     * If the thread inside ended without releasing (a hold abandoned, as the watchdog reports a
     * thread's), gives the cache back, since no release will come.
     *
     * @return the abandoned take, to be reported once the guard is released ({@link #reportAbandoned}); null if none
     */
    CacheTake abandonIfEndedLocked() {
        CacheTake inside = state.current;
        if (state.phase != CacheState.Phase.HELD || inside == null || !inside.threadEnded()) {
            return null;
        }
        dropLocked(Ending.ABANDONED);
        return inside;
    }

    static void reportAbandoned(CacheTake abandoned) {
        if (abandoned != null) {
            abandoned.tellLost(LostHold.Cause.ABANDONED);
        }
    }

    /** Told by the watchdog that the cache is lost in Redis: a take inside is lost with it. */
    void lost(Watchdog.Lease which, LostHold.Cause cause) {
        CacheTake inside;
        List<Consumer<LostHold.Cause>> suspects;
        String mayStillBeThere;
        state.guard.lock();
        try {
            if (which != state.lease) {
                return;
            }
            inside = state.current;
            state.meters.cacheEnded(Ending.LOST.tag);
            suspects = state.unconfirmed.since(state.lease);
            // Unrenewable: renewals may have run without their replies coming back, so Redis may
            // still have it for most of a lease; ended by its base instead, which is always safe.
            mayStillBeThere = cause == LostHold.Cause.UNRENEWABLE ? state.base : null;
            state.forgetLocked();
        } finally {
            state.guard.unlock();
        }
        if (mayStillBeThere != null) {
            quietly(mayStillBeThere);
        }
        UnconfirmedTakes.tellLost(suspects, cause);
        if (inside == null) {
            log.debug("cached lock '{}': lost while idle ({})", name, cause);
        } else {
            inside.tellLost(cause);
        }
        // A thread of this client that waits behind the cache sleeps until a release; a release
        // racing this loss may find the cache forgotten and wake nobody.
        state.wakeLocalLine.run();
    }

    /** Drops an idle cache: no more local takes; given back in Redis in the background. */
    void dropLocked(Ending why) {
        log.debug("cached lock '{}': giving it back, {}", name, why.why);
        state.meters.cacheEnded(why.tag);
        String giveBackBase = state.base;
        Watchdog.Lease ending = state.lease;
        List<Consumer<LostHold.Cause>> suspects = state.unconfirmed.since(state.lease);
        state.forgetLocked();
        boolean active = ending != null && machinery.watchdog.unregister(ending);
        if (giveBackBase != null) {
            reporting(giveBackBase, active, suspects);
        }
    }

    /**
     * Gives a cache back at its holder's release (asked back, or a condition's await): one round
     * trip, sent as {@link #reporting} does.
     *
     * @param active whether the cache's lease was still active when it was unregistered
     * @param suspects the takes the cache did not confirm (see {@link #reportWhenSettled})
     * @param releasing tells the releasing take's holder, should the give-back go unanswered
     * @return null if released; otherwise why Redis no longer had the cache
     * @throws SynchronizerUnavailableException if the give-back went unanswered (it is retried)
     */
    private LostHold.Cause atRelease(String cacheBase, boolean active, List<Consumer<LostHold.Cause>> suspects,
            Consumer<LostHold.Cause> releasing) {
        // Sent as a follow-up: unanswered, it is retried until Redis answers or a lease has passed
        // (token-checked by the base, so always safe), as unlock()'s release is.
        CompletableFuture<List<Object>> answered = reporting(cacheBase, active, suspects);
        List<Object> reply;
        try {
            reply = machinery.await(answered, "give back the cached lock '" + name + "' (retried until Redis"
                    + " answers, and it expires with its lease at the latest)");
        } catch (SynchronizerUnavailableException e) {
            // The caller learns nothing of this take: it is told with the earlier ones once a
            // sending is answered, or once none can be.
            reportWhenSettled(answered, active, List.of(releasing));
            throw e;
        }
        return active && ReleaseReply.of(Script.LOCK_RELEASE, reply).released() ? null : LostHold.Cause.GONE;
    }

    /**
     * Gives back a cache taken in Redis that does not count (see {@link Machinery#replicated}): at
     * once, and if Redis does not answer, retried in the background (token-checked by the base).
     */
    void uncounted(String cacheBase) {
        log.debug("cached lock '{}': taken, but from a master that was switched away from, or acknowledged by"
                + " fewer replicas than asked; giving it back", name);
        machinery.releasing(() -> releaseCommand(cacheBase));
        try {
            machinery.await(releaseCommand(cacheBase), "give back the cached lock '" + name + "'");
        } catch (RuntimeException e) {
            send(cacheBase);
        }
    }

    /**
     * Gives a cache back in the background, retried until Redis answers or a lease has passed, and
     * recorded to be sent again to a new master after a Sentinel switch, as a release is; then
     * tells the holders of {@code suspects} if the cache turns out lost ({@link #reportWhenSettled}).
     *
     * @param active whether the cache's lease was still active when it was unregistered: if not,
     *     it was found lost already
     * @return the reply of the first sending Redis answers (see {@link dev.synchronizers.redis.watchdog.FollowUps#sendUntilAnswered})
     */
    CompletableFuture<List<Object>> reporting(String cacheBase, boolean active, List<Consumer<LostHold.Cause>> suspects) {
        machinery.releasing(() -> releaseCommand(cacheBase));
        CompletableFuture<List<Object>> answered = machinery.followUps.sendUntilAnswered(Script.LOCK_RELEASE,
                "give back the cached lock '" + name + "'", () -> releaseCommand(cacheBase),
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
        reportWhenSettled(answered, active, suspects);
        return answered;
    }

    /**
     * Gives a cache back in the background, retried until Redis answers or a lease has passed, and
     * recorded to be sent again to a new master after a Sentinel switch, as a release is.
     */
    void quietly(String cacheBase) {
        machinery.releasing(() -> releaseCommand(cacheBase));
        send(cacheBase);
    }

    /**
     * Ends the cache field that a take whose reply never came may have left in Redis: nobody
     * renews it, and until its lease ran out it would keep every other client out (an ask finds no
     * cache here to give back). Its base is unknown, so it goes by owner ({@code lock-give-back.lua}),
     * sent now and retried until Redis answers or a lease has passed; each sending only while the
     * client caches nothing of the lock and has had no take answered since, checked under the guard
     * that a take marks itself under, so that it reaches Redis before any later take of the client
     * (one connection, in order). A cache field of the client is then one nobody knows of.
     */
    void afterTakeInDoubt() {
        machinery.metrics.followUp(Recorder.FollowUp.GIVE_BACK);
        machinery.followUps.send(Script.LOCK_GIVE_BACK, "give back the cached lock '" + name + "' after a take in doubt",
                this::byOwnerCommand, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
    }

    private CompletionStage<Long> byOwnerCommand() {
        state.guard.lock();
        try {
            // Sent only while the client caches nothing of the lock and has had no take answered since.
            if (!(state.phase == CacheState.Phase.NONE && state.takeInDoubt)) {
                return CompletableFuture.completedFuture(0L);
            }
            return machinery.scripts.run(Script.LOCK_GIVE_BACK, keys.keysFor(Script.LOCK_GIVE_BACK), owner);
        } finally {
            state.guard.unlock();
        }
    }

    /**
     * Tells the holders of {@code takes} that the cache they came from was lost, once a give-back
     * settles it: {@code GONE} if the first sending Redis answers finds the cache gone (or the cache
     * was lost already, {@code !active}); {@code UNRENEWABLE} if no sending is answered before the
     * retries stop (a lease has passed, or the client closed), since Redis may have let the cache go
     * then, as the watchdog reports a hold it cannot renew. Told on the watchdog's executor, never on
     * an I/O thread; tracked so that {@code close()} delivers it before it returns.
     */
    private void reportWhenSettled(CompletableFuture<List<Object>> answered, boolean active,
            List<Consumer<LostHold.Cause>> takes) {
        if (takes.isEmpty()) {
            return;
        }
        machinery.reportInFlight(answered, answered.handle((reply, failure) -> {
            if (failure != null) {
                return LostHold.Cause.UNRENEWABLE;
            }
            return active && ReleaseReply.of(Script.LOCK_RELEASE, reply).released() ? null : LostHold.Cause.GONE;
        }).thenAcceptAsync(cause -> {
            if (cause != null) {
                UnconfirmedTakes.tellLost(takes, cause);
            }
        }, machinery.watchdog.executor()));
    }

    /** Sends a give-back as a follow-up: retried until Redis answers or a lease has passed. */
    private void send(String cacheBase) {
        machinery.followUps.send(Script.LOCK_RELEASE, "give back the cached lock '" + name + "'",
                () -> releaseCommand(cacheBase), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
    }

    private CompletionStage<List<Object>> releaseCommand(String cacheBase) {
        return machinery.scripts.run(Script.LOCK_RELEASE, keys.keysFor(Script.LOCK_RELEASE), owner, cacheBase);
    }
}
