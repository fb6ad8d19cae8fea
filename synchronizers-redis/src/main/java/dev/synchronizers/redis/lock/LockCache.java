package dev.synchronizers.redis.lock;

import dev.synchronizers.redis.client.Attempt;
import dev.synchronizers.redis.client.CachedLock;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.CacheBlockReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
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
 * <p>This class keeps the states and moves between them; its parts do the rest: {@link CacheTokens}
 * hands out the fencing tokens and reserves their blocks, {@link CacheGiveBack} gives the cache back
 * in Redis, and {@link UnconfirmedTakes} keeps the released takes for their late reports.
 */
public final class LockCache implements CachedLock {

    private static final Logger log = LoggerFactory.getLogger(LockCache.class);

    /** How many fencing tokens one reservation gives: a second of the server's clock. */
    public static final long BLOCK = CachedLock.BLOCK;

    /** Why a cache ended: its {@code cause} tag ({@link SynchronizerMeters#cacheEnded}) and what the log says. */
    enum Ending {
        ASKED("asked", "another client asks for it"),
        AWAIT("await", "a condition's await gives it back"),
        BYPASS("bypass", "an acquisition that does not use the cache needs it in Redis"),
        EXPIRING("expiring", "its lease may have run out"),
        ABANDONED("abandoned", "the thread holding it ended without unlock()"),
        UNAVAILABLE("unavailable", "a reservation of tokens went unanswered"),
        LOST("lost", "Redis no longer has it"),
        UNREPLICATED("unreplicated", "its new block of tokens is not known to be replicated"),
        CLOSE("close", "the client closes");

        final String tag;
        final String why;

        Ending(String tag, String why) {
            this.tag = tag;
            this.why = why;
        }
    }

    /**
     * A take in Redis refused because someone else holds the lock: the try it amounts to, and the
     * client asked to give its cache back ({@code ""} if the holder is no cache).
     */
    record Refusal(Attempt asTry, String askedCacher) {
    }

    /** TAKING: one thread of the client takes it in Redis; the others wait for it locally. */
    private enum Phase { NONE, TAKING, IDLE, HELD }

    private final String name;
    private final LockKeys keys;
    private final Machinery machinery;
    private final SynchronizerMeters meters;
    /**
     * Wakes the first of the client's threads waiting locally for this lock: one that found the
     * cache held sleeps until a release wakes it, and a reservation that ends the cache is none.
     */
    private final Runnable wakeLocalLine;
    /** The cache's owner string in Redis: {@code <client-id>:cache}. */
    private final String owner;
    private final CacheTokens tokens;
    private final CacheGiveBack giveBack;
    private final ReentrantLock guard = new ReentrantLock();
    private Phase phase = Phase.NONE;
    /** The cache's base token in Redis (its field's value), while cached. */
    private String base;
    private boolean askedBack;
    /** Whether the take inside gives the cache back at its release for a condition's await. */
    private boolean awaitGiveBack;
    /**
     * Whether a take in Redis went unanswered and no take has been answered since: Redis may have
     * a cache field of this client whose base nobody knows ({@link #giveBackUnknown}).
     */
    private boolean takeInDoubt;
    /** The cache's lease with the watchdog, while cached. */
    private Watchdog.Lease lease;
    /** The take inside, while held. */
    private Take current;
    /**
     * The thread that holds the cache locally, while held (also while it reserves a block, before
     * its take exists), else -1, for snapshots.
     */
    private long holderThreadId = -1;
    /**
     * The takes of this cache released since the start of the last renewal that confirmed it: reported
     * lost with the cache, since Redis may have lost it while they were held.
     */
    private final UnconfirmedTakes unconfirmed = new UnconfirmedTakes();
    /**
     * Until when, by {@link System#nanoTime()}, the client does not cache the lock again after
     * giving it back to a client that asked: a lease. Its threads take plain holds meanwhile, each
     * released at its unlock, so that the asker competes at every release, as without caching,
     * rather than once per renewal of a cache taken straight back.
     */
    private long noCacheUntilNanos = System.nanoTime();
    /**
     * How long after its last renewal was sent the cache's lease is known live by the local clock:
     * the lease less the margins of the watchdog's lost-hold verdict (the command timeout, and a
     * twentieth of the lease up to 50 ms). Both are fixed for the client, so computed once.
     */
    private final long liveForNanos;

    LockCache(String name, LockKeys keys, Machinery machinery, SynchronizerMeters meters, Runnable wakeLocalLine) {
        this.name = name;
        this.wakeLocalLine = wakeLocalLine;
        this.meters = meters;
        this.keys = keys;
        this.machinery = machinery;
        this.owner = Owner.cacheOf(machinery.clientId);
        this.giveBack = new CacheGiveBack(name, keys, machinery, owner);
        this.tokens = new CacheTokens(name, keys, machinery, giveBack, owner);
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis);
        this.liveForNanos = leaseNanos - (machinery.timeout.toNanos()
                + Math.min(TimeUnit.MILLISECONDS.toNanos(50), leaseNanos / 20));
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

