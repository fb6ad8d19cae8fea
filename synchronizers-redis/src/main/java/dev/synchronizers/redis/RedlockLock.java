package dev.synchronizers.redis;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.quorum.Tally;
import dev.synchronizers.redis.support.Disconnected;
import dev.synchronizers.redis.script.AcquireReply;
import dev.synchronizers.redis.script.LockPicture;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.support.Replies;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A {@link Redlock}'s lock: held while a quorum of its nodes hold it. See {@link Redlock} for the
 * protocol and the project's semantics document for why its fencing tokens increase.
 *
 * <p>Reentrancy is counted in this JVM, as for the single-server lock; only a fresh acquisition
 * (hold count 0 to 1) goes to the nodes. Every attempt has an owner string of its own
 * ({@code <client-id>:<thread-id>:<attempt>}), so a give-back or release by owner can never end
 * another acquisition's hold, whatever order late replies and retries arrive in. This client's
 * waiters queue locally, and only the first of them asks the nodes.
 */
final class RedlockLock implements DistributedLock {

    static final String KIND = "redlock";

    /** The longest random back-off after an attempt that got some grants but not a quorum. */
    private static final int MAX_BACKOFF_MILLIS = 30;

    private final String name;
    private final LockKeys keys;
    private final Redlock redlock;
    private final Acquirer acquirer;
    private final SynchronizerMeters meters;
    /** thread id -> its hold: a hold stays here after it is lost, until its thread unlocks or re-enters. */
    private final Map<Long, Hold> holds = new ConcurrentHashMap<>();

    RedlockLock(String name, Redlock redlock) {
        this.name = name;
        this.redlock = redlock;
        this.keys = LockKeys.redlock(redlock.keyPrefix, name);
        this.meters = redlock.metrics.synchronizer(KIND, name);
        this.acquirer = new Acquirer(redlock.wakeups, keys.wakeups(), redlock.leaseMillis, true, redlock::checkOpen,
                meters);
    }

    @Override
    public String name() {
        return name;
    }

    /* --------------- acquire --------------- */

    @Override
    public void lock() {
        acquireUninterruptibly(0);
    }

    /**
     * As {@link DistributedLock#lock(long, TimeUnit)}; also throws {@link IllegalArgumentException}
     * if the lease leaves no validity worth having: the drift allowance
     * ({@code leaseTime × clockDriftFactor + 2 ms}) is at least half of it, as for the client's lease.
     */
    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        acquireUninterruptibly(fixedLeaseMillis(leaseTime, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(Acquirer.FOREVER, true, 0);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(0, false, 0);
        } catch (InterruptedException e) {
            throw new AssertionError("a single attempt does not wait", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(unit.toNanos(time), true, 0);
    }

    /**
     * As {@link DistributedLock#tryLock(long, long, TimeUnit)}; also throws
     * {@link IllegalArgumentException} if the drift allowance is at least half the lease (see
     * {@link #lock(long, TimeUnit)}).
     */
    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long leaseMillis = fixedLeaseMillis(leaseTime, unit);
        return acquire(unit.toNanos(waitTime), true, leaseMillis);
    }

    /**
     * Checks a caller's fixed lease: one the drift allowance eats half of or more could never be
     * acquired in time (every attempt would be given back, and lock() would try for ever).
     */
    private long fixedLeaseMillis(long leaseTime, TimeUnit unit) {
        long millis = RedisLock.leaseMillis(leaseTime, unit);
        if (redlock.driftMillis(millis) >= millis / 2) {
            throw new IllegalArgumentException("leaseTime too short for a Redlock: " + leaseTime + " " + unit
                    + "; the drift allowance (lease × clockDriftFactor + 2 ms) must be under half of it");
        }
        return millis;
    }

    private void acquireUninterruptibly(long fixedLeaseMillis) {
        try {
            acquire(Acquirer.FOREVER, false, fixedLeaseMillis);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait threw InterruptedException", e);
        }
    }

    private boolean acquire(long timeoutNanos, boolean interruptible, long fixedLeaseMillis) throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        long threadId = Machinery.currentThreadId();
        Hold held = holds.get(threadId);
        if (held != null && held.endedBecause() == LostHold.Cause.LEASE_EXPIRED) {
            // The fixed lease the caller chose is over: the hold has ended, so this is a fresh start.
            if (held.end(null)) {
                endNodeLeases(held);
            }
            forget(threadId, held);
            held = null;
        }
        if (held != null) {
            LostHold.Cause ended = held.endedBecause();
            if (ended != null) {
                throw lost(ended, "cannot re-enter");
            }
            if (held.count == Integer.MAX_VALUE) {
                throw new Error("Maximum lock count exceeded");
            }
            held.count++;
            return true;
        }
        redlock.checkOpen();
        return meters.timed(() -> acquireOnNodes(threadId, timeoutNanos, interruptible, fixedLeaseMillis));
    }

