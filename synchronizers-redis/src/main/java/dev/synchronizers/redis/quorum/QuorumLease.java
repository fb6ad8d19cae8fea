package dev.synchronizers.redis.quorum;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.Arrays;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The lease of one hold of a quorum lock: a lease on each of N independent nodes, kept by each
 * node's watchdog, and the rule that makes them one. The hold is held while a quorum of the nodes
 * have it by the local clock: a node's lease is kept (registered and not over) and its grant or
 * last renewal began less than the validity ago (the lease less the drift allowance). A node that
 * loses the hold (restarted without its data, its lease ran out while it was unreachable, a grant
 * that never arrived) does not end the hold while a quorum of the others still have it: it is kept
 * again, starting expired, so that a later renewal takes the hold back there, and such a take-back
 * counts only while the others still make a quorum. Below a quorum the hold is lost: every node's
 * lease ends, what the nodes still have of it is given back, and the lock is told once.
 *
 * <p>The state changes once, under one lock: held, then released by its owner or lost for a cause.
 * The nodes' watchdogs report to it on their own threads; the lock's owner releases it on its own.
 *
 * <p>A lease is built when an acquisition is decided, with the nodes that confirmed the grant in
 * time; a confirmation that comes later counts from when the attempt was sent ({@link #lateGrant}),
 * also one that comes before the hold is booked and {@link #start started}.
 */
public final class QuorumLease implements HoldLease {

    /** The nodes as one hold's lease uses them; the lock's backend implements it for its hold. */
    public interface Nodes {
        /** How many nodes. */
        int size();

        /** How many must have the hold: a majority. */
        int quorum();

        /** The client's lease in milliseconds, which a renewed hold has on each node. */
        long leaseMillis();

        /** How much earlier than the local clock says a lease of {@code millis} may end on some node. */
        long driftMillis(long millis);

        /**
         * Has node {@code index}'s watchdog keep the hold's lease there.
         *
         * @param fixedMillis the lease to track without renewing it, or 0 to renew it every tick
         * @param startNanos when the lease there began, by {@link System#nanoTime()}
         * @param owner the holding thread, whose end ends the lease as abandoned; null for a hold of
         *     the client
         * @param onLost told once, on the watchdog's thread, if the lease there ends other than by
         *     {@link #stopKeeping}
         * @param takeBack asked whether a renewal that took the hold back there counts; null with a
         *     fixed lease
         * @return the node's lease
         */
        HoldLease keep(int index, long fixedMillis, long startNanos, Thread owner, Consumer<LostHold.Cause> onLost,
                BooleanSupplier takeBack);

        /** Has node {@code index}'s watchdog stop keeping {@code lease}. */
        void stopKeeping(int index, HoldLease lease);

        /**
         * Sends node {@code index} the release of the hold (by its owner string, so it can never
         * end another acquisition's hold), retried by the node's watchdog until {@code deadlineNanos}
         * if it gets no answer, unless it was refused before it was sent and {@code mayHaveHeld}
         * says the node cannot have the hold.
         *
         * @param giveBack whether to count it as a give-back (of a hold that was not to be there)
         * @return the first sending's reply: 1 if the node had the hold
         */
        CompletionStage<Long> release(int index, long deadlineNanos, boolean giveBack, BooleanSupplier mayHaveHeld);
    }

    private static final Object RELEASED = new Object();

    private final Nodes nodes;
    /** The holding thread, whose end ends every node's lease as abandoned; null for a hold of the client (a handle's). */
    private final Thread thread;
    private final long fixedMillis;
    private final long startNanos;
    /** Orders the node watchdogs' reports and the owner's release: the state changes once, under it. */
    private final ReentrantLock books = new ReentrantLock();
    /** Each node's lease, or null where none is kept; written under {@link #books}. */
    private final HoldLease[] leases;
    /** Each node's lease as first kept when the hold started; written once, under {@link #books}. */
    private final HoldLease[] booked;
    /**
     * Per node, when the lease its acquisition grant set began ({@link Long#MIN_VALUE}: no grant
     * known, or the node's first lease ended since).
     */
    private final AtomicLongArray grantedNanos;
    /** Late grants that came before {@link #start}; written under {@link #books}. */
    private final boolean[] lateBeforeStart;
    private boolean started;
    private Consumer<LostHold.Cause> onLost;
    /** Which nodes had the hold by the local clock when the owner released it; set by {@link #release()}. */
    private volatile boolean[] validAtRelease;
    /** null while held; then {@link #RELEASED} or the cause it was lost for; written under {@link #books}. */
    private volatile Object state;

    /**
     * A lease of a hold just acquired, not yet kept anywhere.
     *
     * @param nodes the nodes
     * @param fixedMillis the lease the caller chose, or 0 for a renewed one
     * @param sentNanos when the acquisition was sent, by {@link System#nanoTime()}
     * @param granted per node, whether it confirmed the grant in time
     * @param owner the holding thread, or null for a hold of the client (a handle's), which no
     *     thread's end abandons
     * @throws IllegalArgumentException if {@code granted} does not have one entry per node
     */
    public QuorumLease(Nodes nodes, long fixedMillis, long sentNanos, boolean[] granted, Thread owner) {
        if (granted.length != nodes.size()) {
            throw new IllegalArgumentException("granted: " + granted.length + " entries for " + nodes.size() + " nodes");
        }
        this.nodes = nodes;
        this.thread = owner;
        this.fixedMillis = fixedMillis;
        this.startNanos = sentNanos;
        this.leases = new HoldLease[granted.length];
        this.booked = new HoldLease[granted.length];
        this.grantedNanos = new AtomicLongArray(granted.length);
        this.lateBeforeStart = new boolean[granted.length];
        for (int i = 0; i < granted.length; i++) {
            grantedNanos.set(i, granted[i] ? sentNanos : Long.MIN_VALUE);
        }
    }

    /**
     * Has every node keep the lease, once the hold is booked. A fixed lease is kept only where the
     * grant was confirmed, and each node reports its end there less the drift allowance; a renewed
     * one is kept everywhere, where the grant was not confirmed starting expired, so that it counts
     * once a renewal took it there (its grant arrived late, or the node was free again).
     *
     * @param onLost told once, on a node watchdog's thread, if the hold is lost
     * @throws IllegalStateException if started before
     */
    public void start(Consumer<LostHold.Cause> onLost) {
        books.lock();
        try {
            if (started) {
                throw new IllegalStateException("started already");
            }
            this.onLost = onLost;
            long staleSince = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(nodes.leaseMillis()) - 1;
            for (int index = 0; index < leases.length; index++) {
                int node = index;
                boolean granted = grantedNanos.get(index) != Long.MIN_VALUE;
                if (fixed()) {
                    if (granted) {
                        long millis = Math.max(1, fixedMillis - nodes.driftMillis(fixedMillis));
                        leases[index] = nodes.keep(index, millis, startNanos, thread,
                                cause -> nodeLost(node, cause), null);
                    }
                } else {
                    leases[index] = nodes.keep(index, 0, granted ? startNanos : staleSince, thread,
                            cause -> nodeLost(node, cause), () -> mayTakeBack(node));
                }
            }
            System.arraycopy(leases, 0, booked, 0, leases.length);
            started = true;
            for (int index = 0; index < lateBeforeStart.length; index++) {
                if (lateBeforeStart[index]) {
                    lateGrant(index);
                }
            }
        } finally {
            books.unlock();
        }
    }

    /**
     * Counts a grant whose confirmation came after the acquisition was decided, from when it was
     * sent, unless the node's first lease has ended since: then only a renewal counts there.
     */
    public void lateGrant(int index) {
        books.lock();
        try {
            if (!started) {
                lateBeforeStart[index] = true;
            } else if (state == null && leases[index] != null && leases[index] == booked[index]) {
                grantedNanos.set(index, startNanos);
            }
        } finally {
            books.unlock();
        }
    }

    @Override
    public boolean fixed() {
        return fixedMillis > 0;
    }

    @Override
    public long fixedMillis() {
        return fixedMillis;
    }

    /**
     * Returns the start of the quorum's validity: the latest moment from which a quorum of nodes
     * had the hold by their last grant or renewal; the acquisition's start if fewer nodes are known.
     */
    @Override
    public long renewedNanos() {
        long[] since = new long[leases.length];
        for (int i = 0; i < since.length; i++) {
            HoldLease lease = leases[i];
            since[i] = Math.max(lease == null ? Long.MIN_VALUE : lease.renewedNanos(), grantedNanos.get(i));
        }
        Arrays.sort(since);
        long quorumSince = since[since.length - nodes.quorum()];
        return quorumSince == Long.MIN_VALUE ? startNanos : quorumSince;
    }

    /** Whether a fixed lease is over by the local clock, less the drift allowance. */
    public boolean expiredByClock() {
        return fixed() && System.nanoTime() - startNanos
                >= TimeUnit.MILLISECONDS.toNanos(fixedMillis - nodes.driftMillis(fixedMillis));
    }

    /** The reason the hold is over, or null while it is believed held (or was released). */
    @Override
    public LostHold.Cause endedBecause() {
        if (state instanceof LostHold.Cause cause) {
            return cause;
        }
        return expiredByClock() ? LostHold.Cause.LEASE_EXPIRED : null;
    }

    /**
     * Ends the hold as released by its owner: notes which nodes had it by the local clock now (see
     * {@link #validAtRelease()}), then stops every node's lease.
     *
     * @return true if it was still held; false if it had been lost
     */
    public boolean release() {
        validAtRelease = validNodes(System.nanoTime());
        boolean active = end(RELEASED);
        stopKeepingAll();
        return active;
    }

    /**
     * Per node, whether it had the hold by the local clock when {@link #release()} was called: a
     * node that does not answer the release counts as having had it to the end only if it still
     * did then.
     *
     * @return a copy; all false before {@link #release()}
     */
    public boolean[] validAtRelease() {
        boolean[] valid = validAtRelease;
        return valid == null ? new boolean[leases.length] : valid.clone();
    }

    /**
     * Sends node {@code index} the release of the hold, retried while the lease lasts (see
     * {@link Nodes#release}).
     */
    public CompletionStage<Long> releaseOn(int index) {
        return nodes.release(index, releaseDeadline(), false, () -> mayHaveBeenOn(index));
    }

    /**
     * Ends the hold as lost for {@code cause}, e.g. after a force-unlock: stops every node's lease
     * and tells the lock, unless it had ended already.
     */
    public void declareLost(LostHold.Cause cause) {
        if (end(cause)) {
            stopKeepingAll();
            onLost.accept(cause);
        }
    }

    /**
     * Told by node {@code index}'s watchdog, on its thread, that the lease there ended other than
     * by the owner's release. The hold stays held while a quorum of the other nodes have it by the
     * local clock; the node is then kept again, starting expired, so that a later renewal takes the
     * hold back there once the node is reachable and free again (the renew script refuses while
     * another acquisition holds it or issued a newer token there). Below a quorum the hold is lost:
     * every node's lease ends, what the nodes still have of it is given back so that others need
     * not wait for it to run out, and the lock is told.
     */
    void nodeLost(int index, LostHold.Cause cause) {
        books.lock();
        try {
            if (state != null) {
                return;
            }
            // The grant that began this node's lease no longer counts: only renewals from now on.
            grantedNanos.set(index, Long.MIN_VALUE);
            if (cause == LostHold.Cause.GONE || cause == LostHold.Cause.UNRENEWABLE) {
                long now = System.nanoTime();
                if (validElsewhere(index, now) >= nodes.quorum()) {
                    leases[index] = fixed()
                            ? null
                            : nodes.keep(index, 0, now - TimeUnit.MILLISECONDS.toNanos(nodes.leaseMillis()) - 1,
                                    thread, again -> nodeLost(index, again), () -> mayTakeBack(index));
                    return;
                }
            }
            state = cause;
        } finally {
            books.unlock();
        }
        stopKeepingAll();
        if (cause == LostHold.Cause.GONE || cause == LostHold.Cause.UNRENEWABLE) {
            long deadline = releaseDeadline();
            for (int i = 0; i < leases.length; i++) {
                int node = i;
                nodes.release(i, deadline, false, () -> mayHaveBeenOn(node));
            }
        }
        onLost.accept(cause);
    }

    /**
     * Asked by node {@code index}'s watchdog whether a renewal that took the hold back there (the
     * node had lost it) counts. Only while a quorum of the other nodes still have the hold: then
     * nobody else can have held the lock meanwhile. Otherwise the lock may have been free on a
     * quorum for long enough that another client held it and released it, and its token may have
     * expired since (which is why the script's token check cannot tell), say after this JVM was
     * paused past its lease: the take-back is refused, the node's lease ends as gone, and the hold
     * is lost below a quorum.
     *
     * <p>A take-back of a hold that has ended (released, or lost and given back) is refused too,
     * and given back on that node: the tick may have taken the lease before the release ended it
     * and sent the renewal after the release, which then found the node free and took the released
     * hold back. Nothing else would end it there before its lease ran out.
     */
    boolean mayTakeBack(int index) {
        books.lock();
        try {
            if (state == null) {
                return validElsewhere(index, System.nanoTime()) >= nodes.quorum();
            }
        } finally {
            books.unlock();
        }
        nodes.release(index, releaseDeadline(), true, () -> mayHaveBeenOn(index));
        return false;
    }

    /**
     * Whether node {@code index} may have this hold: its grant is known (on time or late), or a
     * renewal there succeeded within the lease (renewed, or taken back).
     */
    boolean mayHaveBeenOn(int index) {
        HoldLease lease = leases[index];
        return grantedNanos.get(index) != Long.MIN_VALUE || lease == null
                || System.nanoTime() - lease.renewedNanos() < TimeUnit.MILLISECONDS.toNanos(nodes.leaseMillis());
    }

    /**
     * How many nodes other than {@code index} have the hold by the local clock at {@code now}: a
     * lease there is kept and not over, and its grant or last renewal began less than the validity
     * ago. Called under the books.
     */
    private int validElsewhere(int index, long now) {
        long validNanos = validNanos();
        int valid = 0;
        for (int i = 0; i < leases.length; i++) {
            HoldLease lease = leases[i];
            long since = Math.max(lease == null ? Long.MIN_VALUE : lease.renewedNanos(), grantedNanos.get(i));
            if (i != index && lease != null && lease.endedBecause() == null && now - since < validNanos) {
                valid++;
            }
        }
        return valid;
    }

    /**
     * Per node, whether it has the hold by the local clock at {@code now}: a lease there is kept
     * and not over, and its grant or last renewal began less than the validity ago (a fixed lease:
     * the hold's own validity is not over).
     */
    boolean[] validNodes(long now) {
        long validNanos = validNanos();
        boolean[] valid = new boolean[leases.length];
        books.lock();
        try {
            for (int i = 0; i < valid.length; i++) {
                HoldLease lease = leases[i];
                if (state != null || lease == null || lease.endedBecause() != null) {
                    continue;
                }
                long since = Math.max(lease.renewedNanos(), grantedNanos.get(i));
                valid[i] = fixed() ? !expiredByClock() : now - since < validNanos;
            }
        } finally {
            books.unlock();
        }
        return valid;
    }

    /** The client's lease less its drift allowance: how long a node's grant or renewal counts. */
    private long validNanos() {
        long lease = nodes.leaseMillis();
        return TimeUnit.MILLISECONDS.toNanos(lease - nodes.driftMillis(lease));
    }

    /** Until when a release of the hold is worth retrying: its lease from now, after which it has run out. */
    private long releaseDeadline() {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(fixed() ? fixedMillis : nodes.leaseMillis());
    }

    /**
     * Ends the hold once, as released ({@link #RELEASED}) or lost.
     *
     * @return true if it was still held
     */
    private boolean end(Object how) {
        books.lock();
        try {
            if (state != null) {
                return false;
            }
            state = how;
            return true;
        } finally {
            books.unlock();
        }
    }

    /** Stops the lease on every node; only after the state is set. */
    private void stopKeepingAll() {
        for (int i = 0; i < leases.length; i++) {
            HoldLease lease = leases[i];
            if (lease != null) {
                nodes.stopKeeping(i, lease);
            }
        }
    }

    @Override
    public String toString() {
        Object now = state;
        return "QuorumLease[" + (now == null ? "held" : now == RELEASED ? "released" : "lost: " + now)
                + (fixed() ? ", fixed " + fixedMillis + " ms" : ", renewed") + "]";
    }
}
