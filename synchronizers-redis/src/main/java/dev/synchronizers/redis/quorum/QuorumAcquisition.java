package dev.synchronizers.redis.quorum;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.Attempt;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.client.LocalLine;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.lock.Holds;
import dev.synchronizers.redis.lock.LockBackend;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.AcquireReply;
import dev.synchronizers.redis.script.Script;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The acquire path of a {@link QuorumLockBackend}: a waiter's attempts, each one a round on every
 * node (grant, then confirm the settled token), the random back-off after a split, and the
 * give-back of every grant that did not end in a hold.
 */
final class QuorumAcquisition {

    /** The longest random back-off after an attempt that got some grants but not a quorum. */
    private static final int MAX_BACKOFF_MILLIS = 30;

    private final QuorumLockBackend backend;
    private final String name;
    private final LockKeys keys;
    private final ClientContext context;
    private final QuorumNodes redlock;
    private final Holds holds;
    private final Acquirer acquirer;

    QuorumAcquisition(QuorumLockBackend backend) {
        this.backend = backend;
        this.name = backend.name;
        this.keys = backend.keys;
        this.context = backend.context;
        this.redlock = backend.redlock;
        this.holds = backend.holds;
        this.acquirer = backend.acquirer;
    }

    /** Waits for a quorum of the nodes and books the hold (see {@link QuorumLockBackend#acquire}). */
    boolean acquire(long threadId, boolean barging, long timeoutNanos, boolean interruptible, long fixedLeaseMillis,
            boolean forHandle, Consumer<LockBackend.Grant> book) throws InterruptedException {
        Waiter waiter = new Waiter(fixedLeaseMillis, forHandle ? null : Thread.currentThread());
        String threadOwner = Owner.ofThread(context.clientId, threadId).encode();
        Attempt attempt = acquirer.acquire(waiter, waiter, threadOwner, timeoutNanos, interruptible);
        if (!attempt.acquired()) {
            return false;
        }
        Won won = waiter.won;
        book.accept(LockBackend.Grant.of(won.owner, won.token, onLost -> {
            won.lease.start(onLost);
            return won.lease;
        }));
        return true;
    }

    /** One waiter's attempts: each one a quorum round on every node. */
    private final class Waiter implements Acquirer.Step, LocalLine.Participant {
        private final long fixedLeaseMillis;
        /** The thread that will hold what it acquires; null for a handle, whose hold is the client's. */
        private final Thread holder;
        /** The winning attempt, set by the attempt that acquired. */
        private Won won;
        /** {@link System#nanoTime()} before which the next attempt may not start (after a split). */
        private long notBeforeNanos = System.nanoTime();

        Waiter(long fixedLeaseMillis, Thread holder) {
            this.fixedLeaseMillis = fixedLeaseMillis;
            this.holder = holder;
        }

        @Override
        public Attempt attempt(boolean subscribed) {
            return tryNodes(subscribed, fixedLeaseMillis, this);
        }

        /**
         * Notes that this waiter's last attempt got some nodes but not a quorum: other acquirers
         * got the rest, and they all gave back. Its next attempt waits a random moment first, even
         * if woken at once (their give-backs wake every waiter), so that the same acquirers do not
         * split the nodes again and again.
         */
        void split() {
            notBeforeNanos = System.nanoTime()
                    + TimeUnit.MILLISECONDS.toNanos(1 + ThreadLocalRandom.current().nextInt(MAX_BACKOFF_MILLIS));
        }

        /** Waits out the random moment after a split, if any; keeps an interrupt for the caller. */
        void backOffAfterSplit() {
            long left;
            while ((left = notBeforeNanos - System.nanoTime()) > 0) {
                LockSupport.parkNanos(this, left);
                if (Thread.currentThread().isInterrupted()) {
                    break;
                }
            }
            notBeforeNanos = System.nanoTime();
        }

        @Override
        public boolean heldLocally() {
            return holds.anyLive();
        }
    }

    /** What the winning attempt got: its owner string, settled token, and the hold's lease to start. */
    private record Won(String owner, long token, QuorumLease lease) {
    }