    /** Waits for a quorum of the nodes and books the hold. */
    private boolean acquireOnNodes(long threadId, long timeoutNanos, boolean interruptible, long fixedLeaseMillis)
            throws InterruptedException {
        Waiter waiter = new Waiter(fixedLeaseMillis);
        String threadOwner = Owner.ofThread(redlock.clientId, threadId).encode();
        Attempt attempt = acquirer.acquire(waiter, threadOwner, timeoutNanos, interruptible);
        if (!attempt.acquired()) {
            return false;
        }
        Won won = waiter.won;
        Hold hold = new Hold(threadId, won.owner, won.token, fixedLeaseMillis, won.sentNanos, meters.holdStarted(),
                redlock.nodes.size());
        for (int i = 0; i < won.granted.length; i++) {
            hold.grantedNanos.set(i, won.granted[i] ? won.sentNanos : Long.MIN_VALUE);
        }

        // Pinned before any watchdog knows it, so that its end, however soon, finds it pinned.
        redlock.pin(this);
        holds.put(threadId, hold);
        hold.books.lock();
        try {
            long staleSince = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(redlock.leaseMillis) - 1;
            for (RedlockNode node : redlock.nodes) {
                int index = node.index();
                if (hold.fixed()) {
                    // A fixed lease is not renewed: only the nodes that confirmed it count, and each
                    // node's watchdog reports its end, less the drift allowance.
                    if (won.granted[index]) {
                        long millis = Math.max(1, fixedLeaseMillis - redlock.driftMillis(fixedLeaseMillis));
                        hold.leases[index] = node.watchdog().register(Script.REDLOCK_RENEW,
                                keys.keysFor(Script.REDLOCK_RENEW), hold.itemArgs(), millis, won.sentNanos,
                                cause -> nodeLost(hold, index, cause));
                    }
                } else {
                    // Every node is renewed, and one that did not grant counts once a renewal took it
                    // (its grant arrived late, or it was free again): its lease starts expired.
                    hold.leases[index] = node.watchdog().register(Script.REDLOCK_RENEW,
                            keys.keysFor(Script.REDLOCK_RENEW), hold.itemArgs(), 0,
                            won.granted[index] ? won.sentNanos : staleSince, cause -> nodeLost(hold, index, cause),
                            () -> mayTakeBack(hold, index));
                }
            }
            System.arraycopy(hold.leases, 0, hold.booked, 0, hold.leases.length);
        } finally {
            hold.books.unlock();
        }
        won.booked(hold);   // outside the books: a late grant takes Won's monitor, then the books
        return true;
    }

    /** One waiter's attempts: each one a quorum round on every node. */
    private final class Waiter implements Acquirer.Step {
        private final long fixedLeaseMillis;
        /** The winning attempt, set by the attempt that acquired. */
        private Won won;
        /** {@link System#nanoTime()} before which the next attempt may not start (after a split). */
        private long notBeforeNanos = System.nanoTime();

