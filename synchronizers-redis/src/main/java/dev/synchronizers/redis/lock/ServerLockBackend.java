package dev.synchronizers.redis.lock;

import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.ReadWriteLockSnapshot;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.script.ForceReply;
import dev.synchronizers.redis.script.LockPicture;
import dev.synchronizers.redis.script.ReadWriteLockPicture;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.function.Consumer;

/**
 * The backend of a lock on one server, whatever its topology (standalone, Sentinel, Cluster): the
 * non-fair and fair locks and both halves of the read-write lock, each with the scripts of its
 * {@link LockPolicy}. The owner string of a hold is {@code <client-id>:<thread-id>}.
 *
 * <p>Non-fair: a thread arriving while the lock is free takes it even if others wait; waiters of
 * this client queue locally in arrival order and only the first talks to Redis (see
 * {@link Acquirer}). Fair: every waiter of every client takes a place in one queue in Redis, in the
 * order its first try reached Redis, and the lock goes to the first live waiter; a release wakes
 * that waiter alone. A waiter that gives up (timeout, interrupt) leaves the queue at once; one that
 * dies or is cut off leaves it when its place's lease (the client's lease, renewed by the watchdog
 * while it waits) runs out. The untimed {@code tryLock()} barges; {@code tryLock(0, unit)} honours
 * the queue.
 *
 * <p>A non-fair unlock may hand the lock to the first local waiter in one script call. If that
 * call's reply is lost, the waiter finds the outcome with its next try; if it stops first (timed
 * out, interrupted, failed), it gives back what the hand-over may have given it, by owner, which
 * is safe while its thread neither holds nor acquires this lock. A queueing try (fair, write) whose
 * reply is lost may have queued the waiter, so a waiter that stops after one leaves the queue.
 *
 * <p>An uncontended {@code lock()} and {@code unlock()} cost one script call each.
 *
 * <p>Its paths are its collaborators': acquiring ({@link ServerAcquisition}), keeping a booked
 * hold's lease ({@link ServerHoldLeases}) and releasing ({@link ServerRelease}). Forcing, the
 * conditions and the queries are here.
 */
public final class ServerLockBackend extends LockBackend {

    /**
     * How many hand-overs within this client may follow each other while waiters of other clients
     * are marked, before a release gives them a chance (see the hand-over in {@link ServerRelease}).
     */
    public static final int MAX_LOCAL_STREAK = 8;

    final LockPolicy policy;
    final Machinery machinery;
    /** The other half of a read-write lock, which a force frees too; otherwise null. */
    private volatile ServerLockBackend otherHalf;
    /**
     * This client's cache of the lock, if the client caches non-fair locks
     * ({@code RedisSynchronizers.Builder.lockCaching}); otherwise null.
     */
    private final LockCache cache;
    private final ServerRelease release;
    private final ServerAcquisition acquisition;
    private final ServerHoldLeases leases;

    ServerLockBackend(String name, LockPolicy policy, LockKeys keys, Machinery machinery) {
        // Readers are woken all at once, on the lock's channel; everyone else by name, on its client's.
        super(name, policy.kind, keys, machinery, policy.localQueue, policy == LockPolicy.READ ? keys.wakeups()
                : keys.clientWakeups(machinery.clientId));
        this.policy = policy;
        this.machinery = machinery;
        this.cache = policy == LockPolicy.NONFAIR && machinery.lockCaching ? new LockCache(name, keys, machinery, meters, () -> acquirer.wakeHead())
                : null;
        this.release = new ServerRelease(this, cache);
        this.acquisition = new ServerAcquisition(this, cache, release);
        this.leases = new ServerHoldLeases(this, cache);
    }

    /** Makes {@code other} this lock's other half: the two share keys, so a force ends both halves' holds. */
    void pairWith(ServerLockBackend other) {
        this.otherHalf = other;
    }

    /* --------------- acquire --------------- */

