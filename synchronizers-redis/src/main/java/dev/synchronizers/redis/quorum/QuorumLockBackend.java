package dev.synchronizers.redis.quorum;

import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.lock.Holds;
import dev.synchronizers.redis.lock.LockBackend;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.lock.RedisLock;
import dev.synchronizers.redis.script.LockPicture;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The backend of a {@code Redlock}'s lock: held while a quorum of its nodes hold it. See
 * {@code Redlock} for the protocol and the project's semantics document for why its fencing tokens
 * increase. The per-node leases and the rule that makes them one hold are {@link QuorumLease}'s;
 * the counting of the nodes' replies is {@link Tally}'s.
 *
 * <p>Every attempt has an owner string of its own ({@code <client-id>:<thread-id>:<attempt>}), so
 * a give-back or release by owner can never end another acquisition's hold, whatever order late
 * replies and retries arrive in. This client's waiters queue locally, and only the first of them
 * asks the nodes.
 *
 * <p>Its paths are its collaborators': acquiring ({@link QuorumAcquisition}) and setting a booked
 * hold's lease ({@link QuorumHoldLeases}), with the nodes as one hold's lease uses them
 * ({@link HoldNodes}). Releasing, forcing and the queries are here.
 */
public final class QuorumLockBackend extends LockBackend {

    static final String KIND = "redlock";

    final QuorumNodes redlock;
    private final QuorumAcquisition acquisition;
    private final QuorumHoldLeases leases;

    public QuorumLockBackend(String name, QuorumNodes redlock, ClientContext context) {
        this(name, LockKeys.redlock(context.keyPrefix, name), redlock, context);
    }

    private QuorumLockBackend(String name, LockKeys keys, QuorumNodes redlock, ClientContext context) {
        super(name, KIND, keys, context, true, keys.wakeups());
        this.redlock = redlock;
        this.acquisition = new QuorumAcquisition(this);
        this.leases = new QuorumHoldLeases(this);
    }

    /**
     * Checks a caller's fixed lease: also refuses one the drift allowance
     * ({@code leaseTime × clockDriftFactor + 2 ms}) eats half of or more, which could never be
     * acquired in time (every attempt would be given back, and lock() would try for ever).
     */
    @Override
    public long fixedLeaseMillis(long leaseTime, TimeUnit unit) {
        long millis = RedisLock.leaseMillis(leaseTime, unit);
        if (redlock.driftMillis(millis) >= millis / 2) {
            throw new IllegalArgumentException("leaseTime too short for a Redlock: " + leaseTime + " " + unit
                    + "; the drift allowance (lease × clockDriftFactor + 2 ms) must be under half of it");
        }
        return millis;
    }

    @Override
    public String describe() {
        return ", " + redlock.nodes.size() + " nodes";
    }

    /* --------------- acquire --------------- */

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
    public boolean keepClosed(Holds.Hold held, long millis) {
        return leases.keepClosed(held, millis);
    }

    @Override
    public void declareLost(HoldLease lease, LostHold.Cause cause) {
        leases.declareLost(lease, cause);
    }

    /* --------------- release --------------- */

    @Override
    public boolean endLease(HoldLease lease) {
        return ((QuorumLease) lease).release();
    }

