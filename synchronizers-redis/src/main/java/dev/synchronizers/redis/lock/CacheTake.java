package dev.synchronizers.redis.lock;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.function.Consumer;

/**
 * One thread's hold taken from this client's cache of a lock (docs/design/lock-caching.md): its
 * token, and its lease, a view of the cache's. Both the {@link LockBackend.Grant} and the
 * {@link HoldLease} of a cached hold.
 */
final class CacheTake implements HoldLease, LockBackend.Grant {
    /** The cache's owner string in Redis: {@code <client-id>:cache}. */
    private final String owner;
    private final long token;
    private final Watchdog.Lease of;
    /** The base of the cache it was taken from: what Redis has for the cache's owner. */
    private final String checkToken;
    /** The thread that took it: if it ends inside, the take is abandoned. */
    private final Thread thread = Thread.currentThread();
    private volatile Consumer<LostHold.Cause> onLost;

    /** A take by the current thread, made under the cache's guard. */
    CacheTake(String owner, long token, Watchdog.Lease of, String checkToken) {
        this.owner = owner;
        this.token = token;
        this.of = of;
        this.checkToken = checkToken;
    }

    /** The cache's lease this take is a view of. */
    Watchdog.Lease cacheLease() {
        return of;
    }

    /** Whether the thread that took it ended (inside, unless released). */
    boolean threadEnded() {
        return !thread.isAlive();
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