    /**
     * {@inheritDoc}
     *
     * <p>A thread's hold has the thread's owner string; a handle's, one of its own (an attempt's),
     * so that nothing named by the thread's owner can touch it, nor anything named by it another hold.
     */
    @Override
    public boolean acquire(long threadId, boolean barging, long timeoutNanos, boolean interruptible, long fixedLeaseMillis,
            boolean forHandle, Consumer<Grant> book) throws InterruptedException {
        return acquisition.acquire(threadId, barging, timeoutNanos, interruptible, fixedLeaseMillis, forHandle, book);
    }

    /* --------------- handles: verify, relet --------------- */

    @Override
    public boolean stillHeld(Holds.Hold held) {
        return leases.stillHeld(held);
    }

    @Override
    public HoldLease relet(Holds.Hold held, long millis, Consumer<LostHold.Cause> onLost) {
        return leases.relet(held, millis, onLost);
    }

    @Override
    public void declareLost(HoldLease lease, LostHold.Cause cause) {
        leases.declareLost(lease, cause);
    }

    /* --------------- release --------------- */

    @Override
    public boolean endLease(HoldLease lease) {
        return leases.endLease(lease);
    }

    @Override
    void unlockedLost(Holds.Hold held, LostHold.Cause cause) {
        release.unlockedLost(held, cause);
    }

    @Override
    public LostHold.Cause release(long threadId, Holds.Hold held) {
        return release.release(threadId, held);
    }

    @Override
    void releaseForReal(Holds.Hold held) {
        if (held.lease instanceof CacheTake take) {
            cache.giveBackAtRelease(take);
        }
    }

    @Override
    public boolean forceUnlock() {
        // Only holds taken before the force can be its victims; one taken right after it is live.
        // A read-write lock's force frees both halves, so both halves' holders are its victims.
        ServerLockBackend other = otherHalf;
        List<Holds.Hold> before = holds.snapshot();
        List<Holds.Hold> otherBefore = other == null ? List.of() : other.holds.snapshot();
        boolean released;
        if (policy.forceUnlock == Script.LOCK_FORCE_UNLOCK) {
            ForceReply forced = ForceReply.of(Script.LOCK_FORCE_UNLOCK, machinery.<List<Object>>await(
                    machinery.scripts.run(Script.LOCK_FORCE_UNLOCK, keys.keysFor(Script.LOCK_FORCE_UNLOCK)),
                    "force-unlock " + kind + " '" + name + "'"));
            released = forced.released();
            // Another client cached it: told now, so that its threads stop taking it locally (with
            // tokens below the next holder's) after one message, not at its next renewal.
            if (!forced.cacher().equals(machinery.clientId) && machinery.askBack(forced.cacher(), keys.lock())) {
                meters.askSent();
            }
        } else {
            released = machinery.<Long>await(machinery.scripts.run(policy.forceUnlock, keys.keysFor(policy.forceUnlock)),
                    "force-unlock " + kind + " '" + name + "'") == 1L;
        }
        // This client's own holders learn at once; other clients' at their watchdog's next tick.
        for (Holds.Hold held : before) {
            declareLost(held.lease, LostHold.Cause.GONE);
        }
        for (Holds.Hold held : otherBefore) {
            other.declareLost(held.lease, LostHold.Cause.GONE);
        }
        if (cache != null) {
            cache.forced();
        }
        acquirer.wakeHead();
        if (other != null) {
            other.acquirer.wakeHead();
        }
        return released;
    }

    /* --------------- conditions --------------- */

    /**
     * {@inheritDoc}
     *
     * <p>A read lock has none, as {@code ReentrantReadWriteLock.ReadLock} has none: a condition's
     * waiter must give up the lock's only hold, and readers share theirs.
     */
    @Override
    public Condition newCondition(RedisLock lock, String id) {
        if (policy == LockPolicy.READ) {
            throw new UnsupportedOperationException(kind + " '" + name + "': a read lock has no conditions"
                    + " (as ReentrantReadWriteLock.ReadLock); use the write lock's");
        }
        return new RedisCondition(lock, machinery, keys.condition(id),
                "condition " + id + " of " + kind + " '" + name + "'");
    }

    /* --------------- queries --------------- */

