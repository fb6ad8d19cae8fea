package dev.synchronizers.redis.lock;

import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The Redis side of one lock, below its {@code java.util.concurrent} facade ({@link RedisLock}):
 * how a thread's acquisition, release and force reach the servers, and what they answer to the
 * queries. Two kinds: one server, whatever its topology ({@link ServerLockBackend}: standalone,
 * Sentinel, Cluster), and a quorum of independent servers ({@code QuorumLockBackend}: Redlock).
 *
 * <p>A backend owns what the facade and it share of one lock in this client: this JVM's holds
 * ({@link Holds}, which only the facade adds to) and the waiters' line ({@link Acquirer}). The
 * facade does the argument checks, re-entry, the lost-hold errors and pinning; it comes here only
 * for a fresh acquisition (hold count 0 to 1), the last release, and what only Redis knows.
 */
public abstract class LockBackend {

    public final String name;
    /** What the lock is called in messages, metrics and lost-hold reports, e.g. "fair lock". */
    public final String kind;
    public final LockKeys keys;
    public final ClientContext context;
    public final Holds holds = new Holds();
    public final Acquirer acquirer;
    final SynchronizerMeters meters;

    /**
     * @param channel the channel this client's waiters hear their wake-ups on
     */
    public LockBackend(String name, String kind, LockKeys keys, ClientContext context, boolean localQueue, String channel) {
        this.name = name;
        this.kind = kind;
        this.keys = keys;
        this.context = context;
        this.meters = context.metrics.synchronizer(kind.replace(' ', '_'), name);
        this.acquirer = new Acquirer(context, channel, localQueue, meters);
    }

    /** What an acquisition got: the hold's owner string and token in Redis, and how to lease it. */
    public interface Grant {
        String owner();

        long token();

        /** What Redis has as the owner's value while the hold lasts (see {@link Holds.Hold#checkToken}). */
        default String checkToken() {
            return Long.toString(token());
        }

        /**
         * Starts keeping the hold's lease (renewed, or fixed) now that the facade has booked it.
         *
         * @param onLost told once, on a watchdog's thread, if the hold ends other than by its release
         * @return the lease
         */
        HoldLease start(Consumer<LostHold.Cause> onLost);

        /** A grant of a hold in Redis whose lease {@code start} begins (see {@link #start}). */
        static Grant of(String owner, long token, Function<Consumer<LostHold.Cause>, HoldLease> start) {
            return new InRedis(owner, token, start);
        }
    }

    /** A hold in Redis, of its owner string and token, as {@link Grant#of} makes it. */
    private record InRedis(String owner, long token, Function<Consumer<LostHold.Cause>, HoldLease> starter)
            implements Grant {
        @Override
        public HoldLease start(Consumer<LostHold.Cause> onLost) {
            return starter.apply(onLost);
        }
    }

    /**
     * Checks a caller's fixed lease and returns it in milliseconds (see
     * {@link RedisLock#leaseMillis}); a backend may refuse more.
     *
     * @throws NullPointerException if {@code unit} is null
     * @throws IllegalArgumentException if the lease is out of range for this backend
     */
    public long fixedLeaseMillis(long leaseTime, TimeUnit unit) {
        return RedisLock.leaseMillis(leaseTime, unit);
    }

    /**
     * The arguments of a try that marks the waiter in Redis ({@code lock-acquire-waiting.lua}) for
     * {@code owner}: the lease; how many threads of this client wait, this one among them, for other
     * clients' snapshots, counted until the waiter's next try is due, which a reply may delay by a
     * command timeout; and the lease of a place in line.
     *
     * @param placeMillis the lease of the waiter's place in line, or "0" for a waiting mark only
     */
    public final String[] waitingTryArgs(String owner, String leaseMillis, String placeMillis) {
        return new String[] {owner, leaseMillis, Integer.toString(Math.max(1, acquirer.localWaiters())),
                Long.toString(context.timeout.toMillis()), placeMillis};
    }

    /**
     * Waits for the lock in Redis for the current thread, which holds it nowhere in this JVM, and
     * has the facade book what it got ({@code book}) before the acquisition counts as over: a
     * follow-up of this backend that must not touch a hold of the thread sees it either acquiring
     * or holding.
     *
     * @param barging whether this is the untimed {@code tryLock()}, which may take the lock ahead of
     *     a queue
     * @param timeoutNanos {@link Acquirer#FOREVER}, or how long to wait (zero or less: one try)
     * @param fixedLeaseMillis the lease the caller chose, or 0 for a renewed hold
     * @param forHandle whether the hold is for a {@link dev.synchronizers.LockHandle}: owned by the
     *     client under an owner string of its own, never by the thread
     * @param book books the grant as the hold; called once, on this thread, if acquired
     * @return whether it acquired
     * @throws InterruptedException if {@code interruptible} and interrupted
     * @throws dev.synchronizers.SynchronizerUnavailableException if Redis does not answer
     */
    public abstract boolean acquire(long threadId, boolean barging, long timeoutNanos, boolean interruptible,
            long fixedLeaseMillis, boolean forHandle, Consumer<Grant> book) throws InterruptedException;