    /**
     * Releases on every node at once; a node that cannot be told now is told when it is back,
     * while the lease lasts. Released once a quorum answered that they had the hold, or, with the
     * nodes that did not answer but had the hold by the local clock when unlock() began, a quorum
     * had it to the end.
     */
    @Override
    public LostHold.Cause release(long threadId, Holds.Hold held) {
        QuorumLease lease = (QuorumLease) held.lease;
        boolean[] valid = lease.validAtRelease();
        List<RedlockNode> nodes = redlock.nodes;
        Tally<Long> released = new Tally<>(nodes.size(), redlock.quorum, reply -> reply == 1L);
        for (RedlockNode node : nodes) {
            released.watch(node.index(), lease.releaseOn(node.index()));
        }
        released.await(System.nanoTime() + context.timeout.toNanos());
        acquirer.wakeHead();
        if (released.yes() >= redlock.quorum) {
            return null;
        }
        if (released.answered() < redlock.quorum) {
            throw unavailable("release (the hold was dropped locally; the release is retried on every node until its"
                    + " lease ends)", released);
        }
        int validUnanswered = 0;
        for (int i = 0; i < valid.length; i++) {
            if (valid[i] && released.isUnanswered(i)) {
                validUnanswered++;
            }
        }
        if (released.yes() + validUnanswered >= redlock.quorum) {
            // A quorum answered, and with the nodes that did not, which had the hold by the local
            // clock when unlock() began, it had the hold to the end: released where reachable, and
            // retried on the others.
            return null;
        }
        // A quorum answered, and even counting the nodes that did not but still had it by the
        // local clock, fewer than a quorum had the hold (a holder paused past its validity, a
        // fixed lease over): it may have been lost before unlock().
        return lease.fixed() && lease.expiredByClock() ? LostHold.Cause.LEASE_EXPIRED : LostHold.Cause.GONE;
    }

    @Override
    public boolean forceUnlock() {
        // Only holds taken before the force can be its victims.
        List<Holds.Hold> before = holds.snapshot();
        Tally<Long> released = new Tally<>(redlock.nodes.size(), redlock.nodes.size(), reply -> reply == 1L);
        String fence = Long.toString(2 * context.leaseMillis);
        for (RedlockNode node : redlock.nodes) {
            released.watch(node.index(), node.scripts().run(Script.REDLOCK_FORCE_UNLOCK,
                    keys.keysFor(Script.REDLOCK_FORCE_UNLOCK), fence));
        }
        released.await(System.nanoTime() + context.timeout.toNanos());
        if (released.answered() < redlock.quorum) {
            throw unavailable("force-unlock", released);
        }
        // This client's own holders learn at once; other clients' at their watchdogs' next ticks.
        for (Holds.Hold held : before) {
            ((QuorumLease) held.lease).declareLost(LostHold.Cause.GONE);
        }
        acquirer.wakeHead();
        // Held means held by a quorum, as isLocked() says: a key on fewer nodes (an attempt under
        // way, a give-back not landed yet) is deleted too, but it was no hold.
        return released.yes() >= redlock.quorum;
    }

    /* --------------- queries --------------- */

    /** Locked when a quorum of the nodes have the lock's key; one round trip to every node. */
    @Override
    public boolean isLocked() {
        return quorumSays("query", node -> node.commands().exists(keys.lock()), reply -> reply == 1L);
    }

    @Override
    public LockSnapshot snapshot() {
        long sent = System.nanoTime();
        long deadline = sent + context.timeout.toNanos();
        Tally<List<Object>> pictures = new Tally<>(redlock.nodes.size(), redlock.quorum, reply -> true);
        for (RedlockNode node : redlock.nodes) {
            pictures.watch(node.index(), node.scripts().run(Script.LOCK_SNAPSHOT, keys.keysFor(Script.LOCK_SNAPSHOT)));
        }
        pictures.await(deadline);
        long now = System.nanoTime();
        pictures.awaitAll(Math.min(deadline, now + Math.max(now - sent, TimeUnit.MILLISECONDS.toNanos(1))));
        if (pictures.answered() < redlock.quorum) {
            throw unavailable("snapshot", pictures);
        }
        Map<String, Long> tokens = new HashMap<>();
        Map<String, List<Long>> leases = new HashMap<>();
        long queued = 0;
        for (int i = 0; i < redlock.nodes.size(); i++) {
            if (!pictures.isYes(i)) {
                continue;
            }
            LockPicture picture = LockPicture.of(Script.LOCK_SNAPSHOT, pictures.reply(i));
            long pttl = picture.pttl();
            for (LockPicture.Holder entry : picture.holders()) {
                String owner = entry.owner();
                long token = entry.token();
                tokens.merge(owner, token, Math::max);
                leases.computeIfAbsent(owner, o -> new ArrayList<>()).add(pttl < 0 ? -1 : pttl);
            }
            long others = 0;
            for (LockPicture.Waiting waiting : picture.waiting()) {
                if (!Owner.clientOf(waiting.client()).equals(context.clientId)) {
                    others += waiting.count();
                }
            }
            queued = Math.max(queued, others);
        }
        List<LockSnapshot.Holder> holders = new ArrayList<>();
        for (Map.Entry<String, List<Long>> entry : leases.entrySet()) {
            List<Long> remaining = entry.getValue();
            if (remaining.size() < redlock.quorum) {
                continue;   // a grant on too few nodes: an attempt under way or given back, not a hold
            }
            remaining.sort(null);
            long lease = remaining.get(remaining.size() - redlock.quorum);
            String owner = entry.getKey();
            holders.add(holder(owner, tokens.get(owner), lease, own -> own.owner.equals(owner)));
        }
        return snapshotOf(holders, queued);
    }