    @Override
    public boolean isLocked() {
        // This client's cache answers without a round trip: nobody else holds a lock it caches.
        Boolean cached = cache == null ? null : cache.lockedAsFarAsKnown();
        if (cached != null) {
            return cached;
        }
        // A read hold counts until its lease ends; one that ended is purged by the next acquire.
        String key = policy == LockPolicy.READ ? keys.readers() : keys.lock();
        return machinery.await(machinery.redis.exists(key), "query " + kind + " '" + name + "'") == 1L;
    }

    /**
     * One read-only script call: the holders (a read half's are the readers) and the queue
     * estimate; see {@link DistributedLock#getQueueLength()} for what each kind can count.
     */
    @Override
    public LockSnapshot snapshot() {
        String what = "snapshot " + kind + " '" + name + "'";
        if (policy == LockPolicy.READ || policy == LockPolicy.WRITE) {
            ReadWriteLockSnapshot both = readWriteSnapshot();
            int queue = both.waitingWriters() + (both.readersWaiting() ? 1 : 0);
            return new LockSnapshot(name, policy == LockPolicy.READ
                    ? both.readers()
                    : both.writer() == null ? List.of() : List.of(both.writer()), queue);
        }
        List<Object> reply = machinery.await(machinery.scripts.run(Script.LOCK_SNAPSHOT,
                keys.keysFor(Script.LOCK_SNAPSHOT)), what);
        LockPicture picture = LockPicture.of(Script.LOCK_SNAPSHOT, reply);
        long pttl = picture.pttl();
        long queued = picture.queued();
        List<LockSnapshot.Holder> holders = new ArrayList<>();
        for (LockPicture.Holder entry : picture.holders()) {
            long remaining = pttl < 0 ? -1 : pttl;
            if (cache != null && entry.owner().equals(cache.owner())) {
                // This client's cache: the thread inside it (or -1, idle) and the latest local
                // token, which only this client knows; a stale field shows what Redis has.
                LockCache.Picture own = cache.picture(entry.token());
                holders.add(new LockSnapshot.Holder(machinery.clientId, own == null ? -1 : own.threadId(),
                        own == null ? entry.token() : own.latestToken(), remaining, LockSnapshot.Renewal.CACHED));
                continue;
            }
            holders.add(holder(entry.owner(), entry.token(), remaining, own -> own.token == entry.token()));
        }
        for (LockPicture.Waiting waiting : picture.waiting()) {
            if (!machinery.clientId.equals(waiting.client())) {
                queued += waiting.count();   // this client's own line is counted live, by snapshotOf
            }
        }
        return snapshotOf(holders, queued);
    }

    /** What this client caches of the lock, if it caches it. */
    @Override
    public String describe() {
        return cache == null ? "" : cache.describe();
    }

    /** The read-write lock's picture, for either half; one read-only script call. */
    ReadWriteLockSnapshot readWriteSnapshot() {
        machinery.checkOpen();
        ServerLockBackend read = policy == LockPolicy.READ ? this : otherHalf;
        ServerLockBackend write = policy == LockPolicy.WRITE ? this : otherHalf;
        List<Object> reply = machinery.await(machinery.scripts.run(Script.RW_SNAPSHOT,
                keys.keysFor(Script.RW_SNAPSHOT)), "snapshot read-write lock '" + name + "'");
        ReadWriteLockPicture picture = ReadWriteLockPicture.of(Script.RW_SNAPSHOT, reply);
        long writePttl = picture.writePttl();
        LockSnapshot.Holder writer = null;
        for (ReadWriteLockPicture.Writer entry : picture.writers()) {
            writer = write.holder(entry.owner(), entry.token(), writePttl < 0 ? -1 : writePttl,
                    own -> own.token == entry.token());
        }
        List<LockSnapshot.Holder> readers = new ArrayList<>();
        for (ReadWriteLockPicture.Reader reader : picture.readers()) {
            readers.add(read.holder(reader.owner(), reader.token(), reader.remainingMillis(),
                    own -> own.token == reader.token()));
        }
        return new ReadWriteLockSnapshot(name, writer, readers, (int) picture.waitingWriters(),
                picture.readersWaiting());
    }
}