        Waiter(long fixedLeaseMillis) {
            this.fixedLeaseMillis = fixedLeaseMillis;
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
            for (Hold hold : holds.values()) {
                if (hold.endedBecause() == null) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * What the winning attempt got: its owner, token, when it was sent and which nodes confirmed
     * its grant under the token; a confirmation that arrives late is passed to the hold once it is
     * booked.
     */
    private static final class Won {
        final String owner;
        final long token;
        final long sentNanos;
        /** Per node: it confirmed the grant under the token when the attempt was decided. */
        final boolean[] granted;
        private Hold hold;
        private final boolean[] late;

        Won(String owner, long token, long sentNanos, boolean[] granted) {
            this.owner = owner;
            this.token = token;
            this.sentNanos = sentNanos;
            this.granted = granted;
            this.late = new boolean[granted.length];
        }

        synchronized void lateGrant(int index) {
            late[index] = true;
            if (hold != null) {
                hold.lateGrant(index, sentNanos);
            }
        }

        synchronized void booked(Hold booked) {
            hold = booked;
            for (int i = 0; i < late.length; i++) {
                if (late[i]) {
                    booked.lateGrant(i, sentNanos);
                }
            }
        }
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
        redlock.checkOpen();
        waiter.backOffAfterSplit();
        List<RedlockNode> nodes = redlock.nodes;
        int quorum = redlock.quorum;
        long leaseMillis = fixedLeaseMillis > 0 ? fixedLeaseMillis : redlock.leaseMillis;
        long validNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis - redlock.driftMillis(leaseMillis));
        String owner = redlock.newAttemptOwner();
        Script script = subscribed ? Script.LOCK_ACQUIRE_WAITING : Script.LOCK_ACQUIRE;
        String[] args = subscribed
                ? new String[] {owner, Long.toString(leaseMillis), Integer.toString(Math.max(1, acquirer.localWaiters())),
                        Long.toString(redlock.timeout.toMillis())}
                : new String[] {owner, Long.toString(leaseMillis)};
        long sent = System.nanoTime();
        Tally<List<Object>> grants = new Tally<>(nodes.size(), quorum,
                reply -> AcquireReply.of(script, reply).acquired());
        for (RedlockNode node : nodes) {
            grants.watch(node.index(), node.scripts().run(script, keys.keysFor(script), args));
        }
        grants.await(sent + redlock.timeout.toNanos());
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
        settled.await(Math.min(sent + redlock.timeout.toNanos(), sent + validNanos));
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
        Won won = new Won(owner, token, sent, confirmed);
        for (RedlockNode node : nodes) {
            // A confirmation that comes after the decision counts from when the attempt was sent.
            int i = node.index();
            if (settled.isPending(i)) {
                settled.onYes(i, () -> won.lateGrant(i));
            }
        }
        waiter.won = won;
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
        redlock.metrics.followUp(Recorder.FollowUp.GIVE_BACK);
        sendRetried(node, "give back " + KIND + " '" + name + "'", () -> giveBackCommand(node, owner), deadline,
                failure -> true);
    }

    private CompletionStage<Long> giveBackCommand(RedlockNode node, String owner) {
        return node.scripts().run(Script.LOCK_GIVE_BACK, keys.keysFor(Script.LOCK_GIVE_BACK), owner);
    }

    /**
     * Sends a follow-up; if the node does not take it and the failure is {@code worthRetrying}, its
     * watchdog retries it until {@code deadline}.
     *
     * @return the first sending's reply
     */
    private <T> CompletionStage<T> sendRetried(RedlockNode node, String what,
            java.util.function.Supplier<CompletionStage<T>> command, long deadline, Predicate<Throwable> worthRetrying) {
        CompletionStage<T> reply = command.get();
        reply.whenComplete((ok, failure) -> {
            if (failure != null && worthRetrying.test(failure)) {
                redlock.metrics.followUp(Recorder.FollowUp.RETRY);
                node.watchdog().retryUntil(what, command::get, deadline);
            }
        });
        return reply;
    }

    /* --------------- losing a hold --------------- */

    /**
     * Told by node {@code index}'s watchdog, on its thread, that the hold's lease there ended other
     * than by unlock(). The hold stays held while a quorum of nodes renewed it within their lease
     * less the drift allowance; the node is then registered again, starting expired, so that a
     * later renewal takes the hold back there once the node is reachable and free again
     * (redlock-renew.lua refuses while another acquisition holds it or issued a newer token
     * there). Below a quorum,
     * the hold is lost: every node's lease ends, its owner is told, and what nodes still have of it
     * is given back so that others need not wait for it to run out.
     */
    private void nodeLost(Hold hold, int index, LostHold.Cause cause) {
        hold.books.lock();
        try {
            if (hold.state != null) {
                return;
            }
            // The grant that began this node's lease no longer counts: only renewals from now on.
            hold.grantedNanos.set(index, Long.MIN_VALUE);
            if (cause == LostHold.Cause.GONE || cause == LostHold.Cause.UNRENEWABLE) {
                long now = System.nanoTime();
                if (validElsewhere(hold, index, now) >= redlock.quorum) {
                    if (!hold.fixed()) {
                        RedlockNode node = redlock.nodes.get(index);
                        hold.leases[index] = node.watchdog().registerFor(Script.REDLOCK_RENEW,
                                keys.keysFor(Script.REDLOCK_RENEW), hold.itemArgs(),
                                now - TimeUnit.MILLISECONDS.toNanos(redlock.leaseMillis) - 1, hold.thread,
                                again -> nodeLost(hold, index, again), () -> mayTakeBack(hold, index));
                    } else {
                        hold.leases[index] = null;
                    }
                    return;
                }
            }
            hold.state = cause;
        } finally {
            hold.books.unlock();
        }
        endNodeLeases(hold);
        redlock.listeners.report(new LostHold(name, KIND, hold.threadId, hold.token, cause));
        if (cause == LostHold.Cause.ABANDONED) {
            forget(hold.threadId, hold);
        } else {
            unpin(hold, false);
        }
        if (cause == LostHold.Cause.GONE || cause == LostHold.Cause.UNRENEWABLE) {
            giveBackLost(hold);
        }
        acquirer.wakeHead();
    }

    /**
     * How many nodes other than {@code index} have the hold by the local clock at {@code now}: a
     * lease there is registered and not over, and its grant or last renewal began less than the
     * lease less the drift allowance ago. Called under the hold's books.
     */
    private int validElsewhere(Hold hold, int index, long now) {
        long validNanos = TimeUnit.MILLISECONDS.toNanos(redlock.leaseMillis - redlock.driftMillis(redlock.leaseMillis));
        int valid = 0;
        for (int i = 0; i < hold.leases.length; i++) {
            Watchdog.Lease lease = hold.leases[i];
            long since = Math.max(lease == null ? Long.MIN_VALUE : lease.renewedNanos(), hold.grantedNanos.get(i));
            if (i != index && lease != null && lease.endedBecause() == null && now - since < validNanos) {
                valid++;
            }
        }
        return valid;
    }

    /**
     * Per node, whether it has the hold by the local clock at {@code now}: a lease there is
     * registered and not over, and its grant or last renewal began less than the validity ago (a
     * fixed lease: the hold's own validity is not over).
     */
    private boolean[] validNodes(Hold hold, long now) {
        long validNanos = TimeUnit.MILLISECONDS.toNanos(redlock.leaseMillis - redlock.driftMillis(redlock.leaseMillis));
        boolean[] valid = new boolean[hold.leases.length];
        hold.books.lock();
        try {
            for (int i = 0; i < valid.length; i++) {
                Watchdog.Lease lease = hold.leases[i];
                if (hold.state != null || lease == null || lease.endedBecause() != null) {
                    continue;
                }
                long since = Math.max(lease.renewedNanos(), hold.grantedNanos.get(i));
                valid[i] = hold.fixed() ? !hold.expiredByClock() : now - since < validNanos;
            }
        } finally {
            hold.books.unlock();
        }
        return valid;
    }

    /**
     * Asked by node {@code index}'s watchdog whether a renewal that took the hold back there (the
     * node had lost it: a restart, a grant that never arrived, a lease that ran out) counts. Only
     * while a quorum of the other nodes still have the hold: then nobody else can have held the
     * lock meanwhile. Otherwise the lock may have been free on a quorum for long enough that
     * another client held it and released it, and its token may have expired since (which is
     * why the script's token check cannot tell), say after this JVM was paused past its lease: the
     * take-back is refused, the node's lease ends as gone, and the hold is lost below a quorum.
     *
     * <p>A take-back of a hold that has ended (released, or lost and given back) is refused too,
     * and given back on that node: the tick may have taken the lease before unlock() ended it and
     * sent the renewal after the release, which then found the node free and took the released
     * hold back. Nothing else would end it there before its lease ran out.
     */
    private boolean mayTakeBack(Hold hold, int index) {
        hold.books.lock();
        try {
            if (hold.state == null) {
                return validElsewhere(hold, index, System.nanoTime()) >= redlock.quorum;
            }
        } finally {
            hold.books.unlock();
        }
        redlock.metrics.followUp(Recorder.FollowUp.GIVE_BACK);
        release(redlock.nodes.get(index), hold, releaseDeadline(hold));
        return false;
    }

    /** Ends the hold's lease on every node's watchdog; only after the hold's state is set. */
    private void endNodeLeases(Hold hold) {
        for (int i = 0; i < hold.leases.length; i++) {
            Watchdog.Lease lease = hold.leases[i];
            if (lease != null) {
                redlock.nodes.get(i).watchdog().unregister(lease);
            }
        }
    }

    /**
     * Ends, on every node that still has it, a hold that was lost: a node that keeps it would stop,
     * until its lease ran out, any quorum that needs that node.
     */
    private void giveBackLost(Hold hold) {
        long deadline = releaseDeadline(hold);
        for (RedlockNode node : redlock.nodes) {
            release(node, hold, deadline);
        }
    }

    /** Until when a release of {@code hold} is worth retrying: its lease from now, after which it has run out. */
    private long releaseDeadline(Hold hold) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(hold.fixed() ? hold.fixedMillis : redlock.leaseMillis);
    }