        private Take(long token, Watchdog.Lease of) {
            this.token = token;
            this.of = of;
            // Made under the guard, by the thread that takes it.
            holderThreadId = ClientContext.currentThreadId();
        }

        /** Tells its holder that the hold was lost, if the hold was booked (see {@link #start}). */
        void tellLost(LostHold.Cause cause) {
            Consumer<LostHold.Cause> holder = onLost;
            if (holder != null) {
                holder.accept(cause);
            }
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
        return guarded(() -> phase != Phase.NONE);
    }

    /** Whether the lock is cached with no thread of the client inside. */
    @Override
    public boolean idle() {
        return guarded(() -> phase == Phase.IDLE);
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
        Take abandoned = null;
        guard.lock();
        try {
            abandoned = abandonIfEndedLocked();
            if (phase != Phase.IDLE) {
                return null;
            }
            if (!leaseLive()) {
                dropLocked(Ending.EXPIRING);
                return null;
            }
            phase = Phase.HELD;
            holderThreadId = ClientContext.currentThreadId();
            if (!tokens.ranOut()) {
                meters.cacheTaken();
                return takeLocked();
            }
        } finally {
            guard.unlock();
            reportAbandoned(abandoned);
        }
        return reserveAndTake();
    }

    /** A take by this thread with the block's next token, now the take inside. */
    private Take takeLocked() {
        current = new Take(tokens.issue(), lease);
        return current;
    }

    /**
     * If the thread inside ended without releasing (a hold abandoned, as the watchdog reports a
     * thread's), gives the cache back, since no release will come.
     *
     * @return the abandoned take, to be reported once the guard is released; null if none
     */
    private Take abandonIfEndedLocked() {
        if (phase != Phase.HELD || current == null || current.thread.isAlive()) {
            return null;
        }
        Take inside = current;
        dropLocked(Ending.ABANDONED);
        return inside;
    }

    private static void reportAbandoned(Take abandoned) {
        if (abandoned != null) {
            abandoned.tellLost(LostHold.Cause.ABANDONED);
        }
    }

    /**
     * The block ran out: one round trip for the next, the cache held by this thread meanwhile. The
     * answer settles only the cache it was asked for: if that one was lost meanwhile (and perhaps
     * taken again, by another thread, as a new cache), it is left as it is. A reservation that
     * takes nothing wakes the local line, whose first thread may have gone to sleep because the
     * cache was held for the reservation.
     */
    private Take reserveAndTake() {
        Take take = null;
        try {
            take = reserveAndTakeOrNull();
            return take;
        } finally {
            if (take == null) {
                wakeLocalLine.run();
            }
        }
    }

    private Take reserveAndTakeOrNull() {
        CacheBlockReply reply;
        String baseNow;
        long sent = System.nanoTime();
        Watchdog.Lease epoch;
        guard.lock();
        try {
            baseNow = base;
            epoch = lease;
        } finally {
            guard.unlock();
        }
        try {
            reply = tokens.reserve(baseNow);
        } catch (RuntimeException e) {
            dropIfReservingFor(epoch, Ending.UNAVAILABLE);
            throw e;
        }
        // The new block's top is in the token key: counted like an acquisition's token (the cache's
        // renewal after it, acknowledged, carries it to the replicas), or the cache is dropped.
        boolean counts = false;
        try {
            counts = !reply.granted() || tokens.counted(sent, baseNow);
        } finally {
            if (!counts) {
                dropIfReservingFor(epoch, Ending.UNREPLICATED);
            }
        }
        if (!counts) {
            return null;
        }
        guard.lock();
        try {
            if (!reservingFor(epoch)) {
                // Lost meanwhile (lost() forgot it); whatever is cached now is another cache.
                return null;
            }
            if (!reply.granted()) {
                dropLocked(Ending.LOST);
                return null;
            }
            tokens.start(reply);
            askedBack |= reply.askedBack();
            meters.cacheTaken();
            return takeLocked();
        } finally {
            guard.unlock();
        }
    }

    /** Whether the cache is still the one {@code epoch} is the lease of, held for this thread's reservation. */
    private boolean reservingFor(Watchdog.Lease epoch) {
        return phase == Phase.HELD && current == null && lease == epoch;
    }