    /**
     * {@inheritDoc}
     *
     * <p>A Redlock lock has none: a condition's queue would have to live on every node, and a signal
     * choose one waiter on all of them alike; with nodes that fail and come back independently, a
     * quorum could choose two different waiters (one signal waking two) or lose a waiter's
     * registration without its knowing. No such queue is offered without the guarantees of a
     * single server's script.
     */
    @Override
    public Condition newCondition(RedisLock lock, String id) {
        throw new UnsupportedOperationException(kind + " '" + name + "': a Redlock lock has no conditions: a"
                + " waiters' queue cannot be kept on a quorum of independent servers with one signal waking one"
                + " waiter; use a lock of one server (Sentinel or Cluster for failover) for conditions");
    }

    /* --------------- shared by the paths --------------- */

    /**
     * Sends {@code call} to every node at once and tells whether a quorum's replies say yes.
     *
     * @throws SynchronizerUnavailableException if fewer than a quorum answered within the command
     *     timeout, and those that did are no quorum of yes
     */
    <T> boolean quorumSays(String what, Function<RedlockNode, CompletionStage<T>> call, Predicate<T> yes) {
        Tally<T> replies = new Tally<>(redlock.nodes.size(), redlock.quorum, yes);
        for (RedlockNode node : redlock.nodes) {
            replies.watch(node.index(), call.apply(node));
        }
        replies.await(System.nanoTime() + context.timeout.toNanos());
        if (replies.yes() >= redlock.quorum) {
            return true;
        }
        if (replies.answered() < redlock.quorum) {
            throw unavailable(what, replies);
        }
        return false;
    }

    /** Fewer than a quorum answered: says how many did, and the first failure. */
    SynchronizerUnavailableException unavailable(String what, Tally<?> tally) {
        Throwable first = tally.firstFailure();
        String detail = first == null ? "" : "; first failure: "
                + Replies.translate(first, what, context.timeout).getMessage();
        return new SynchronizerUnavailableException(what + " " + KIND + " '" + name + "': only " + tally.answered()
                + " of " + redlock.nodes.size() + " nodes answered within " + context.timeout.toMillis()
                + " ms; a quorum is " + redlock.quorum + detail, first);
    }

    /**
     * Sends the node the give-back of {@code owner}'s hold; if the node does not take it and the
     * failure is {@code worthRetrying}, the node's follow-ups retry it until {@code deadline}.
     *
     * @return the first sending's reply
     */
    CompletionStage<Long> giveBackRetried(RedlockNode node, String owner, String what, long deadline,
            Predicate<Throwable> worthRetrying) {
        // The node's follow-ups count a queued retry once, as RETRY.
        return node.watchdog().followUps().send(Script.LOCK_GIVE_BACK, what, () -> giveBackCommand(node, owner),
                deadline, worthRetrying);
    }

    private CompletionStage<Long> giveBackCommand(RedlockNode node, String owner) {
        return node.scripts().run(Script.LOCK_GIVE_BACK, keys.keysFor(Script.LOCK_GIVE_BACK), owner);
    }
}