    /**
     * Sends node {@code node} the release of {@code held}. If it gets no answer, the node's watchdog
     * retries it until {@code deadline}, unless it was refused before it was sent to a node that
     * cannot have the hold.
     */
    private CompletionStage<Long> release(RedlockNode node, Hold held, long deadline) {
        return sendRetried(node, "release of " + KIND + " '" + name + "'", () -> giveBackCommand(node, held.owner),
                deadline, failure -> !Disconnected.isRefusal(failure) || held.mayHaveBeenOn(node.index()));
    }

    private void forget(long threadId, Hold hold) {
        holds.remove(threadId, hold);
        unpin(hold, false);
    }

    private void unpin(Hold hold, boolean released) {
        if (hold.pinned.compareAndSet(true, false)) {
            redlock.unpin(this);
            meters.holdEnded(hold.metric, released);
        }
    }

    /* --------------- release --------------- */

    @Override
    public void unlock() {
        long threadId = Machinery.currentThreadId();
        Hold held = holds.get(threadId);
        if (held == null) {
            throw new IllegalMonitorStateException(KIND + " '" + name
                    + "': unlock() by a thread that does not hold it (never taken or already released)");
        }
        if (held.count > 1) {
            held.count--;
            LostHold.Cause ended = held.endedBecause();
            if (ended != null) {
                throw lost(ended, "unlock()");
            }
            return;
        }
        holds.remove(threadId, held);
        // Which nodes had the hold by the local clock when unlock() began: a node that does not
        // answer the release counts as having had it to the end only if it still did then.
        boolean[] valid = validNodes(held, System.nanoTime());
        boolean active = held.end(null);
        endNodeLeases(held);
        unpin(held, active && held.endedBecause() == null);
        if (!active) {
            acquirer.wakeHead();
            LostHold.Cause cause = held.state instanceof LostHold.Cause known ? known : LostHold.Cause.GONE;
            throw lost(cause, "unlock()");
        }
        redlock.checkOpen();
        long deadline = releaseDeadline(held);
        Tally<Long> released = new Tally<>(redlock.nodes.size(), redlock.quorum, reply -> reply == 1L);
        for (RedlockNode node : redlock.nodes) {
            // A node that cannot be told now is told when it is back, while the lease lasts.
            released.watch(node.index(), release(node, held, deadline));
        }
        released.await(System.nanoTime() + redlock.timeout.toNanos());
        acquirer.wakeHead();
        if (released.yes() >= redlock.quorum) {
            return;
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
            return;
        }
        // A quorum answered, and even counting the nodes that did not but still had it by the
        // local clock, fewer than a quorum had the hold (a holder paused past its validity, a
        // fixed lease over): it may have been lost before unlock().
        LostHold.Cause cause = held.fixed() && held.expiredByClock() ? LostHold.Cause.LEASE_EXPIRED : LostHold.Cause.GONE;
        redlock.listeners.report(new LostHold(name, KIND, threadId, held.token, cause));
        throw lost(cause, "unlock()");
    }

