package dev.synchronizers.redis.lock;

import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.CachedLock;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.lock.CacheState.Phase;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * This client's cache of one non-fair lock (docs/design/lock-caching.md): the lock held in Redis
 * by the client ({@code <client-id>:cache}, renewed by the watchdog) between its threads' holds,
 * so that a thread takes it locally, with a fencing token from a block reserved in Redis.
 *
 * <p>States: none (nothing cached), taking (one thread takes it in Redis: one at a time, since a
 * second take by the same client replaces the first's field), idle (cached, no thread inside), held
 * (one thread inside, a {@link CacheTake}). Only idle to held is a local take; it checks the cache's lease by the local clock.
 * Asked back (a renewal answered {@code ASKED_BACK}), an idle cache is given back at once and a
 * held one at its holder's release. A cache lost in Redis ends the take inside it, if any, as a
 * lost hold.
 *
 * <p>The state is guarded by one {@link ReentrantLock}, held only for bookkeeping, never while
 * waiting for Redis (virtual threads).
 *
 * <p>A thread that ends inside a take is found when another client asks the cache back, when a
 * thread of this client wants it, or at the watchdog's next tick ({@link #checkAbandoned}): the
 * take is reported {@code ABANDONED} and the cache given back.
 *
 * <p>Another client asks for the lock by a message on this client's ask channel
 * ({@link Machinery#askBack}), and, should the message be lost, through the cache's next renewal.
 *
 * <p>What it shows: {@code isLocked()} answers from it while cached ({@link #lockedAsFarAsKnown}),
 * snapshots show the holding thread and latest local token ({@link #picture}), and the lock's
 * {@code toString()} its state ({@link #describe}).
 *
 * <p>Unknown outcomes (DESIGN.md; docs/design/lock-caching.md, section 6): a take in Redis that
 * gets no answer may have left a cache field nobody knows the base of; it is given back by owner
 * ({@code lock-give-back.lua}), retried until Redis answers, but only while the client caches
 * nothing of the lock and has sent no take since. A reservation that gets no answer fails the take
 * and gives the cache back by its base; so does a cache the watchdog can no longer vouch for
 * ({@code UNRENEWABLE}), which Redis may still have. Every give-back is a follow-up retried until
 * Redis answers or a lease has passed.
 *
 * <p>A take released locally is confirmed only by the cache's next renewal (or give-back) that
 * finds the cache in Redis: until then Redis may have lost the cache during the take, e.g. to
 * {@code forceUnlock()} by another client, which the client learns only at that next call (design
 * note, section 3). So the takes released since the start of the last renewal that confirmed the
 * cache are kept ({@link UnconfirmedTakes#LIMIT} at most), and reported lost with the cache if it turns
 * out lost: a holder whose hold may have overlapped another client's always hears of it, if late.
 *
 * <p>This class is the cache's face to the lock's backend and to the client context, and answers
 * what the cache shows; its parts do the rest, sharing one {@link CacheState} (the states, their
 * guard, and the transitions every part makes): {@link CacheTokens} takes the lock, locally with
 * the fencing tokens of a block or in Redis as the cache, and reserves the blocks;
 * {@link CacheGiveBack} ends the cache and gives it back in Redis; and {@link UnconfirmedTakes}
 * keeps the released takes for their late reports.
 */
final class LockCache implements CachedLock {

    private final CacheState state;
    private final CacheTokens tokens;
    private final CacheGiveBack giveBack;

    LockCache(String name, LockKeys keys, Machinery machinery, SynchronizerMeters meters, Runnable wakeLocalLine) {
        this.state = new CacheState(name, keys, machinery, meters, this, wakeLocalLine);
        this.giveBack = new CacheGiveBack(state);
        this.tokens = new CacheTokens(state, giveBack);
    }

    /** Whether this client caches the lock now (being taken, idle or held): its threads must not acquire it in Redis. */
    boolean present() {
        return state.guarded(() -> state.phase != Phase.NONE);
    }

    /** Whether the lock is cached with no thread of the client inside. */
    @Override
    public boolean idle() {
        return state.guarded(() -> state.phase == Phase.IDLE);
    }

    /**
     * Takes the lock locally if the cache is idle and its lease is known live by the local clock:
     * no round trip, unless the token block ran out (one call of {@code lock-cache-reserve.lua}).
     * An idle cache whose lease may have run out is dropped (given back in the background) instead.
     *
     * @return the take, or null if the cache is not idle (none, or held by another thread)
     * @throws SynchronizerUnavailableException if a reservation went unanswered; the cache is then given back
     */
    CacheTake tryTake() {
        return tokens.tryTake();
    }

    /**
     * Takes the lock in Redis as this client's cache ({@code lock-cache-acquire.lua}), for the
     * current thread: one round trip. Only while nothing is cached.
     *
     * @param refused told, if Redis refused the take because someone else holds the lock, what a
     *     first try would have told (the same answer: the holder's remaining lease; another client's
     *     cache is marked wanted and asked back), so that the caller's wait needs no try of its own
     * @return the take, or null if the lock is held by someone else (nothing changed but an ask-back mark)
     * @throws SynchronizerUnavailableException if Redis does not answer; a late grant is given back
     */
    CacheTake takeInRedis(Consumer<CacheTokens.Refusal> refused) {
        return tokens.takeInRedis(refused);
    }

    /**
     * Ends {@code take} by its holder: the cache stays, idle, unless it was asked back, when it is
     * given back in Redis (one round trip).
     *
     * @return null if released; otherwise why Redis no longer had the cache
     * @throws SynchronizerUnavailableException if the give-back went unanswered (it is retried)
     */
    LostHold.Cause release(CacheTake take) {
        return giveBack.release(take);
    }

    /**
     * Gives an idle cache back (in the background, on the connection every later call of this
     * client goes by, so before them), for an acquisition that does not use the cache: a fixed
     * lease. Does nothing to a held cache or none.
     */
    void giveBackIfIdle() {
        giveBack.ifIdle();
    }

    /**
     * Makes {@code take}'s release give the cache back rather than keep it idle (a condition's
     * await, which must let other clients in while it waits).
     */
    void giveBackAtRelease(CacheTake take) {
        state.guard.lock();
        try {
            if (state.current == take) {
                state.askedBack = true;
                state.awaitGiveBack = true;
            }
        } finally {
            state.guard.unlock();
        }
    }

    /** Declares the cache under {@code take} lost now (a verdict of the facade's), telling its holder. */
    void declareLost(CacheTake take, LostHold.Cause cause) {
        state.machinery.watchdog.declareLost(take.cacheLease(), cause);
    }

    /** This client forced the lock free: whatever it cached is lost now, not at the next renewal. */
    void forced() {
        Watchdog.Lease cached = state.guarded(() -> state.lease);
        if (cached != null) {
            state.machinery.watchdog.declareLost(cached, LostHold.Cause.GONE);
        }
    }

    /**
     * What this client knows of the lock from its cache alone, for {@code isLocked()}: held (a
     * thread of this client is inside), free (cached and idle: nobody else can hold it while the
     * cache is in Redis), or null if the cache does not say (nothing cached, or being taken).
     */
    Boolean lockedAsFarAsKnown() {
        return state.guarded(() -> switch (state.phase) {
            case HELD -> Boolean.TRUE;
            case IDLE -> Boolean.FALSE;
            default -> null;
        });
    }

    /** What a snapshot shows of this client's cache: the thread holding it locally (or -1) and the latest local token. */
    record Picture(long threadId, long latestToken) {
    }

    /**
     * What this client knows of its cache whose field in Redis has the value {@code cacheBase}:
     * null if that is not the live cache (a stale field, being given back, or one being taken).
     */
    Picture picture(long cacheBase) {
        return state.guarded(() -> {
            boolean live = (state.phase == Phase.IDLE || state.phase == Phase.HELD) && Long.toString(cacheBase).equals(state.base);
            return live ? new Picture(state.holderThreadId, state.latestLocked()) : null;
        });
    }

    /** The cache's owner string in Redis, {@code <client-id>:cache}. */
    String owner() {
        return state.owner;
    }

    /**
     * What {@code toString()} of the lock says of the cache: nothing while nothing is cached,
     * otherwise {@code ", cached by this client: idle"} (or {@code held}, {@code being taken}).
     */
    String describe() {
        return state.guarded(() -> switch (state.phase) {
            case NONE -> "";
            case TAKING -> ", cached by this client: being taken" + state.askedBackSuffixLocked();
            case IDLE -> ", cached by this client: idle" + state.askedBackSuffixLocked();
            case HELD -> ", cached by this client: held" + state.askedBackSuffixLocked();
        });
    }

    /**
     * Gives an idle cache back because the client closes, in the background; a cache it finds gone
     * tells the takes it did not confirm, as a renewal would, and the closing client waits for
     * that ({@link Machinery#giveBackCaches}). A held one is left to its lease, as a thread's hold is.
     */
    @Override
    public void giveBackOnClose() {
        giveBack.onClose();
    }

    /** Whether the client may take the lock in Redis as its cache now: not for a lease after an ask. */
    boolean mayCache() {
        return state.guarded(state::mayCacheLocked);
    }

    /**
     * Told that another client asks for the lock, by a message on this client's ask channel or by
     * the watchdog (a renewal's answer): an idle cache goes back at once, a held one at its release.
     */
    @Override
    public void askedBack() {
        giveBack.askedBack();
    }

    /**
     * Looked at by the watchdog at every tick ({@link Machinery#checkAbandonedCaches}), as it looks
     * at every hold's thread: a take whose thread ended without unlock() is reported
     * {@code ABANDONED} and the cache given back, which wakes the client's threads waiting behind
     * it (they sleep until the holder's release, and none will come).
     */
    @Override
    public void checkAbandoned() {
        giveBack.checkAbandoned();
    }

    @Override
    public String toString() {
        return state.guarded(() -> "cache " + state.phase.name().toLowerCase(Locale.ROOT) + state.askedBackSuffixLocked());
    }
}
