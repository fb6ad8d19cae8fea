package dev.synchronizers.redis;

import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.script.CacheBlockReply;
import dev.synchronizers.redis.script.ReleaseReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This client's cache of one non-fair lock (docs/design/lock-caching.md): the lock held in Redis
 * by the client ({@code <client-id>:cache}, renewed by the watchdog) between its threads' holds,
 * so that a thread takes it locally, with a fencing token from a block reserved in Redis.
 *
 * <p>States: none (nothing cached), taking (one thread takes it in Redis: one at a time, since a
 * second take by the same client replaces the first's field), idle (cached, no thread inside), held
 * (one thread inside, a {@link Take}). Only idle to held is a local take; it checks the cache's lease by the local clock.
 * Asked back (a renewal answered {@code ASKED_BACK}), an idle cache is given back at once and a
 * held one at its holder's release. A cache lost in Redis ends the take inside it, if any, as a
 * lost hold.
 *
 * <p>The state is guarded by one {@link ReentrantLock}, held only for bookkeeping, never while
 * waiting for Redis (virtual threads).
 *
 * <p>A thread that ends inside a take is found when another client asks the cache back, or when a
 * thread of this client wants it: the take is reported {@code ABANDONED} and the cache given back.
 *
 * <p>Another client asks for the lock by a message on this client's ask channel
 * ({@link Machinery#askBack}), and, should the message be lost, through the cache's next renewal.
 *
 * <p>A take released locally is confirmed only by the cache's next renewal (or give-back) that
 * finds the cache in Redis: until then Redis may have lost the cache during the take, e.g. to
 * {@code forceUnlock()} by another client, which the client learns only at that next call (design
 * note, section 3). So the takes released since the start of the last renewal that confirmed the
 * cache are kept ({@link #UNCONFIRMED_LIMIT} at most), and reported lost with the cache if it turns
 * out lost: a holder whose hold may have overlapped another client's always hears of it, if late.
 *
 * <p>Not yet done (see the design note, section 9): conditions, {@code isLocked()} and snapshots
 * of a cached lock.
 */
final class LockCache {

    private static final Logger log = LoggerFactory.getLogger(LockCache.class);

    /** How many fencing tokens one reservation gives: a second of the server's clock. */
    static final long BLOCK = 1L << 20;

    /**
     * How many released takes not yet confirmed by a renewal are kept to be reported should the
     * cache turn out lost; past it the oldest are forgotten (and would go unreported).
     */
    static final int UNCONFIRMED_LIMIT = 4096;

    /** TAKING: one thread of the client takes it in Redis; the others wait for it locally. */
    private enum Phase { NONE, TAKING, IDLE, HELD }

    private final String name;
    private final LockKeys keys;
    private final Machinery machinery;
    /** The cache's owner string in Redis: {@code <client-id>:cache}. */
    private final String owner;
    private final ReentrantLock guard = new ReentrantLock();
    private Phase phase = Phase.NONE;
    /** The cache's base token in Redis (its field's value), while cached. */
    private String base;
    /** The next local token and the top of the current block. */
    private long next;
    private long top;
    private boolean askedBack;
    /** The cache's lease with the watchdog, while cached. */
    private Watchdog.Lease lease;
    /** The take inside, while held. */
    private Take current;
    /**
     * The takes of this cache released since the start of the last renewal that confirmed it, oldest
     * first: reported lost with the cache, since Redis may have lost it while they were held.
     */
    private final java.util.ArrayDeque<Take> unconfirmed = new java.util.ArrayDeque<>();
    /**
     * Until when, by {@link System#nanoTime()}, the client does not cache the lock again after
     * giving it back to a client that asked: a lease. Its threads take plain holds meanwhile, each
     * released at its unlock, so that the asker competes at every release, as without caching,
     * rather than once per renewal of a cache taken straight back.
     */
    private long noCacheUntilNanos = System.nanoTime();

    LockCache(String name, LockKeys keys, Machinery machinery) {
        this.name = name;
        this.keys = keys;
        this.machinery = machinery;
        this.owner = Owner.cacheOf(machinery.clientId);
    }

    /** One thread's hold taken from the cache: its token, and its lease, a view of the cache's. */
    final class Take implements HoldLease, LockBackend.Grant {
        private final long token;
        private final Watchdog.Lease of;
        /** The base of the cache it was taken from: what Redis has for the cache's owner. */
        private final String checkToken = base;
        /** The thread that took it: if it ends inside, the take is abandoned. */
        private final Thread thread = Thread.currentThread();
        private volatile Consumer<LostHold.Cause> onLost;
        /** When its holder released it locally, by {@link System#nanoTime()}. */
        private long releasedNanos;

        private Take(long token, Watchdog.Lease of) {
            this.token = token;
            this.of = of;
        }

        @Override
        public String owner() {
            return owner;
        }

        @Override
        public long token() {
            return token;
        }

        @Override
        public String checkToken() {
            return checkToken;
        }

        @Override
        public HoldLease start(Consumer<LostHold.Cause> lost) {
            this.onLost = lost;
            LostHold.Cause ended = of.endedBecause();
            if (ended != null) {
                // Lost between the take and its booking: the cache's loss found no one to tell.
                lost.accept(ended);
            }
            return this;
        }

        @Override
        public LostHold.Cause endedBecause() {
            return of.endedBecause();
        }

        @Override
        public boolean fixed() {
            return false;
        }

        @Override
        public long fixedMillis() {
            return 0;
        }

        @Override
        public long renewedNanos() {
            return of.renewedNanos();
        }
    }

    /** Whether this client caches the lock now (being taken, idle or held): its threads must not acquire it in Redis. */
    boolean present() {
        guard.lock();
        try {
            return phase != Phase.NONE;
        } finally {
            guard.unlock();
        }
    }

    /**
     * Takes the lock locally if the cache is idle and its lease is known live by the local clock:
     * no round trip, unless the token block ran out (one call of {@code lock-cache-reserve.lua}).
     * An idle cache whose lease may have run out is dropped (given back in the background) instead.
     *
     * @return the take, or null if the cache is not idle (none, or held by another thread)
     * @throws SynchronizerUnavailableException if a reservation went unanswered; the cache is then given back
     */
    Take tryTake() {
        Take take;
        boolean reserve;
        Take abandoned = null;
        guard.lock();
        try {
            if (phase == Phase.HELD && current != null && !current.thread.isAlive()) {
                abandoned = abandonLocked();
            }
            if (phase != Phase.IDLE) {
                return null;
            }
            if (!leaseLive()) {
                dropLocked("its lease may have run out");
                return null;
            }
            reserve = next > top;
            phase = Phase.HELD;
            take = reserve ? null : new Take(next++, lease);
            if (take != null) {
                current = take;
                return take;
            }
        } finally {
            guard.unlock();
            reportAbandoned(abandoned);
        }
        return reserveAndTake();
    }

    /**
     * The thread inside ended without releasing (a hold abandoned, as the watchdog reports a
     * thread's): the cache is given back, since no release will come.
     *
     * @return the abandoned take, to be reported once the guard is released
     */
    private Take abandonLocked() {
        Take inside = current;
        dropLocked("the thread holding it ended without unlock()");
        return inside;
    }

    private static void reportAbandoned(Take abandoned) {
        if (abandoned != null && abandoned.onLost != null) {
            abandoned.onLost.accept(LostHold.Cause.ABANDONED);
        }
    }

    /** The block ran out: one round trip for the next, the cache held by this thread meanwhile. */
    private Take reserveAndTake() {
        CacheBlockReply reply;
        String baseNow;
        guard.lock();
        try {
            baseNow = base;
        } finally {
            guard.unlock();
        }
        try {
            reply = CacheBlockReply.of(Script.LOCK_CACHE_RESERVE, machinery.<List<Object>>await(
                    machinery.scripts.run(Script.LOCK_CACHE_RESERVE, keys.keysFor(Script.LOCK_CACHE_RESERVE), owner,
                            baseNow, Long.toString(BLOCK)),
                    "reserve fencing tokens for the cached lock '" + name + "'"));
        } catch (RuntimeException e) {
            guard.lock();
            try {
                dropLocked("a reservation of tokens went unanswered");
            } finally {
                guard.unlock();
            }
            throw e;
        }
        guard.lock();
        try {
            if (!reply.granted() || phase != Phase.HELD || !baseNow.equals(base)) {
                dropLocked("it was gone when its tokens ran out");
                return null;
            }
            next = reply.lo();
            top = reply.hi();
            askedBack |= reply.askedBack();
            Take take = new Take(next++, lease);
            current = take;
            return take;
        } finally {
            guard.unlock();
        }
    }

    /**
     * Takes the lock in Redis as this client's cache ({@code lock-cache-acquire.lua}), for the
     * current thread: one round trip. Only while nothing is cached.
     *
     * @return the take, or null if the lock is held by someone else (nothing changed but an ask-back mark)
     * @throws SynchronizerUnavailableException if Redis does not answer; a late grant is given back
     */
    Take takeInRedis() {
        guard.lock();
        try {
            if (phase != Phase.NONE) {
                return null;
            }
            phase = Phase.TAKING;
        } finally {
            guard.unlock();
        }
        boolean taken = false;
        try {
            Take take = takeInRedisAsTaker();
            taken = take != null;
            return take;
        } finally {
            if (!taken) {
                guard.lock();
                try {
                    if (phase == Phase.TAKING) {
                        phase = Phase.NONE;
                        machinery.notCaching(keys.lock(), this);
                    }
                } finally {
                    guard.unlock();
                }
            }
        }
    }

    private Take takeInRedisAsTaker() {
        // Listening before the take, so that an ask sent once the cache is in Redis finds it.
        machinery.caching(keys.lock(), this);
        long sent = System.nanoTime();
        var pending = machinery.scripts.<List<Object>>run(Script.LOCK_CACHE_ACQUIRE,
                keys.keysFor(Script.LOCK_CACHE_ACQUIRE), owner, Long.toString(machinery.leaseMillis), Long.toString(BLOCK));
        CacheBlockReply reply;
        try {
            reply = CacheBlockReply.of(Script.LOCK_CACHE_ACQUIRE,
                    machinery.await(pending, "take the lock '" + name + "' to cache it"));
        } catch (SynchronizerUnavailableException e) {
            // A late grant is a cache nobody knows of: given back by its base (section 6).
            pending.thenAccept(raw -> {
                CacheBlockReply late = CacheBlockReply.of(Script.LOCK_CACHE_ACQUIRE, raw);
                if (late.granted()) {
                    giveBackQuietly(Long.toString(late.lo()));
                }
            });
            throw e;
        }
        if (!reply.granted()) {
            machinery.askBack(reply.cacher(), keys.lock());
            return null;
        }
        String newBase = Long.toString(reply.lo());
        guard.lock();
        try {
            if (phase != Phase.TAKING) {
                // Closed or dropped meanwhile: nobody will keep it.
                giveBackQuietly(newBase);
                return null;
            }
            base = newBase;
            next = reply.lo();
            top = reply.hi();
            askedBack = reply.askedBack();
            Watchdog.Lease[] registered = new Watchdog.Lease[1];
            registered[0] = machinery.watchdog.register(Renewal.ofCache(Script.LOCK_CACHE_RENEW,
                    keys.keysFor(Script.LOCK_CACHE_RENEW), new String[] {owner, newBase}, sent,
                    cause -> lost(registered[0], cause), this::askedBack));
            lease = registered[0];
            phase = Phase.HELD;
            Take take = new Take(next++, lease);
            current = take;
            return take;
        } finally {
            guard.unlock();
        }
    }

    /**
     * Ends {@code take} by its holder: the cache stays, idle, unless it was asked back, when it is
     * given back in Redis (one round trip).
     *
     * @return null if released; otherwise why Redis no longer had the cache
     * @throws SynchronizerUnavailableException if the give-back went unanswered (it is retried)
     */
    LostHold.Cause release(Take take) {
        String giveBack;
        Watchdog.Lease ending;
        List<Take> suspects;
        guard.lock();
        try {
            if (current != take || phase != Phase.HELD) {
                return LostHold.Cause.GONE;
            }
            current = null;
            if (take.of.endedBecause() != null) {
                return take.of.endedBecause();
            }
            if (!askedBack) {
                phase = Phase.IDLE;
                keepUnconfirmedLocked(take);
                return null;
            }
            giveBack = base;
            ending = lease;
            suspects = unconfirmedLocked();
            forgetLocked();
        } finally {
            guard.unlock();
        }
        boolean active = machinery.watchdog.unregister(ending);
        // Sent as a follow-up: unanswered, it is retried until Redis answers or a lease has passed
        // (token-checked by the base, so always safe), as unlock()'s release is.
        List<Object> reply = machinery.await(machinery.followUps.send(Script.LOCK_RELEASE,
                "give back the cached lock '" + name + "'", () -> releaseCommand(giveBack),
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis)),
                "give back the cached lock '" + name + "' (retried until Redis answers, and it expires with its"
                        + " lease at the latest)");
        if (active && ReleaseReply.of(Script.LOCK_RELEASE, reply).released()) {
            return null;
        }
        reportLost(suspects, LostHold.Cause.GONE);
        return LostHold.Cause.GONE;
    }

    /**
     * Gives an idle cache back (in the background, on the connection every later call of this
     * client goes by, so before them), for an acquisition that does not use the cache: a fixed
     * lease. Does nothing to a held cache or none.
     */
    void giveBackIfIdle() {
        guard.lock();
        try {
            if (phase == Phase.IDLE) {
                dropLocked("an acquisition with a fixed lease needs it in Redis");
            }
        } finally {
            guard.unlock();
        }
    }

    /**
     * Makes {@code take}'s release give the cache back rather than keep it idle (a condition's
     * await, which must let other clients in while it waits).
     */
    void giveBackAtRelease(Take take) {
        guard.lock();
        try {
            if (current == take) {
                askedBack = true;
            }
        } finally {
            guard.unlock();
        }
    }

    /** Declares the cache under {@code take} lost now (a verdict of the facade's), telling its holder. */
    void declareLost(Take take, LostHold.Cause cause) {
        machinery.watchdog.declareLost(take.of, cause);
    }

    /** This client forced the lock free: whatever it cached is lost now, not at the next renewal. */
    void forced() {
        Watchdog.Lease cached;
        guard.lock();
        try {
            cached = lease;
        } finally {
            guard.unlock();
        }
        if (cached != null) {
            machinery.watchdog.declareLost(cached, LostHold.Cause.GONE);
        }
    }

    /**
     * What this client knows of the lock from its cache alone, for {@code isLocked()}: held (a
     * thread of this client is inside), free (cached and idle: nobody else can hold it while the
     * cache is in Redis), or null if the cache does not say (nothing cached, or being taken).
     */
    Boolean lockedAsFarAsKnown() {
        guard.lock();
        try {
            return switch (phase) {
                case HELD -> Boolean.TRUE;
                case IDLE -> Boolean.FALSE;
                default -> null;
            };
        } finally {
            guard.unlock();
        }
    }

    /**
     * The cache's state for {@code toString()}: {@code held}, {@code idle}, {@code being taken}
     * ({@code , asked back} added once asked), or null while nothing is cached. No network call.
     */
    String describe() {
        guard.lock();
        try {
            String state = switch (phase) {
                case NONE -> null;
                case TAKING -> "being taken";
                case IDLE -> "idle";
                case HELD -> "held";
            };
            return state == null || !askedBack ? state : state + ", asked back";
        } finally {
            guard.unlock();
        }
    }

    /**
     * Gives an idle cache back because the client closes: sends the give-back and returns its
     * reply, for the closing client to await (all caches' at once). A held one is left to its
     * lease, as a thread's hold is.
     *
     * @return the give-back's reply, or null if there was nothing to give back
     */
    java.util.concurrent.CompletionStage<List<Object>> giveBackOnClose() {
        String giveBack;
        Watchdog.Lease ending;
        List<Take> suspects;
        guard.lock();
        try {
            if (phase != Phase.IDLE) {
                return null;
            }
            giveBack = base;
            ending = lease;
            suspects = unconfirmedLocked();
            forgetLocked();
        } finally {
            guard.unlock();
        }
        boolean active = machinery.watchdog.unregister(ending);
        // A cache found gone tells the takes it did not confirm, as a renewal would (on the
        // watchdog's executor, which the closing client stops only after these replies).
        return releaseCommand(giveBack).thenApplyAsync(reply -> {
            if (!active || !ReleaseReply.of(Script.LOCK_RELEASE, reply).released()) {
                reportLost(suspects, LostHold.Cause.GONE);
            }
            return reply;
        }, machinery.watchdog.executor());
    }

    /** Whether the client may take the lock in Redis as its cache now: not for a lease after an ask. */
    boolean mayCache() {
        guard.lock();
        try {
            return System.nanoTime() - noCacheUntilNanos >= 0;
        } finally {
            guard.unlock();
        }
    }

    /**
     * Told that another client asks for the lock, by a message on this client's ask channel or by
     * the watchdog (a renewal's answer): an idle cache goes back at once, a held one at its release.
     */
    void askedBack() {
        Take abandoned = null;
        guard.lock();
        try {
            askedBack = true;
            if (phase == Phase.IDLE) {
                dropLocked("another client asks for it");
            } else if (phase == Phase.HELD && current != null && !current.thread.isAlive()) {
                abandoned = abandonLocked();
            }
        } finally {
            guard.unlock();
        }
        reportAbandoned(abandoned);
    }

    /** Told by the watchdog that the cache is lost in Redis: a take inside is lost with it. */
    private void lost(Watchdog.Lease which, LostHold.Cause cause) {
        Take inside;
        List<Take> suspects;
        guard.lock();
        try {
            if (which != lease) {
                return;
            }
            inside = current;
            suspects = unconfirmedLocked();
            forgetLocked();
        } finally {
            guard.unlock();
        }
        reportLost(suspects, cause);
        if (inside == null) {
            log.debug("cached lock '{}': lost while idle ({})", name, cause);
        } else if (inside.onLost != null) {
            inside.onLost.accept(cause);
        }
    }

    /** Drops an idle cache: no more local takes; given back in Redis in the background. */
    private void dropLocked(String why) {
        log.debug("cached lock '{}': giving it back, {}", name, why);
        String giveBack = base;
        Watchdog.Lease ending = lease;
        List<Take> suspects = unconfirmedLocked();
        forgetLocked();
        boolean active = ending != null && machinery.watchdog.unregister(ending);
        if (giveBack != null) {
            // Told on the watchdog's executor, never on an I/O thread (listeners may run there).
            giveBackQuietly(giveBack).thenAcceptAsync(reply -> {
                if (!active || !ReleaseReply.of(Script.LOCK_RELEASE, reply).released()) {
                    reportLost(suspects, LostHold.Cause.GONE);
                }
            }, machinery.watchdog.executor());
        }
    }

    /**
     * Keeps a take just released, to be reported should the cache turn out lost, and forgets those
     * released before the start of the last renewal that confirmed the cache.
     */
    private void keepUnconfirmedLocked(Take take) {
        take.releasedNanos = System.nanoTime();
        long confirmed = lease.renewedNanos();
        while (!unconfirmed.isEmpty()
                && (unconfirmed.peekFirst().releasedNanos - confirmed < 0 || unconfirmed.size() >= UNCONFIRMED_LIMIT)) {
            unconfirmed.pollFirst();
        }
        unconfirmed.addLast(take);
    }

    /** The released takes the cache's loss may have overlapped: those after its last confirmation. */
    private List<Take> unconfirmedLocked() {
        if (lease == null) {
            return List.of();
        }
        long confirmed = lease.renewedNanos();
        return unconfirmed.stream().filter(take -> take.releasedNanos - confirmed >= 0).toList();
    }

    /** Tells the holders of released takes that the cache they came from was lost, perhaps while they held it. */
    private void reportLost(List<Take> released, LostHold.Cause cause) {
        for (Take take : released) {
            if (take.onLost != null) {
                take.onLost.accept(cause);
            }
        }
    }

    private void forgetLocked() {
        if (askedBack) {
            noCacheUntilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis);
        }
        if (phase != Phase.NONE) {
            machinery.notCaching(keys.lock(), this);
        }
        phase = Phase.NONE;
        base = null;
        lease = null;
        current = null;
        unconfirmed.clear();
        askedBack = false;
        next = 0;
        top = -1;
    }

    /** Whether the cache's lease is live by the local clock, with the margins the watchdog's lost-hold verdict uses. */
    private boolean leaseLive() {
        long margin = machinery.timeout.toNanos() + Math.min(TimeUnit.MILLISECONDS.toNanos(50),
                TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis) / 20);
        return lease != null && lease.endedBecause() == null
                && System.nanoTime() - lease.renewedNanos() + margin < TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis);
    }

    private java.util.concurrent.CompletionStage<List<Object>> giveBackQuietly(String cacheBase) {
        return machinery.followUps.send(Script.LOCK_RELEASE, "give back the cached lock '" + name + "'",
                () -> releaseCommand(cacheBase), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
    }

    private java.util.concurrent.CompletionStage<List<Object>> releaseCommand(String cacheBase) {
        return machinery.scripts.run(Script.LOCK_RELEASE, keys.keysFor(Script.LOCK_RELEASE), owner, cacheBase);
    }

    @Override
    public String toString() {
        guard.lock();
        try {
            return "cache " + phase.name().toLowerCase(java.util.Locale.ROOT) + (askedBack ? ", asked back" : "");
        } finally {
            guard.unlock();
        }
    }
}
