package dev.synchronizers.redis.quorum;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.lock.Holds;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.script.LockPicture;
import dev.synchronizers.redis.script.RenewReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What a {@link QuorumLockBackend} does with the lease of a booked hold besides renewing it, which
 * {@link QuorumLease} does on every node: verify it on a quorum, set a new fixed lease on every
 * node (relet, keep closed), and declare it lost.
 */
final class QuorumHoldLeases {

    private final QuorumLockBackend backend;
    private final LockKeys keys;
    private final ClientContext context;
    private final QuorumNodes redlock;

    QuorumHoldLeases(QuorumLockBackend backend) {
        this.backend = backend;
        this.keys = backend.keys;
        this.context = backend.context;
        this.redlock = backend.redlock;
    }

    /** Held while a quorum of the nodes record the hold's acquisition; one read-only call per node. */
    boolean stillHeld(Holds.Hold held) {
        return backend.quorumSays("verify", node -> node.scripts().<List<Object>>run(Script.LOCK_SNAPSHOT,
                keys.keysFor(Script.LOCK_SNAPSHOT)), reply -> {
                    for (LockPicture.Holder holder : LockPicture.of(Script.LOCK_SNAPSHOT, reply).holders()) {
                        if (holder.owner().equals(held.owner)) {
                            return true;
                        }
                    }
                    return false;
                });
    }

    /**
     * Sets the lease on every node at once; the hold has the new lease once a quorum set it within
     * the lease less the drift allowance. Its per-node leases are then those nodes', fixed, and the
     * old ones end here (nothing is released).
     */
    HoldLease relet(Holds.Hold held, long millis, Consumer<LostHold.Cause> onLost) {
        QuorumLease old = (QuorumLease) held.lease;
        long sent = System.nanoTime();
        Tally<List<Object>> set = setLease(held, millis);
        long validNanos = TimeUnit.MILLISECONDS.toNanos(millis - redlock.driftMillis(millis));
        set.await(sent + Math.min(context.timeout.toNanos(), validNanos));
        if (set.yes() >= redlock.quorum && System.nanoTime() - sent < validNanos) {
            boolean[] granted = new boolean[redlock.nodes.size()];
            for (int i = 0; i < granted.length; i++) {
                granted[i] = set.isYes(i);
            }
            QuorumLease next = new QuorumLease(new HoldNodes(backend, held.owner, held.token), millis, sent, granted, null);
            old.release();
            next.start(onLost);
            return next;
        }
        if (set.answered() < redlock.quorum) {
            throw backend.unavailable("extend", set);
        }
        // Too few nodes, or too slowly to count: lost; what nodes have of it is given back.
        for (RedlockNode node : redlock.nodes) {
            old.releaseOn(node.index());
        }
        old.declareLost(LostHold.Cause.GONE);
        return null;
    }

    /**
     * Sets the lease on every node at once, as {@link #relet} does, but needs no validity: the hold
     * is let go, and each node's lease, begun when the call arrived there, keeps the lock closed for
     * {@code millis} from the call at least. Closed once a quorum set it, however long that took;
     * the nodes' leases here end (nothing is released).
     */
    boolean keepClosed(Holds.Hold held, long millis) {
        QuorumLease old = (QuorumLease) held.lease;
        Tally<List<Object>> set = setLease(held, millis);
        set.await(System.nanoTime() + context.timeout.toNanos());
        if (set.yes() >= redlock.quorum) {
            return old.release();
        }
        if (set.answered() < redlock.quorum) {
            throw backend.unavailable("keep closed", set);
        }
        for (RedlockNode node : redlock.nodes) {
            old.releaseOn(node.index());
        }
        old.declareLost(LostHold.Cause.GONE);
        return false;
    }

    /** Sends every node the hold's new fixed lease (token-checked, as a renewal); the replies are tallied. */
    private Tally<List<Object>> setLease(Holds.Hold held, long millis) {
        String[] args = {Long.toString(millis), held.owner, Long.toString(held.token)};
        Tally<List<Object>> set = new Tally<>(redlock.nodes.size(), redlock.quorum,
                reply -> RenewReply.of(Script.REDLOCK_RENEW, reply, 1).outcome(0) == RenewReply.Outcome.RENEWED);
        for (RedlockNode node : redlock.nodes) {
            set.watch(node.index(), node.scripts().run(Script.REDLOCK_RENEW, keys.keysFor(Script.REDLOCK_RENEW), args));
        }
        return set;
    }

    /**
     * Declares lost a hold that verify() found no quorum has. As with a hold lost at a renewal or
     * an extend, what the nodes still have of it is given back, so that it does not stay there for
     * a lease.
     */
    void declareLost(HoldLease lease, LostHold.Cause cause) {
        QuorumLease lost = (QuorumLease) lease;
        for (RedlockNode node : redlock.nodes) {
            lost.releaseOn(node.index());
        }
        lost.declareLost(cause);
    }
}