    @Override
    public boolean forceUnlock() {
        redlock.checkOpen();
        // Only holds taken before the force can be its victims.
        List<Hold> before = List.copyOf(holds.values());
        Tally<Long> released = new Tally<>(redlock.nodes.size(), redlock.nodes.size(), reply -> reply == 1L);
        String fence = Long.toString(2 * redlock.leaseMillis);
        for (RedlockNode node : redlock.nodes) {
            released.watch(node.index(), node.scripts().run(Script.REDLOCK_FORCE_UNLOCK,
                    keys.keysFor(Script.REDLOCK_FORCE_UNLOCK), fence));
        }
        released.await(System.nanoTime() + redlock.timeout.toNanos());
        if (released.answered() < redlock.quorum) {
            throw unavailable("force-unlock", released);
        }
        // This client's own holders learn at once; other clients' at their watchdogs' next ticks.
        for (Hold held : before) {
            held.books.lock();
            boolean ended;
            try {
                ended = held.state == null;
                if (ended) {
                    held.state = LostHold.Cause.GONE;
                }
            } finally {
                held.books.unlock();
            }
            if (ended) {
                endNodeLeases(held);
                redlock.listeners.report(new LostHold(name, KIND, held.threadId, held.token, LostHold.Cause.GONE));
                unpin(held, false);
            }
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
        redlock.checkOpen();
        Tally<Long> exists = new Tally<>(redlock.nodes.size(), redlock.quorum, reply -> reply == 1L);
        for (RedlockNode node : redlock.nodes) {
            exists.watch(node.index(), node.commands().exists(keys.lock()));
        }
        exists.await(System.nanoTime() + redlock.timeout.toNanos());
        if (exists.yes() >= redlock.quorum) {
            return true;
        }
        if (exists.answered() < redlock.quorum) {
            throw unavailable("query", exists);
        }
        return false;
    }

    @Override
    public int getQueueLength() {
        return snapshot().queueLength();
    }

    @Override
    public boolean hasQueuedThreads() {
        return getQueueLength() > 0;
    }

    /**
     * One read-only script call on every node, answered from the nodes that replied once a quorum
     * did, and the others that replied within as long again: a slow or paused node delays it by
     * no more than the quorum took, not by the command timeout. The holders are the acquisitions a
     * quorum of the nodes have, each with the largest token and the lease a quorum still has; the
     * queue is the largest count any answering node has of other clients' waiters, plus this
     * client's.
     */
    @Override
    public LockSnapshot snapshot() {
        redlock.checkOpen();
        long sent = System.nanoTime();
        long deadline = sent + redlock.timeout.toNanos();
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
                if (!Owner.clientOf(waiting.client()).equals(redlock.clientId)) {
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
            holders.add(holder(entry.getKey(), tokens.get(entry.getKey()), lease));
        }
        queued += acquirer.localWaiters();
        return new LockSnapshot(name, holders, (int) Math.min(Integer.MAX_VALUE, queued));
    }

    /** A holder from its owner string {@code <client-id>:<thread-id>:<attempt>}. */
    private LockSnapshot.Holder holder(String owner, long token, long leaseRemainingMillis) {
        String clientId = Owner.clientOf(owner);
        // -1: an owner another program wrote, with no thread id to show.
        long threadId = Owner.tryParse(owner).map(Owner::threadId).orElse(-1L);
        LockSnapshot.Renewal renewal = LockSnapshot.Renewal.UNKNOWN;
        Hold own = clientId.equals(redlock.clientId) ? holds.get(threadId) : null;
        if (own != null && own.owner.equals(owner)) {
            renewal = own.fixed() ? LockSnapshot.Renewal.FIXED : LockSnapshot.Renewal.RENEWED;
        }
        return new LockSnapshot.Holder(clientId, threadId, token, leaseRemainingMillis, renewal);
    }

    @Override
    public boolean isHeldByCurrentThread() {
        Hold held = holds.get(Machinery.currentThreadId());
        return held != null && held.endedBecause() == null;
    }

    @Override
    public int getHoldCount() {
        Hold held = holds.get(Machinery.currentThreadId());
        return held == null ? 0 : held.count;
    }

    @Override
    public long fencingToken() {
        Hold held = holds.get(Machinery.currentThreadId());
        if (held == null) {
            throw new IllegalMonitorStateException(KIND + " '" + name + "': fencingToken() by a thread that does not hold it");
        }
        return held.token;
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(KIND + " '" + name + "': conditions are not supported by distributed locks");
    }

    /** Shows the name and what this JVM knows; makes no network call. */
    @Override
    public String toString() {
        int count = 0;
        for (Hold held : holds.values()) {
            count += held.count;
        }
        String state = count == 0 ? "not held by this JVM" : "held by this JVM: " + count + (count == 1 ? " hold" : " holds");
        return "RedlockLock[" + name + ", " + redlock.nodes.size() + " nodes, " + state + "]";
    }

    /* --------------- helpers --------------- */

    private LostHoldException lost(LostHold.Cause cause, String what) {
        return new LostHoldException(name, cause,
                KIND + " '" + name + "': " + what + " failed: the hold was lost: " + LostHoldListeners.describe(cause));
    }

    /** Fewer than a quorum answered: says how many did, and the first failure. */
    private SynchronizerUnavailableException unavailable(String what, Tally<?> tally) {
        Throwable first = tally.firstFailure();
        String detail = first == null ? "" : "; first failure: "
                + Replies.translate(first, what, redlock.timeout).getMessage();
        return new SynchronizerUnavailableException(what + " " + KIND + " '" + name + "': only " + tally.answered()
                + " of " + redlock.nodes.size() + " nodes answered within " + redlock.timeout.toMillis()
                + " ms; a quorum is " + redlock.quorum + detail, first);
    }

    /** One thread's hold: its count (touched only by the owning thread), token and node leases. */
    private final class Hold {
        /** The holding thread: a node's lease registered again ends as abandoned when it ends. */
        final Thread thread;
        final long threadId;
        final String owner;
        final long token;
        final long fixedMillis;
        final long startNanos;
        final Object metric;
        final AtomicBoolean pinned = new AtomicBoolean(true);
        /** Orders the node watchdogs' reports and unlock(): the state changes once, under it. */
        final ReentrantLock books = new ReentrantLock();
        /** Each node's lease, or null where none is registered; written under {@link #books}. */
        final Watchdog.Lease[] leases;
        /**
         * Per node, when the lease its acquisition grant set began ({@link Long#MIN_VALUE}: no grant
         * known, or the node's first lease ended since).
         */
        final AtomicLongArray grantedNanos;
        /** Each node's lease as registered when the hold was booked; written once, under {@link #books}. */
        final Watchdog.Lease[] booked;
        /** null while held; then {@link #RELEASED} or the cause it was lost for; written under {@link #books}. */
        volatile Object state;
        volatile int count = 1;

        Hold(long threadId, String owner, long token, long fixedMillis, long startNanos, Object metric, int nodes) {
            this.thread = Thread.currentThread();
            this.threadId = threadId;
            this.owner = owner;
            this.token = token;
            this.fixedMillis = fixedMillis;
            this.startNanos = startNanos;
            this.metric = metric;
            this.leases = new Watchdog.Lease[nodes];
            this.grantedNanos = new AtomicLongArray(nodes);
            this.booked = new Watchdog.Lease[nodes];
        }

        boolean fixed() {
            return fixedMillis > 0;
        }

        /**
         * Counts a grant whose reply came after the acquisition was decided, from when it was sent,
         * unless the node's lease has ended since: then only a renewal counts.
         */
        void lateGrant(int index, long sentNanos) {
            books.lock();
            try {
                if (state == null && leases[index] != null && leases[index] == booked[index]) {
                    grantedNanos.set(index, sentNanos);
                }
            } finally {
                books.unlock();
            }
        }

        /**
         * Whether node {@code index} may have this hold: its grant is known (on time or late), or a
         * renewal there succeeded within the lease (renewed, or taken back).
         */
        boolean mayHaveBeenOn(int index) {
            Watchdog.Lease lease = leases[index];
            return grantedNanos.get(index) != Long.MIN_VALUE || lease == null
                    || System.nanoTime() - lease.renewedNanos() < TimeUnit.MILLISECONDS.toNanos(redlock.leaseMillis);
        }

        String[] itemArgs() {
            return new String[] {owner, Long.toString(token)};
        }

        /** Whether a fixed lease is over by the local clock, less the drift allowance. */
        boolean expiredByClock() {
            return fixed() && System.nanoTime() - startNanos
                    >= TimeUnit.MILLISECONDS.toNanos(fixedMillis - redlock.driftMillis(fixedMillis));
        }

        /** The reason the hold is over, or null while it is believed held (or was released). */
        LostHold.Cause endedBecause() {
            if (state instanceof LostHold.Cause cause) {
                return cause;
            }
            return expiredByClock() ? LostHold.Cause.LEASE_EXPIRED : null;
        }

        /**
         * Ends the hold once: as released ({@code cause} null) or lost.
         *
         * @return true if it was still held
         */
        boolean end(LostHold.Cause cause) {
            books.lock();
            try {
                if (state != null) {
                    return false;
                }
                state = cause == null ? RELEASED : cause;
                return true;
            } finally {
                books.unlock();
            }
        }
    }

    private static final Object RELEASED = new Object();
}
