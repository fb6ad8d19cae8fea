package dev.synchronizers.redis.lock;

import dev.synchronizers.redis.client.CachedLock;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.CacheBlockReply;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of this client's cache of one non-fair lock (docs/design/lock-caching.md; the states
 * are described on {@code LockCache}), its guard, and the transitions every part of the cache
 * makes: a local take, and forgetting the cache once it ends.
 *
 * <p>Every mutable field is read and written only under {@link #guard}, which is held only for
 * bookkeeping, never while waiting for Redis (virtual threads). The parts ({@code LockCache},
 * {@code CacheTokens}, {@code CacheGiveBack}) share one instance, each given it at construction;
 * this class names none of them.
 */
final class CacheState {

    /**
     * The cache's logger: its lines read as the cache's ({@code LockCache}'s, the name they always
     * had), whichever part of it writes them; named by string so that no part names that class.
     */
    static final Logger log = LoggerFactory.getLogger("dev.synchronizers.redis.lock.LockCache");

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

    /** TAKING: one thread of the client takes it in Redis; the others wait for it locally. */
    enum Phase { NONE, TAKING, IDLE, HELD }

    final String name;
    final LockKeys keys;
    final Machinery machinery;
    final SynchronizerMeters meters;
    /** The cache as the client context knows it: what it registers to route asks ({@link Machinery#caching}). */
    final CachedLock registered;
    /**
     * Wakes the first of the client's threads waiting locally for this lock: one that found the
     * cache held sleeps until a release wakes it, and a reservation that ends the cache is none.
     */
    final Runnable wakeLocalLine;
    /** The cache's owner string in Redis: {@code <client-id>:cache}. */
    final String owner;
    final ReentrantLock guard = new ReentrantLock();
    Phase phase = Phase.NONE;
    /** The cache's base token in Redis (its field's value), while cached. */
    String base;
    boolean askedBack;
    /** Whether the take inside gives the cache back at its release for a condition's await. */
    boolean awaitGiveBack;
    /**
     * Whether a take in Redis went unanswered and no take has been answered since: Redis may have
     * a cache field of this client whose base nobody knows ({@code CacheGiveBack#afterTakeInDoubt}).
     */
    boolean takeInDoubt;
    /** The cache's lease with the watchdog, while cached. */
    Watchdog.Lease lease;
    /** The take inside, while held. */
    CacheTake current;
    /**
     * The thread that holds the cache locally, while held (also while it reserves a block, before
     * its take exists), else -1, for snapshots.
     */
    long holderThreadId = -1;
    /**
     * The takes of this cache released since the start of the last renewal that confirmed it: reported
     * lost with the cache, since Redis may have lost it while they were held.
     */
    final UnconfirmedTakes unconfirmed = new UnconfirmedTakes();
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
    /** The block of fencing tokens: the next local token and the top of the current block. */
    private long next;
    private long top;
    /** The latest token a take got, for snapshots; -1 if none since the block was cleared. */
    private long latest = -1;

    CacheState(String name, LockKeys keys, Machinery machinery, SynchronizerMeters meters, CachedLock registered,
            Runnable wakeLocalLine) {
        this.name = name;
        this.keys = keys;
        this.machinery = machinery;
        this.meters = meters;
        this.registered = registered;
        this.wakeLocalLine = wakeLocalLine;
        this.owner = Owner.cacheOf(machinery.clientId);
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis);
        this.liveForNanos = leaseNanos - (machinery.timeout.toNanos()
                + Math.min(TimeUnit.MILLISECONDS.toNanos(50), leaseNanos / 20));
    }

    /** Starts handing out the block {@code reply} gives: a take's, or a reservation's. */
    void startBlockLocked(CacheBlockReply reply) {
        next = reply.lo();
        top = reply.hi();
    }

    /** Whether every token of the block was handed out: the next take needs a reservation first. */
    boolean ranOutLocked() {
        return next > top;
    }

    /** The latest token a take got, for snapshots; -1 if none. */
    long latestLocked() {
        return latest;
    }

    /** A take by this thread with the block's next token, now the take inside. */
    CacheTake takeLocked() {
        latest = next++;
        current = new CacheTake(owner, latest, lease, base);
        holderThreadId = ClientContext.currentThreadId();
        return current;
    }

    /** Forgets the cache: it ended, and whoever ended it gives it back, if at all. */
    void forgetLocked() {
        if (askedBack) {
            noCacheUntilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis);
        }
        if (phase != Phase.NONE) {
            machinery.notCaching(keys.lock(), registered);
        }
        phase = Phase.NONE;
        base = null;
        lease = null;
        current = null;
        holderThreadId = -1;
        unconfirmed.clear();
        askedBack = false;
        awaitGiveBack = false;
        next = 0;
        top = -1;
        latest = -1;
    }

    /** Whether the client may take the lock in Redis as its cache now: not for a lease after an ask. */
    boolean mayCacheLocked() {
        return System.nanoTime() - noCacheUntilNanos >= 0;
    }

    /** Whether the cache's lease is live by the local clock, with the margins the watchdog's lost-hold verdict uses. */
    boolean leaseLiveLocked() {
        return lease != null && lease.endedBecause() == null
                && System.nanoTime() - lease.renewedNanos() < liveForNanos;
    }

    /** Whether the cache is still the one {@code epoch} is the lease of, held for this thread's reservation. */
    boolean reservingForLocked(Watchdog.Lease epoch) {
        return phase == Phase.HELD && current == null && lease == epoch;
    }

    String askedBackSuffixLocked() {
        return askedBack ? ", asked back" : "";
    }

    /** Reads the cache's state under its guard. */
    <T> T guarded(Supplier<T> read) {
        guard.lock();
        try {
            return read.get();
        } finally {
            guard.unlock();
        }
    }
}