    /**
     * One attempt: the lock script on every node, then, with grants from a quorum, the settled
     * token (the largest proposal) written back to every node that granted or did not answer; it
     * is a hold once a quorum confirmed that they still hold the grant under that token. Whatever
     * does not end in a hold is given back on every node that did not refuse, including those whose
     * reply did not come.
     *
     * @throws SynchronizerUnavailableException if fewer than a quorum of nodes answered
     * @throws IllegalStateException if the client is closed
     */
    private Attempt tryNodes(boolean subscribed, long fixedLeaseMillis, Waiter waiter) {
        // A waiter woken by close() fails here, rather than trying once more and sleeping again.
        context.checkOpen();
        waiter.backOffAfterSplit();
        List<RedlockNode> nodes = redlock.nodes;
        int quorum = redlock.quorum;
        long leaseMillis = fixedLeaseMillis > 0 ? fixedLeaseMillis : context.leaseMillis;
        long validNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis - redlock.driftMillis(leaseMillis));
        String owner = context.newAttempt();
        Script script = subscribed ? Script.LOCK_ACQUIRE_WAITING : Script.LOCK_ACQUIRE;
        // A subscribed waiter is marked, not put in line (place lease "0"; see the script).
        String[] args = subscribed
                ? backend.waitingTryArgs(owner, Long.toString(leaseMillis), "0")
                : new String[] {owner, Long.toString(leaseMillis)};
        long sent = System.nanoTime();
        Tally<List<Object>> grants = new Tally<>(nodes.size(), quorum,
                reply -> AcquireReply.of(script, reply).acquired());
        for (RedlockNode node : nodes) {
            grants.watch(node.index(), node.scripts().run(script, keys.keysFor(script), args));
        }
        grants.await(sent + context.timeout.toNanos());
        if (grants.yes() < quorum) {
            giveBack(owner, grants, leaseMillis);
            if (grants.answered() < quorum) {
                throw backend.unavailable("acquire", grants);
            }
            if (grants.yes() > 0) {
                waiter.split();
            }
            return new Attempt(false, -1, backOff(script, grants), sent);
        }
        long token = 0;
        for (int i = 0; i < nodes.size(); i++) {
            if (grants.isYes(i)) {
                token = Math.max(token, AcquireReply.of(script, grants.reply(i)).token());
            }
        }
        // Written back to every node that may hold the grant, those that proposed the token included:
        // a grant can end while the attempt is in flight (forced, or its lease cut short by a clock
        // that jumped ahead), so a node counts only once it confirms that it still holds the grant
        // under the settled token, and the hold counts only once a quorum confirmed.
        Tally<Long> settled = new Tally<>(nodes.size(), quorum, reply -> reply == 1L);
        for (RedlockNode node : nodes) {
            int i = node.index();
            if (grants.isYes(i) || grants.isPending(i)) {
                settled.watch(i, node.scripts().run(Script.REDLOCK_SETTLE, keys.keysFor(Script.REDLOCK_SETTLE),
                        owner, Long.toString(token)));
            } else {
                settled.skip(i);
            }
        }
        settled.await(Math.min(sent + context.timeout.toNanos(), sent + validNanos));
        long elapsed = System.nanoTime() - sent;
        if (settled.yes() < quorum || elapsed >= validNanos) {
            // Too slow, or a quorum did not confirm: not a hold whose token is safe.
            giveBack(owner, grants, leaseMillis);
            waiter.split();
            return new Attempt(false, -1, backOff(script, grants), sent);
        }
        boolean[] confirmed = new boolean[nodes.size()];
        for (int i = 0; i < confirmed.length; i++) {
            confirmed[i] = settled.isYes(i);
        }
        QuorumLease lease = new QuorumLease(new HoldNodes(backend, owner, token), fixedLeaseMillis, sent, confirmed,
                waiter.holder);
        for (RedlockNode node : nodes) {
            // A confirmation that comes after the decision counts from when the attempt was sent.
            int i = node.index();
            if (settled.isPending(i)) {
                settled.onYes(i, () -> lease.lateGrant(i));
            }
        }
        waiter.won = new Won(owner, token, lease);
        return new Attempt(true, token, 0, sent);
    }

    /**
     * How long a failed attempt sleeps unless woken: until the earliest holder's lease on a node
     * that refused can run out, and only a short random back-off if this attempt itself held some
     * nodes (two acquirers that split the nodes must not meet again at once).
     */
    private long backOff(Script script, Tally<List<Object>> grants) {
        long ttl = -1;
        for (int i = 0; i < redlock.nodes.size(); i++) {
            if (grants.isNo(i)) {
                long pttl = AcquireReply.of(script, grants.reply(i)).waitMillis();
                if (pttl >= 0) {
                    ttl = ttl < 0 ? pttl : Math.min(ttl, pttl);
                }
            }
        }
        if (grants.yes() > 0) {
            long random = 1 + ThreadLocalRandom.current().nextInt(MAX_BACKOFF_MILLIS);
            ttl = ttl < 0 ? random : Math.min(ttl, random);
        }
        return ttl;
    }

    /**
     * Gives back an attempt's grants on every node that did not refuse it: those that granted, and
     * those whose reply did not come. On a node still pending, the give-back usually runs after the
     * acquire on the same connection and ends a late grant; but an acquire that met NOSCRIPT there
     * is sent again only when that answer arrives, after the give-back, so a grant whose reply
     * comes after the give-back was sent is given back again, and so is one whose reply never
     * comes (it may have run). A node that cannot be told now is retried while the lease lasts.
     */
    private void giveBack(String owner, Tally<?> sent, long leaseMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        for (RedlockNode node : redlock.nodes) {
            // Not where it was refused, nor where the acquire never left this client (refused
            // while the node's connection was down): nothing can be held there.
            int index = node.index();
            if (!sent.isNo(index) && !sent.neverSent(index)) {
                boolean pending = sent.isPending(index);
                giveBackOn(node, owner, deadline);
                if (pending) {
                    // Also when the late reply is a failure: the acquire sent again after NOSCRIPT
                    // may have run after the give-back, its reply lost.
                    sent.onYesOrFailed(index, () -> giveBackOn(node, owner, deadline));
                }
            }
        }
    }

    private void giveBackOn(RedlockNode node, String owner, long deadline) {
        context.metrics.followUp(Recorder.FollowUp.GIVE_BACK);
        backend.giveBackRetried(node, owner, "give back " + QuorumLockBackend.KIND + " '" + name + "'", deadline,
                failure -> true);
    }
}
