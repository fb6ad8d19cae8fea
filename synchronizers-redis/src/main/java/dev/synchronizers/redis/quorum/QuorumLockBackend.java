package dev.synchronizers.redis.quorum;

import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.Attempt;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.lock.Holds;
import dev.synchronizers.redis.client.LocalLine;
import dev.synchronizers.redis.lock.LockBackend;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.lock.RedisLock;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.AcquireReply;
import dev.synchronizers.redis.script.LockPicture;
import dev.synchronizers.redis.script.RenewReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.support.Disconnected;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
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
 */
public final class QuorumLockBackend extends LockBackend {

    static final String KIND = "redlock";

    /** The longest random back-off after an attempt that got some grants but not a quorum. */
    private static final int MAX_BACKOFF_MILLIS = 30;

    private final QuorumNodes redlock;

    public QuorumLockBackend(String name, QuorumNodes redlock, ClientContext context) {
        this(name, LockKeys.redlock(context.keyPrefix, name), redlock, context);
    }

    private QuorumLockBackend(String name, LockKeys keys, QuorumNodes redlock, ClientContext context) {
        super(name, KIND, keys, context, true, keys.wakeups());
        this.redlock = redlock;
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

    /** Waits for a quorum of the nodes and books the hold. */
    @Override
    public boolean acquire(long threadId, boolean barging, long timeoutNanos, boolean interruptible, long fixedLeaseMillis,
            boolean forHandle, Consumer<Grant> book) throws InterruptedException {
        Waiter waiter = new Waiter(fixedLeaseMillis, forHandle ? null : Thread.currentThread());
        String threadOwner = Owner.ofThread(context.clientId, threadId).encode();
        Attempt attempt = acquirer.acquire(waiter, waiter, threadOwner, timeoutNanos, interruptible);
        if (!attempt.acquired()) {
            return false;
        }
        Won won = waiter.won;
        book.accept(new Grant() {
            @Override
            public String owner() {
                return won.owner;
            }

            @Override
            public long token() {
                return won.token;
            }

            @Override
            public HoldLease start(Consumer<LostHold.Cause> onLost) {
                won.lease.start(onLost);
                return won.lease;
            }
        });
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
        String[] args = subscribed
                ? new String[] {owner, Long.toString(leaseMillis), Integer.toString(Math.max(1, acquirer.localWaiters())),
                        Long.toString(context.timeout.toMillis()), "0"}   // marked, not in line (see the script)
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
                throw unavailable("acquire", grants);
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
        QuorumLease lease = new QuorumLease(new NodesOf(owner, token), fixedLeaseMillis, sent, confirmed,
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
        giveBackRetried(node, owner, "give back " + KIND + " '" + name + "'", deadline, failure -> true);
    }

    private CompletionStage<Long> giveBackCommand(RedlockNode node, String owner) {
        return node.scripts().run(Script.LOCK_GIVE_BACK, keys.keysFor(Script.LOCK_GIVE_BACK), owner);
    }

    /**
     * Sends the node the give-back of {@code owner}'s hold; if the node does not take it and the
     * failure is {@code worthRetrying}, the node's follow-ups retry it until {@code deadline}.
     *
     * @return the first sending's reply
     */
    private CompletionStage<Long> giveBackRetried(RedlockNode node, String owner, String what, long deadline,
            Predicate<Throwable> worthRetrying) {
        // The node's follow-ups count a queued retry once, as RETRY.
        return node.watchdog().followUps().send(Script.LOCK_GIVE_BACK, what, () -> giveBackCommand(node, owner),
                deadline, worthRetrying);
    }

    /** The nodes as the lease of one hold (by its attempt's owner string) uses them. */
    private final class NodesOf implements QuorumLease.Nodes {
        private final String owner;
        private final long token;

        NodesOf(String owner, long token) {
            this.owner = owner;
            this.token = token;
        }

        @Override
        public int size() {
            return redlock.nodes.size();
        }

        @Override
        public int quorum() {
            return redlock.quorum;
        }

        @Override
        public long leaseMillis() {
            return context.leaseMillis;
        }

        @Override
        public long driftMillis(long millis) {
            return redlock.driftMillis(millis);
        }

        @Override
        public HoldLease keep(int index, long fixedMillis, long startNanos, Thread owningThread,
                Consumer<LostHold.Cause> onLost, BooleanSupplier takeBack) {
            return redlock.nodes.get(index).watchdog().register(new Renewal(Script.REDLOCK_RENEW,
                    QuorumLockBackend.this.keys.keysFor(Script.REDLOCK_RENEW), new String[] {owner, Long.toString(token)},
                    fixedMillis, startNanos, owningThread, onLost, takeBack, null));
        }

        @Override
        public void stopKeeping(int index, HoldLease lease) {
            redlock.nodes.get(index).watchdog().unregister((Watchdog.Lease) lease);
        }

        @Override
        public CompletionStage<Long> release(int index, long deadlineNanos, boolean giveBack,
                BooleanSupplier mayHaveHeld) {
            if (giveBack) {
                context.metrics.followUp(Recorder.FollowUp.GIVE_BACK);
            }
            RedlockNode node = redlock.nodes.get(index);
            return giveBackRetried(node, owner, "release of " + KIND + " '" + name + "'", deadlineNanos,
                    failure -> !Disconnected.isRefusal(failure) || mayHaveHeld.getAsBoolean());
        }
    }

    /* --------------- handles: verify, relet --------------- */

    /** Held while a quorum of the nodes record the hold's acquisition; one read-only call per node. */
    @Override
    public boolean stillHeld(Holds.Hold held) {
        return quorumSays("verify", node -> node.scripts().<List<Object>>run(Script.LOCK_SNAPSHOT,
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
     * Sends {@code call} to every node at once and tells whether a quorum's replies say yes.
     *
     * @throws SynchronizerUnavailableException if fewer than a quorum answered within the command
     *     timeout, and those that did are no quorum of yes
     */
    private <T> boolean quorumSays(String what, Function<RedlockNode, CompletionStage<T>> call, Predicate<T> yes) {
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

    /**
     * Sets the lease on every node at once; the hold has the new lease once a quorum set it within
     * the lease less the drift allowance. Its per-node leases are then those nodes', fixed, and the
     * old ones end here (nothing is released).
     */
    @Override
    public HoldLease relet(Holds.Hold held, long millis, Consumer<LostHold.Cause> onLost) {
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
            QuorumLease next = new QuorumLease(new NodesOf(held.owner, held.token), millis, sent, granted, null);
            old.release();
            next.start(onLost);
            return next;
        }
        if (set.answered() < redlock.quorum) {
            throw unavailable("extend", set);
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
    @Override
    public boolean keepClosed(Holds.Hold held, long millis) {
        QuorumLease old = (QuorumLease) held.lease;
        Tally<List<Object>> set = setLease(held, millis);
        set.await(System.nanoTime() + context.timeout.toNanos());
        if (set.yes() >= redlock.quorum) {
            return old.release();
        }
        if (set.answered() < redlock.quorum) {
            throw unavailable("keep closed", set);
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
    @Override
    public void declareLost(HoldLease lease, LostHold.Cause cause) {
        QuorumLease lost = (QuorumLease) lease;
        for (RedlockNode node : redlock.nodes) {
            lost.releaseOn(node.index());
        }
        lost.declareLost(cause);
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
        queued += acquirer.localWaiters();
        return new LockSnapshot(name, holders, (int) Math.min(Integer.MAX_VALUE, queued));
    }

    /** Fewer than a quorum answered: says how many did, and the first failure. */
    private SynchronizerUnavailableException unavailable(String what, Tally<?> tally) {
        Throwable first = tally.firstFailure();
        String detail = first == null ? "" : "; first failure: "
                + Replies.translate(first, what, context.timeout).getMessage();
        return new SynchronizerUnavailableException(what + " " + KIND + " '" + name + "': only " + tally.answered()
                + " of " + redlock.nodes.size() + " nodes answered within " + context.timeout.toMillis()
                + " ms; a quorum is " + redlock.quorum + detail, first);
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
}
