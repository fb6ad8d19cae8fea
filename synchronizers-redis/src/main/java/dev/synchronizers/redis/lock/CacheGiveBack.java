package dev.synchronizers.redis.lock;

import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.ReleaseReply;
import dev.synchronizers.redis.script.Script;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives one {@link LockCache} back in Redis (docs/design/lock-caching.md): when another client
 * asks for the lock, when the cache is dropped or lost while Redis may still have it, when the
 * client closes, when a take does not count, and after a take in doubt.
 *
 * <p>A cache whose base is known goes by its base ({@code lock-release.lua}, token-checked, so
 * always safe); one left by a take that got no answer goes by owner ({@code lock-give-back.lua},
 * section 6). Every give-back is a follow-up retried until Redis answers or a lease has passed, and
 * one by base is recorded to be sent again to a new master after a Sentinel switch, as a release is.
 * A give-back that finds the cache gone tells the holders of the takes it did not confirm
 * ({@link UnconfirmedTakes}).
 *
 * <p>Keeps no state: the cache calls it once it has forgotten what it gives back.
 */
final class CacheGiveBack {

    /** The cache's logger: its lines read as the cache's, whichever part of it writes them. */
    private static final Logger log = LoggerFactory.getLogger(LockCache.class);

    private final String name;
    private final LockKeys keys;
    private final Machinery machinery;
    /** The cache's owner string in Redis: {@code <client-id>:cache}. */
    private final String owner;

    CacheGiveBack(String name, LockKeys keys, Machinery machinery, String owner) {
        this.name = name;
        this.keys = keys;
        this.machinery = machinery;
        this.owner = owner;
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
    LostHold.Cause atRelease(String cacheBase, boolean active, List<Consumer<LostHold.Cause>> suspects,
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
     *
     * @param guard the cache's guard, held while each sending is checked and sent
     * @param stillInDoubt read under {@code guard}: whether the client caches nothing of the lock and
     *     has had no take answered since
     */
    void afterTakeInDoubt(Lock guard, BooleanSupplier stillInDoubt) {
        machinery.metrics.followUp(Recorder.FollowUp.GIVE_BACK);
        machinery.followUps.send(Script.LOCK_GIVE_BACK, "give back the cached lock '" + name + "' after a take in doubt",
                () -> byOwnerCommand(guard, stillInDoubt),
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
    }

    private CompletionStage<Long> byOwnerCommand(Lock guard, BooleanSupplier stillInDoubt) {
        guard.lock();
        try {
            if (!stillInDoubt.getAsBoolean()) {
                return CompletableFuture.completedFuture(0L);
            }
            return machinery.scripts.run(Script.LOCK_GIVE_BACK, keys.keysFor(Script.LOCK_GIVE_BACK), owner);
        } finally {
            guard.unlock();
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
