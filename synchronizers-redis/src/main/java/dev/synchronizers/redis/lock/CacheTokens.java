package dev.synchronizers.redis.lock;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Attempt;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.lock.CacheState.Ending;
import dev.synchronizers.redis.lock.CacheState.Phase;
import dev.synchronizers.redis.script.CacheBlockReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.List;
import java.util.function.Consumer;

/**
 * The takes of this client's cache of one lock (docs/design/lock-caching.md) and their fencing
 * tokens: a local take from an idle cache, with the next token of the block Redis gave the cache;
 * the reservation of the next block ({@code lock-cache-reserve.lua}) once a block runs out; and
 * the take of the lock in Redis as the cache ({@code lock-cache-acquire.lua}), with its first block.
 *
 * <p>Keeps no state of its own: the block and the phases are the {@link CacheState}'s, changed
 * under its guard; the round trips are made without holding it.
 */
final class CacheTokens {

    /**
     * A take in Redis refused because someone else holds the lock: the try it amounts to, and the
     * client asked to give its cache back ({@code ""} if the holder is no cache).
     */
    record Refusal(Attempt asTry, String askedCacher) {
    }

    private final CacheState state;
    private final CacheGiveBack giveBack;
    private final String name;
    private final LockKeys keys;
    private final Machinery machinery;
    /** The cache's owner string in Redis: {@code <client-id>:cache}. */
    private final String owner;

    CacheTokens(CacheState state, CacheGiveBack giveBack) {
        this.state = state;
        this.giveBack = giveBack;
        this.name = state.name;
        this.keys = state.keys;
        this.machinery = state.machinery;
        this.owner = state.owner;
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
        CacheTake abandoned = null;
        state.guard.lock();
        try {
            abandoned = giveBack.abandonIfEndedLocked();
            if (state.phase != Phase.IDLE) {
                return null;
            }
            if (!state.leaseLiveLocked()) {
                giveBack.dropLocked(Ending.EXPIRING);
                return null;
            }
            state.phase = Phase.HELD;
            state.holderThreadId = ClientContext.currentThreadId();
            if (!state.ranOutLocked()) {
                state.meters.cacheTaken();
                return state.takeLocked();
            }
        } finally {
            state.guard.unlock();
            CacheGiveBack.reportAbandoned(abandoned);
        }
        return reserveAndTake();
    }

    /**
     * The block ran out: one round trip for the next, the cache held by this thread meanwhile. The
     * answer settles only the cache it was asked for: if that one was lost meanwhile (and perhaps
     * taken again, by another thread, as a new cache), it is left as it is. A reservation that
     * takes nothing wakes the local line, whose first thread may have gone to sleep because the
     * cache was held for the reservation.
     */
    private CacheTake reserveAndTake() {
        CacheTake take = null;
        try {
            take = reserveAndTakeOrNull();
            return take;
        } finally {
            if (take == null) {
                state.wakeLocalLine.run();
            }
        }
    }

    private CacheTake reserveAndTakeOrNull() {
        CacheBlockReply reply;
        String baseNow;
        long sent = System.nanoTime();
        Watchdog.Lease epoch;
        state.guard.lock();
        try {
            baseNow = state.base;
            epoch = state.lease;
        } finally {
            state.guard.unlock();
        }
        try {
            reply = reserve(baseNow);
        } catch (RuntimeException e) {
            dropIfReservingFor(epoch, Ending.UNAVAILABLE);
            throw e;
        }
        // The new block's top is in the token key: counted like an acquisition's token (the cache's
        // renewal after it, acknowledged, carries it to the replicas), or the cache is dropped.
        boolean counts = false;
        try {
            counts = !reply.granted() || counted(sent, baseNow);
        } finally {
            if (!counts) {
                dropIfReservingFor(epoch, Ending.UNREPLICATED);
            }
        }
        if (!counts) {
            return null;
        }
        state.guard.lock();
        try {
            if (!state.reservingForLocked(epoch)) {
                // Lost meanwhile (lost() forgot it); whatever is cached now is another cache.
                return null;
            }
            if (!reply.granted()) {
                giveBack.dropLocked(Ending.LOST);
                return null;
            }
            state.startBlockLocked(reply);
            state.askedBack |= reply.askedBack();
            state.meters.cacheTaken();
            return state.takeLocked();
        } finally {
            state.guard.unlock();
        }
    }