    /**
     * Asks Redis whether it still has {@code held}: one round trip (one per node, in parallel).
     *
     * @throws dev.synchronizers.SynchronizerUnavailableException if Redis (a quorum) does not answer
     */
    public abstract boolean stillHeld(Holds.Hold held);

    /**
     * Gives {@code held} a fixed lease of {@code millis} from now in Redis, owned by the client: one
     * round trip (one per node, in parallel). If Redis had it, its lease is ended here and the new,
     * fixed one returned, to be kept instead; if not, its lease is declared lost (its
     * {@code onLost} is told) and null returned.
     *
     * @param onLost told if the new lease ends other than by {@link #endLease}
     * @throws dev.synchronizers.SynchronizerUnavailableException if Redis (a quorum) does not
     *     answer; the hold keeps its lease then
     */
    public abstract HoldLease relet(Holds.Hold held, long millis, Consumer<LostHold.Cause> onLost);

    /**
     * Lets {@code held} go but keeps it in Redis for {@code millis} from now, after which it ends
     * by itself ({@link dev.synchronizers.LockHandle#releaseAfter}): its lease here ends either way.
     * One round trip (one per node, in parallel).
     *
     * @return true if Redis had it and keeps it closed; false if it was lost (its lease declared
     *     lost, its {@code onLost} told)
     * @throws dev.synchronizers.SynchronizerUnavailableException if Redis (a quorum) does not
     *     answer; the hold keeps its lease then
     */
    public boolean keepClosed(Holds.Hold held, long millis) {
        HoldLease closed = relet(held, millis, cause -> { });
        if (closed == null) {
            return false;
        }
        // Kept closed until the fixed lease runs out in Redis; nothing to renew, nobody to wake.
        endLease(closed);
        return true;
    }

    /** Ends {@code lease} as lost for {@code cause}, its {@code onLost} told, unless it had ended. */
    public abstract void declareLost(HoldLease lease, LostHold.Cause cause);

    /**
     * Stops keeping a lease because its hold is over by its owner's doing (released, or a fixed
     * lease that ran out and is taken afresh).
     *
     * @return true if the hold was still believed held; false if it had ended as lost
     */
    public abstract boolean endLease(HoldLease lease);

    /**
     * Called by {@code unlock()} of a hold known lost, for what Redis may still have of it.
     *
     * @param cause why it was lost
     */
    void unlockedLost(Holds.Hold held, LostHold.Cause cause) {
    }

    /**
     * Ends {@code held} in Redis, its lease already ended by {@link #endLease}, and tells this
     * client's waiters.
     *
     * @return null if it was released; otherwise why Redis no longer had it
     * @throws dev.synchronizers.SynchronizerUnavailableException if Redis does not answer (the
     *     release is retried in the background while the lease lasts)
     */
    public abstract LostHold.Cause release(long threadId, Holds.Hold held);

    /**
     * Makes the coming release of {@code held} end it in Redis, whatever the backend would keep
     * (a lock cache): a condition's await must let others in while it waits.
     */
    void releaseForReal(Holds.Hold held) {
    }

    /** See {@link dev.synchronizers.DistributedLock#forceUnlock()}. */
    public abstract boolean forceUnlock();

    /** See {@link dev.synchronizers.DistributedLock#isLocked()}. */
    public abstract boolean isLocked();

    /** See {@link dev.synchronizers.DistributedLock#snapshot()}. */
    public abstract LockSnapshot snapshot();

    /**
     * A holder a snapshot found, from its owner string: this client's own hold of a thread says
     * whether it is renewed ({@code same} tells whether the entry is that hold); any other is unknown.
     */
    protected final LockSnapshot.Holder holder(String owner, long token, long leaseRemainingMillis,
            java.util.function.Predicate<Holds.Hold> same) {
        String clientId = Owner.clientOf(owner);
        // -1: an owner another program wrote, with no thread id to show.
        long threadId = Owner.tryParse(owner).map(Owner::threadId).orElse(-1L);
        LockSnapshot.Renewal renewal = clientId.equals(context.clientId)
                ? holds.renewalOf(threadId, same)
                : LockSnapshot.Renewal.UNKNOWN;
        return new LockSnapshot.Holder(clientId, threadId, token, leaseRemainingMillis, renewal);
    }

    /**
     * A snapshot of {@code holders}, with {@code queuedInRedis} waiters of other clients and this
     * client's own line counted live.
     */
    protected final LockSnapshot snapshotOf(List<LockSnapshot.Holder> holders, long queuedInRedis) {
        long queued = queuedInRedis + acquirer.localWaiters();
        return new LockSnapshot(name, holders, (int) Math.min(Integer.MAX_VALUE, queued));
    }

    /**
     * Makes the condition {@code id} of {@code lock} (see {@link RedisCondition}): an index, or
     * {@code n=<name>} for a named one.
     *
     * @throws UnsupportedOperationException if this kind of lock has no conditions
     */
    public Condition newCondition(RedisLock lock, String id) {
        throw new UnsupportedOperationException(kind + " '" + name + "' has no conditions");
    }

    /** What {@code toString()} says of the backend after the lock's kind and name, e.g. its nodes. */
    public String describe() {
        return "";
    }
}
