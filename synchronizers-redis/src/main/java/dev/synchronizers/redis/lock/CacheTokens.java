package dev.synchronizers.redis.lock;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.script.CacheBlockReply;
import dev.synchronizers.redis.script.Script;
import java.util.List;

/**
 * The fencing tokens of one {@link LockCache} (docs/design/lock-caching.md): the blocks of tokens
 * Redis gives the cache, the first with the cache's take ({@code lock-cache-acquire.lua}) and the
 * next by a reservation ({@code lock-cache-reserve.lua}) once a block runs out, handed out one per
 * local take.
 *
 * <p>Not thread-safe: the cache keeps the block under its guard. The round trips touch no state, so
 * that the cache makes them without holding its guard.
 */
final class CacheTokens {

    private final String name;
    private final LockKeys keys;
    private final Machinery machinery;
    private final CacheGiveBack giveBack;
    /** The cache's owner string in Redis: {@code <client-id>:cache}. */
    private final String owner;
    /** The next local token and the top of the current block. */
    private long next;
    private long top;
    /** The latest token a take got, for snapshots; -1 if none since the block was cleared. */
    private long latest = -1;

    CacheTokens(String name, LockKeys keys, Machinery machinery, CacheGiveBack giveBack, String owner) {
        this.name = name;
        this.keys = keys;
        this.machinery = machinery;
        this.giveBack = giveBack;
        this.owner = owner;
    }

    /** Starts handing out the block {@code reply} gives: a take's, or a reservation's. */
    void start(CacheBlockReply reply) {
        next = reply.lo();
        top = reply.hi();
    }

    /** Whether every token of the block was handed out: the next take needs a reservation first. */
    boolean ranOut() {
        return next > top;
    }

    /** Hands out the block's next token to a take. */
    long issue() {
        latest = next++;
        return latest;
    }

    /** The latest token a take got, for snapshots; -1 if none. */
    long latest() {
        return latest;
    }

    /** Forgets the block: the cache ended. */
    void clear() {
        next = 0;
        top = -1;
        latest = -1;
    }

    /**
     * Takes the lock in Redis as the client's cache, with its first block: one round trip.
     *
     * @param sentNanos {@link System#nanoTime()} just before the call, for {@link #counted}
     * @return the reply: the block, whose first token is the cache's base; or the refusal, with the
     *     holder's remaining lease and the client whose cache holds the lock, if one does
     * @throws SynchronizerUnavailableException if Redis does not answer; a late grant is given back
     */
    CacheBlockReply take(long sentNanos) {
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
    CacheBlockReply reserve(String base) {
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
    boolean counted(long sentNanos, String base) {
        return machinery.replicated(sentNanos, Script.LOCK_CACHE_RENEW, keys.keysFor(Script.LOCK_CACHE_RENEW),
                Long.toString(machinery.leaseMillis), owner, base);
    }
}