    /** Drops the cache {@code epoch} is the lease of if this thread's reservation still holds it. */
    private void dropIfReservingFor(Watchdog.Lease epoch, Ending why) {
        state.guard.lock();
        try {
            if (state.reservingForLocked(epoch)) {
                giveBack.dropLocked(why);
            }
        } finally {
            state.guard.unlock();
        }
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
    CacheTake takeInRedis(Consumer<Refusal> refused) {
        state.guard.lock();
        try {
            if (state.phase != Phase.NONE) {
                return null;
            }
            state.phase = Phase.TAKING;
            // An ask from now on is one for the cache being taken (its message may come before the take's reply).
            state.askedBack = false;
        } finally {
            state.guard.unlock();
        }
        boolean taken = false;
        boolean inDoubt = false;
        try {
            CacheTake take = takeInRedisAsTaker(refused);
            taken = take != null;
            return take;
        } catch (SynchronizerUnavailableException e) {
            inDoubt = true;
            throw e;
        } finally {
            if (!taken) {
                state.guard.lock();
                try {
                    if (state.phase == Phase.TAKING) {
                        state.phase = Phase.NONE;
                        machinery.notCaching(keys.lock(), state.registered);
                    }
                    state.takeInDoubt |= inDoubt;
                } finally {
                    state.guard.unlock();
                }
                if (inDoubt) {
                    giveBack.afterTakeInDoubt();
                }
            }
        }
    }

    private CacheTake takeInRedisAsTaker(Consumer<Refusal> refused) {
        // Listening before the take, so that an ask sent once the cache is in Redis finds it.
        machinery.caching(keys.lock(), state.registered);
        long sent = System.nanoTime();
        CacheBlockReply reply = take(sent);
        if (!reply.granted()) {
            // Refused: no field of this client was there, and an earlier take, sent before, has run.
            state.guard.lock();
            try {
                state.takeInDoubt = false;
            } finally {
                state.guard.unlock();
            }
            if (machinery.askBack(reply.cacher(), keys.lock())) {
                state.meters.askSent();
            }
            refused.accept(new Refusal(new Attempt(false, -1, reply.waitMillis(), sent), reply.cacher()));
            return null;
        }
        String newBase = Long.toString(reply.lo());
        // Counted like any acquisition: not from a master switched away from, and, with replica
        // acknowledgement, on as many replicas as asked; otherwise given back at once, and the
        // caller acquires without the cache.
        boolean counts = false;
        try {
            counts = counted(sent, newBase);
        } finally {
            if (!counts) {
                giveBack.uncounted(newBase);
            }
        }
        if (!counts) {
            return null;
        }
        CacheTake taken = registerTaken(reply, newBase, sent);
        if (taken != null) {
            // A switch between the check and the registration: renewed now, not at the next tick.
            machinery.registeredAfterCheck(sent);
        }
        return taken;
    }

    private CacheTake registerTaken(CacheBlockReply reply, String newBase, long sent) {
        state.guard.lock();
        try {
            // The take replaced whatever field of this client an unanswered one had left.
            state.takeInDoubt = false;
            if (state.phase != Phase.TAKING) {
                // Closed or dropped meanwhile: nobody will keep it.
                giveBack.quietly(newBase);
                return null;
            }
            state.base = newBase;
            state.startBlockLocked(reply);
            state.askedBack |= reply.askedBack();
            Watchdog.Lease[] registered = new Watchdog.Lease[1];
            registered[0] = machinery.watchdog.register(Renewal.ofCache(Script.LOCK_CACHE_RENEW,
                    keys.keysFor(Script.LOCK_CACHE_RENEW), new String[] {owner, newBase}, sent,
                    cause -> giveBack.lost(registered[0], cause), giveBack::askedBack));
            state.lease = registered[0];
            state.phase = Phase.HELD;
            return state.takeLocked();
        } finally {
            state.guard.unlock();
        }
    }

    /**
     * Takes the lock in Redis as the client's cache, with its first block: one round trip.
     *
     * @param sentNanos {@link System#nanoTime()} just before the call, for {@link #counted}
     * @return the reply: the block, whose first token is the cache's base; or the refusal, with the
     *     holder's remaining lease and the client whose cache holds the lock, if one does
     * @throws SynchronizerUnavailableException if Redis does not answer; a late grant is given back
     */
    private CacheBlockReply take(long sentNanos) {
        var pending = machinery.scripts.<List<Object>>run(Script.LOCK_CACHE_ACQUIRE,
                keys.keysFor(Script.LOCK_CACHE_ACQUIRE), owner, Long.toString(machinery.leaseMillis), Long.toString(machinery.cacheBlock));
        try {
            return CacheBlockReply.of(Script.LOCK_CACHE_ACQUIRE,
                    machinery.await(pending, "take the lock '" + name + "' to cache it"));
        } catch (SynchronizerUnavailableException e) {
            // A late grant is a cache nobody knows of: given back by its base (section 6).
            pending.thenAccept(raw -> {
                CacheBlockReply late = CacheBlockReply.of(Script.LOCK_CACHE_ACQUIRE, raw);
                if (late.granted()) {
                    giveBack.quietly(Long.toString(late.lo()));
                }
            });
            throw e;
        }
    }

    /**
     * Reserves the next block for the cache whose field in Redis has the value {@code base}: one
     * round trip. Then runs the test hook {@link Machinery#reservationAnsweredForTests}, if any.
     *
     * @return the reply: the block, or the answer that the cache is gone
     * @throws SynchronizerUnavailableException if Redis does not answer
     */
    private CacheBlockReply reserve(String base) {
        CacheBlockReply reply = CacheBlockReply.of(Script.LOCK_CACHE_RESERVE, machinery.<List<Object>>await(
                machinery.scripts.run(Script.LOCK_CACHE_RESERVE, keys.keysFor(Script.LOCK_CACHE_RESERVE), owner,
                        base, Long.toString(machinery.cacheBlock)),
                "reserve fencing tokens for the cached lock '" + name + "'"));
        Runnable hook = machinery.reservationAnsweredForTests;
        if (hook != null) {
            hook.run();
        }
        return reply;
    }

    /**
     * Whether a block granted by a call sent at {@code sentNanos} (the cache's take, or a
     * reservation) counts, as an acquisition's token does: not from a master switched away from,
     * and, with replica acknowledgement, on as many replicas as asked (the cache's renewal, sent
     * now and acknowledged, carries the block's top in the token key to the replicas). See
     * {@link Machinery#replicated}.
     */
    private boolean counted(long sentNanos, String base) {
        return machinery.replicated(sentNanos, Script.LOCK_CACHE_RENEW, keys.keysFor(Script.LOCK_CACHE_RENEW),
                Long.toString(machinery.leaseMillis), owner, base);
    }
}