    /** Drops the cache {@code epoch} is the lease of if this thread's reservation still holds it. */
    private void dropIfReservingFor(Watchdog.Lease epoch, Ending why) {
        guard.lock();
        try {
            if (reservingFor(epoch)) {
                dropLocked(why);
            }
        } finally {
            guard.unlock();
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
    Take takeInRedis(Consumer<Refusal> refused) {
        guard.lock();
        try {
            if (phase != Phase.NONE) {
                return null;
            }
            phase = Phase.TAKING;
            // An ask from now on is one for the cache being taken (its message may come before the take's reply).
            askedBack = false;
        } finally {
            guard.unlock();
        }
        boolean taken = false;
        boolean inDoubt = false;
        try {
            Take take = takeInRedisAsTaker(refused);
            taken = take != null;
            return take;
        } catch (SynchronizerUnavailableException e) {
            inDoubt = true;
            throw e;
        } finally {
            if (!taken) {
                guard.lock();
                try {
                    if (phase == Phase.TAKING) {
                        phase = Phase.NONE;
                        machinery.notCaching(keys.lock(), this);
                    }
                    takeInDoubt |= inDoubt;
                } finally {
                    guard.unlock();
                }
                if (inDoubt) {
                    // Sent only while the client caches nothing of the lock and has had no take answered since.
                    giveBack.afterTakeInDoubt(guard, () -> phase == Phase.NONE && takeInDoubt);
                }
            }
        }
    }

    private Take takeInRedisAsTaker(Consumer<Refusal> refused) {
        // Listening before the take, so that an ask sent once the cache is in Redis finds it.
        machinery.caching(keys.lock(), this);
        long sent = System.nanoTime();
        CacheBlockReply reply = tokens.take(sent);
        if (!reply.granted()) {
            // Refused: no field of this client was there, and an earlier take, sent before, has run.
            guard.lock();
            try {
                takeInDoubt = false;
            } finally {
                guard.unlock();
            }
            if (machinery.askBack(reply.cacher(), keys.lock())) {
                meters.askSent();
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
            counts = tokens.counted(sent, newBase);
        } finally {
            if (!counts) {
                giveBack.uncounted(newBase);
            }
        }
        if (!counts) {
            return null;
        }
        Take taken = registerTaken(reply, newBase, sent);
        if (taken != null) {
            // A switch between the check and the registration: renewed now, not at the next tick.
            machinery.registeredAfterCheck(sent);
        }
        return taken;
    }

    private Take registerTaken(CacheBlockReply reply, String newBase, long sent) {
        guard.lock();
        try {
            // The take replaced whatever field of this client an unanswered one had left.
            takeInDoubt = false;
            if (phase != Phase.TAKING) {
                // Closed or dropped meanwhile: nobody will keep it.
                giveBack.quietly(newBase);
                return null;
            }
            base = newBase;
            tokens.start(reply);
            askedBack |= reply.askedBack();
            Watchdog.Lease[] registered = new Watchdog.Lease[1];
            registered[0] = machinery.watchdog.register(Renewal.ofCache(Script.LOCK_CACHE_RENEW,
                    keys.keysFor(Script.LOCK_CACHE_RENEW), new String[] {owner, newBase}, sent,
                    cause -> lost(registered[0], cause), this::askedBack));
            lease = registered[0];
            phase = Phase.HELD;
            return takeLocked();
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
        String giveBackBase;
        Watchdog.Lease ending;
        List<Consumer<LostHold.Cause>> suspects;
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
                holderThreadId = -1;
                unconfirmed.keep(take::tellLost, lease);
                return null;
            }
            giveBackBase = base;
            ending = lease;
            meters.cacheEnded(awaitGiveBack ? Ending.AWAIT.tag : Ending.ASKED.tag);
            suspects = unconfirmed.since(lease);
            forgetLocked();
        } finally {
            guard.unlock();
        }
        boolean active = machinery.watchdog.unregister(ending);
        return giveBack.atRelease(giveBackBase, active, suspects, take::tellLost);
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
                dropLocked(Ending.BYPASS);
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
                awaitGiveBack = true;
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
        Watchdog.Lease cached = guarded(() -> lease);
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
        return guarded(() -> switch (phase) {
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
        return guarded(() -> {
            boolean live = (phase == Phase.IDLE || phase == Phase.HELD) && Long.toString(cacheBase).equals(base);
            return live ? new Picture(holderThreadId, tokens.latest()) : null;
        });
    }

    /** The cache's owner string in Redis, {@code <client-id>:cache}. */
    String owner() {
        return owner;
    }

    /**
     * What {@code toString()} of the lock says of the cache: nothing while nothing is cached,
     * otherwise {@code ", cached by this client: idle"} (or {@code held}, {@code being taken}).
     */
    String describe() {
        return guarded(() -> switch (phase) {
            case NONE -> "";
            case TAKING -> ", cached by this client: being taken" + askedBackSuffixLocked();
            case IDLE -> ", cached by this client: idle" + askedBackSuffixLocked();
            case HELD -> ", cached by this client: held" + askedBackSuffixLocked();
        });
    }

    private String askedBackSuffixLocked() {
        return askedBack ? ", asked back" : "";
    }

    /**
     * Gives an idle cache back because the client closes, in the background; a cache it finds gone
     * tells the takes it did not confirm, as a renewal would, and the closing client waits for
     * that ({@link Machinery#giveBackCaches}). A held one is left to its lease, as a thread's hold is.
     */
    @Override
    public void giveBackOnClose() {
        String giveBackBase;
        Watchdog.Lease ending;
        List<Consumer<LostHold.Cause>> suspects;
        guard.lock();
        try {
            if (phase != Phase.IDLE) {
                return;
            }
            giveBackBase = base;
            ending = lease;
            meters.cacheEnded(Ending.CLOSE.tag);
            suspects = unconfirmed.since(lease);
            forgetLocked();
        } finally {
            guard.unlock();
        }
        giveBack.reporting(giveBackBase, machinery.watchdog.unregister(ending), suspects);
    }

    /** Whether the client may take the lock in Redis as its cache now: not for a lease after an ask. */
    boolean mayCache() {
        return guarded(() -> System.nanoTime() - noCacheUntilNanos >= 0);
    }

    /**
     * Told that another client asks for the lock, by a message on this client's ask channel or by
     * the watchdog (a renewal's answer): an idle cache goes back at once, a held one at its release.
     */
    @Override
    public void askedBack() {
        Take abandoned = null;
        guard.lock();
        try {
            askedBack = true;
            if (phase == Phase.IDLE) {
                dropLocked(Ending.ASKED);
            } else {
                abandoned = abandonIfEndedLocked();
            }
        } finally {
            guard.unlock();
        }
        reportAbandoned(abandoned);
    }

    /**
     * Looked at by the watchdog at every tick ({@link Machinery#checkAbandonedCaches}), as it looks
     * at every hold's thread: a take whose thread ended without unlock() is reported
     * {@code ABANDONED} and the cache given back, which wakes the client's threads waiting behind
     * it (they sleep until the holder's release, and none will come).
     */
    @Override
    public void checkAbandoned() {
        Take abandoned = null;
        guard.lock();
        try {
            abandoned = abandonIfEndedLocked();
        } finally {
            guard.unlock();
        }
        reportAbandoned(abandoned);
    }

    /** Told by the watchdog that the cache is lost in Redis: a take inside is lost with it. */
    private void lost(Watchdog.Lease which, LostHold.Cause cause) {
        Take inside;
        List<Consumer<LostHold.Cause>> suspects;
        String mayStillBeThere;
        guard.lock();
        try {
            if (which != lease) {
                return;
            }
            inside = current;
            meters.cacheEnded(Ending.LOST.tag);
            suspects = unconfirmed.since(lease);
            // Unrenewable: renewals may have run without their replies coming back, so Redis may
            // still have it for most of a lease; ended by its base instead, which is always safe.
            mayStillBeThere = cause == LostHold.Cause.UNRENEWABLE ? base : null;
            forgetLocked();
        } finally {
            guard.unlock();
        }
        if (mayStillBeThere != null) {
            giveBack.quietly(mayStillBeThere);
        }
        UnconfirmedTakes.tellLost(suspects, cause);
        if (inside == null) {
            log.debug("cached lock '{}': lost while idle ({})", name, cause);
        } else {
            inside.tellLost(cause);
        }
        // A thread of this client that waits behind the cache sleeps until a release; a release
        // racing this loss may find the cache forgotten and wake nobody.
        wakeLocalLine.run();
    }

    /** Drops an idle cache: no more local takes; given back in Redis in the background. */
    private void dropLocked(Ending why) {
        log.debug("cached lock '{}': giving it back, {}", name, why.why);
        meters.cacheEnded(why.tag);
        String giveBackBase = base;
        Watchdog.Lease ending = lease;
        List<Consumer<LostHold.Cause>> suspects = unconfirmed.since(lease);
        forgetLocked();
        boolean active = ending != null && machinery.watchdog.unregister(ending);
        if (giveBackBase != null) {
            giveBack.reporting(giveBackBase, active, suspects);
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
        holderThreadId = -1;
        unconfirmed.clear();
        askedBack = false;
        awaitGiveBack = false;
        tokens.clear();
    }

    /** Whether the cache's lease is live by the local clock, with the margins the watchdog's lost-hold verdict uses. */
    private boolean leaseLive() {
        return lease != null && lease.endedBecause() == null
                && System.nanoTime() - lease.renewedNanos() < liveForNanos;
    }

    /** Reads the cache's state under its guard. */
    private <T> T guarded(Supplier<T> read) {
        guard.lock();
        try {
            return read.get();
        } finally {
            guard.unlock();
        }
    }

    @Override
    public String toString() {
        return guarded(() -> "cache " + phase.name().toLowerCase(Locale.ROOT) + askedBackSuffixLocked());
    }
}
