package dev.synchronizers.redis;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.ReadWriteLockSnapshot;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.AcquireReply;
import dev.synchronizers.redis.script.HandoverReply;
import dev.synchronizers.redis.script.LockPicture;
import dev.synchronizers.redis.script.ReadWriteLockPicture;
import dev.synchronizers.redis.script.ReleaseReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.wakeup.WakeupMessage;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reentrant lock behind {@link dev.synchronizers.Synchronizers#lock(String)} (non-fair) and
 * {@link dev.synchronizers.Synchronizers#fairLock(String)} (fair); the {@link LockPolicy} says which.
 *
 * <p>A hold is owned by one thread of one client: the owner string is {@code <client-id>:<thread-id>}.
 * Reentrancy is counted in this object ({@link Hold}); Redis sees only the first acquisition,
 * which issues the fencing token, and the last release.
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
 * <p>A hold without a lease time is renewed by the client's watchdog; one with a lease time is
 * not, and ends with its lease. A hold that ends without {@link #unlock()} is lost: the lost-hold
 * listeners are told (except for a fixed lease), {@link #isHeldByCurrentThread()} turns false and
 * the next {@code unlock()} throws {@link LostHoldException}; the first local waiter is woken, as
 * an unlock would have. A held lock keeps this object reachable, so that {@code unlock()} finds
 * the hold however the object is reached again; a hold that ended no longer does. Its record stays
 * in this object: {@code unlock()} through it still throws {@code LostHoldException}, but once
 * every reference was dropped and the object collected, {@code unlock()} through a new object for
 * the name throws a plain {@link IllegalMonitorStateException} (never taken through it).
 *
 * <p>A non-fair unlock may hand the lock to the first local waiter in one script call. If that
 * call's reply is lost, the waiter finds the outcome with its next try; if it stops first (timed
 * out, interrupted, failed), it gives back what the hand-over may have given it, by owner, which
 * is safe while its thread neither holds nor acquires this lock. A queueing try (fair, write) whose
 * reply is lost may have queued the waiter, so a waiter that stops after one leaves the queue.
 *
 * <p>An uncontended {@code lock()} and {@code unlock()} cost one script call each. Re-entering and
 * the local queries cost none.
 *
 * <h2>Distributed considerations</h2>
 * Because reentrancy is local, a hold count is lost with its process, and Redis cannot tell how
 * deep a holder is; the lease is what frees the lock after a crash. See {@link DistributedLock}
 * for pauses, failover, clocks and fencing tokens.
 */
final class RedisLock implements DistributedLock {

    private static final Logger log = LoggerFactory.getLogger(RedisLock.class);
    /** Longer leases would lose precision in Lua's doubles and overflow Redis's expiry arithmetic. */
    private static final long MAX_LEASE_MILLIS = TimeUnit.DAYS.toMillis(3650);
    /**
     * How many hand-overs within this client may follow each other while waiters of other clients
     * are marked, before a release gives them a chance (see {@link #handOver}).
     */
    static final int MAX_LOCAL_STREAK = 8;

    private final String name;
    private final String kind;
    private final LockPolicy policy;
    private final LockKeys keys;
    private final Machinery machinery;
    private final Acquirer acquirer;
    private final SynchronizerMeters meters;
    /** Hand-overs in a row within this client while others were marked as waiting. */
    private final AtomicInteger localStreak = new AtomicInteger();
    /** What to keep reachable while this lock has holds: itself, or the read-write lock it is half of. */
    private final Object pinTarget;
    /** For a write lock, its read lock, to refuse an upgrade; otherwise null. */
    private volatile RedisLock readHalf;
    /** The other half of a read-write lock, which a force frees too; otherwise null. */
    private volatile RedisLock otherHalf;
    /** This client's holds, by thread id. */
    private final Map<Long, Hold> holds = new ConcurrentHashMap<>();
    /**
     * Threads of this client whose last acquire of this lock went unanswered: it may have taken the
     * lock in Redis, so their next acquire tries before joining the local line (it may be the
     * holder the line waits for). Cleared by the next try that gets an answer.
     */
    private final Set<Long> acquireInDoubt = ConcurrentHashMap.newKeySet();
    /** Threads of this client inside an acquire of this lock, for {@link #giveBack}. */
    private final Set<Long> acquiring = ConcurrentHashMap.newKeySet();
    /** Orders a retried give-back before any acquire that a thread announces after it. */
    private final ReentrantLock giveBackOrder = new ReentrantLock();

    RedisLock(String name, LockPolicy policy, LockKeys keys, Machinery machinery, Object pinTarget) {
        this.name = name;
        this.policy = policy;
        this.kind = policy.kind;
        this.keys = keys;
        this.pinTarget = pinTarget == null ? this : pinTarget;
        this.machinery = machinery;
        this.meters = machinery.metrics.synchronizer(kind.replace(' ', '_'), name);
        this.acquirer = new Acquirer(machinery.wakeups, keys.wakeups(), machinery.leaseMillis, policy.localQueue,
                machinery::checkOpen, meters);
    }

    /** The lock behind {@code lock(name)} or {@code fairLock(name)}. */
    static RedisLock standalone(String name, LockPolicy policy, Machinery machinery) {
        LockKeys keys = policy == LockPolicy.FAIR
                ? LockKeys.fair(machinery.keyPrefix, name)
                : LockKeys.of(machinery.keyPrefix, name);
        return new RedisLock(name, policy, keys, machinery, null);
    }

    /** Makes {@code other} this lock's other half: the two share keys, so a force ends both halves' holds. */
    void pairWith(RedisLock other) {
        this.otherHalf = other;
    }

    /** Makes this write lock refuse to be taken by a thread that holds only {@code read}. */
    void refuseUpgradeFrom(RedisLock read) {
        this.readHalf = read;
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

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        acquireUninterruptibly(leaseMillis(leaseTime, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(policy.firstTry, Acquirer.FOREVER, true, 0);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(policy.tryOnce, 0, false, 0);
        } catch (InterruptedException e) {
            throw new AssertionError("a single attempt does not wait", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(policy.firstTry, unit.toNanos(time), true, 0);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long leaseMillis = leaseMillis(leaseTime, unit);
        return acquire(policy.firstTry, unit.toNanos(waitTime), true, leaseMillis);
    }

    private void acquireUninterruptibly(long fixedLeaseMillis) {
        try {
            acquire(policy.firstTry, Acquirer.FOREVER, false, fixedLeaseMillis);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait threw InterruptedException", e);
        }
    }

    /**
     * Acquires for the current thread.
     *
     * @param firstTry the script of the first try: the policy's, or the barging one for {@code tryLock()}
     * @param fixedLeaseMillis the lease of a fresh hold, or 0 for a watchdog-renewed one
     */
    private boolean acquire(Script firstTry, long timeoutNanos, boolean interruptible, long fixedLeaseMillis)
            throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        long threadId = Machinery.currentThreadId();
        Hold held = holds.get(threadId);
        if (held != null && held.lease.endedBecause() == LostHold.Cause.LEASE_EXPIRED) {
            // The fixed lease the caller chose is over: the hold has ended, so this is a fresh start.
            machinery.watchdog.unregister(held.lease);
            forget(threadId, held);
            held = null;
        }
        if (held != null) {
            LostHold.Cause ended = held.lease.endedBecause();
            if (ended != null) {
                throw lost(ended, "cannot re-enter");
            }
            if (held.count == Integer.MAX_VALUE) {
                throw new Error("Maximum lock count exceeded");
            }
            held.count++;
            return true;
        }
        RedisLock read = readHalf;
        if (read != null && read.getHoldCount() > 0) {
            // Two readers upgrading would each wait for the other to leave: refuse rather than hang.
            if (timeoutNanos == Acquirer.FOREVER) {
                throw new IllegalMonitorStateException(kind + " '" + name + "': upgrade from the read lock to the"
                        + " write lock is not supported; release the read lock first");
            }
            return false;
        }
        machinery.checkOpen();
        String owner = machinery.currentOwner();
        long leaseMillis = fixedLeaseMillis > 0 ? fixedLeaseMillis : machinery.leaseMillis;
        giveBackOrder.lock();
        try {
            acquiring.add(threadId);
        } finally {
            giveBackOrder.unlock();
        }
        try {
            return meters.timed(() -> acquireInRedis(threadId, owner, firstTry, timeoutNanos, interruptible,
                    fixedLeaseMillis, leaseMillis));
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        } finally {
            acquiring.remove(threadId);
        }
    }

    /**
     * Waits for the lock in Redis and books the hold; with replica acknowledgement, gives back and
     * tries again, within the wait, a hold fewer replicas acknowledged than asked.
     */
    private boolean acquireInRedis(long threadId, String owner, Script firstTry, long timeoutNanos,
            boolean interruptible, long fixedLeaseMillis, long leaseMillis) throws InterruptedException {
        long waitStart = System.nanoTime();
        Attempt attempt;
        int shortRounds = 0;
        while (true) {
            long remaining = timeoutNanos == Acquirer.FOREVER || timeoutNanos <= 0
                    ? timeoutNanos
                    : Math.max(1, timeoutNanos - (System.nanoTime() - waitStart));
            attempt = acquirer.acquire(new Waiter(threadId, owner, firstTry, leaseMillis, fixedLeaseMillis > 0),
                    owner, remaining, interruptible);
            if (!attempt.acquired()) {
                return false;
            }
            boolean replicated;
            try {
                replicated = machinery.replicated(attempt.sentNanos(), policy.renew, keys.keysFor(policy.renew),
                        Long.toString(leaseMillis), owner, Long.toString(attempt.fencingToken()));
            } catch (RuntimeException e) {
                // Not known to be on the replicas: never the caller's.
                giveBackUnreplicated(owner, attempt.fencingToken());
                throw e;
            }
            if (replicated) {
                break;
            }
            // Granted by a server the client now knows is no longer the master, or fewer replicas
            // have it than asked (a failover now could forget it). Not acquired: give it back, and
            // try again while the caller's wait lasts, after a pause if replicas fell short.
            giveBackUnreplicated(owner, attempt.fencingToken());
            if (timeoutNanos != Acquirer.FOREVER
                    && (timeoutNanos <= 0 || System.nanoTime() - waitStart >= timeoutNanos)) {
                return false;
            }
            machinery.pauseAfterShortAcks(++shortRounds, waitStart + timeoutNanos, timeoutNanos == Acquirer.FOREVER,
                    interruptible);
            if (timeoutNanos != Acquirer.FOREVER && System.nanoTime() - waitStart >= timeoutNanos) {
                return false;
            }
        }
        Hold hold = new Hold(owner, attempt.fencingToken(), meters.holdStarted());
        // Pinned before the watchdog knows it, so that its end, however soon, finds it pinned.
        machinery.pin(pinTarget);
        hold.lease = machinery.watchdog.register(policy.renew, keys.keysFor(policy.renew),
                new String[] {owner, Long.toString(hold.token)}, fixedLeaseMillis, attempt.sentNanos(),
                cause -> onLost(threadId, hold, cause));
        holds.put(threadId, hold);
        machinery.registeredAfterCheck(attempt.sentNanos());
        return true;
    }

    /**
     * Told by the watchdog, on its thread, that a hold ended without unlock() (its fixed lease ran
     * out, it was forced, lost or abandoned). The hold stops pinning this object, so a lock that is
     * never unlocked can still be collected; its record stays, so that the owner's unlock() through
     * this object throws as documented. A local waiter that left asking Redis to the holder is
     * woken, since no unlock() will wake it.
     */
    private void onLost(long threadId, Hold hold, LostHold.Cause cause) {
        machinery.listeners.report(new LostHold(name, kind, threadId, hold.token, cause));
        if (cause == LostHold.Cause.ABANDONED) {
            forget(threadId, hold);
        } else {
            unpin(hold, false);
        }
        acquirer.wakeHead();
    }

    /** Drops a hold that ended without unlock() from this JVM's books and stops it pinning this object. */
    private void forget(long threadId, Hold hold) {
        holds.remove(threadId, hold);
        unpin(hold, false);
    }

    /**
     * Ends a hold here, once, whether it ends by unlock() or by the watchdog: it stops pinning this
     * object and counting as held.
     *
     * @param released whether unlock() ended it while it was not known lost, for the hold timer
     */
    private void unpin(Hold hold, boolean released) {
        if (hold.pinned.compareAndSet(true, false)) {
            machinery.unpin(pinTarget);
            meters.holdEnded(hold.metric, released);
        }
    }

    /**
     * Gives back whatever hold Redis may have handed {@code owner} without anyone learning it (a
     * hand-over whose reply was lost), by owner since its token is unknown. Sent at once by the
     * waiter that stopped; if Redis does not answer, retried while it may matter, but only while
     * the owner's thread neither holds nor acquires this lock: a hold of its owner is then one
     * nobody knows of, so the give-back cannot end a hold in use. A thread that acquires again
     * meanwhile makes the retry needless: its acquire takes such a hold over.
     */
    private void giveBack(long threadId, String owner) {
        String what = "give back " + kind + " '" + name + "' after a hand-over in doubt";
        machinery.metrics.followUp(Recorder.FollowUp.GIVE_BACK);
        try {
            machinery.<Long>await(giveBackCommand(owner), what);
        } catch (RuntimeException e) {
            log.debug("{}: could not give back; retrying while the thread neither holds nor acquires it: {}", what,
                    e.toString());
            machinery.watchdog.retryUntil(what, () -> unlessTaken(threadId, () -> giveBackCommand(owner)),
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
        }
    }

    /**
     * Sends a retried follow-up named by owner (a give-back, a fair leave) only while the owner's
     * thread neither holds nor acquires this lock: then a hold of that owner in Redis is one nobody
     * knows of. Checked and sent under the lock an acquire takes to announce itself, so that the
     * follow-up reaches Redis before any acquire the thread sends later.
     */
    private CompletionStage<?> unlessTaken(long threadId, Supplier<CompletionStage<?>> send) {
        giveBackOrder.lock();
        try {
            return holds.containsKey(threadId) || acquiring.contains(threadId)
                    ? CompletableFuture.completedFuture(0L)
                    : send.get();
        } finally {
            giveBackOrder.unlock();
        }
    }

    private CompletionStage<Long> giveBackCommand(String owner) {
        return machinery.scripts.run(Script.LOCK_GIVE_BACK, keys.keysFor(Script.LOCK_GIVE_BACK), owner);
    }

    /** One thread's acquisition: its tries, and for the fair lock its place in the queue. */
    private final class Waiter implements Acquirer.Step {
        private final long threadId;
        private final String owner;
        private final Script firstTry;
        private final String lease;
        private final boolean fixedLease;
        private final QueuePlace place;
        /** The highest grant floor a queueing try of this wait was told; grants at or below it are old. */
        private long grantFloor = -1;
        /**
         * Set when a neighbour's hand-over to this waiter may have happened unseen, cleared by the
         * next try that gets an answer: one sent after the hand-over sees its outcome.
         */
        private volatile boolean handoverInDoubt;

        Waiter(long threadId, String owner, Script firstTry, long leaseMillis, boolean fixedLease) {
            this.threadId = threadId;
            this.owner = owner;
            this.firstTry = firstTry;
            this.lease = Long.toString(leaseMillis);
            this.fixedLease = fixedLease;
            this.place = policy.leave != null
                    ? new QueuePlace(machinery, owner, Script.FAIR_LOCK_RENEW_PLACE,
                            keys.keysFor(Script.FAIR_LOCK_RENEW_PLACE), policy.leave,
                            keys.keysFor(policy.leave), kind + " '" + name + "'")
                    : null;
            if (place != null) {
                place.guardRetries(send -> unlessTaken(threadId, send));
            }
        }

        @Override
        public Attempt attempt(boolean subscribed) {
            machinery.checkOpen();
            Script script = subscribed ? policy.subscribedTry : firstTry;
            long sent = System.nanoTime();
            String[] args;
            if (script == policy.queuedTry) {
                args = new String[] {owner, lease, Long.toString(machinery.leaseMillis)};
            } else if (script == Script.LOCK_ACQUIRE_WAITING) {
                // The client's waiters, this one among them, for other clients' snapshots; counted
                // until this waiter's next try is due, which a reply may delay by a command timeout.
                args = new String[] {owner, lease, Integer.toString(Math.max(1, acquirer.localWaiters())),
                        Long.toString(machinery.timeout.toMillis())};
            } else {
                args = new String[] {owner, lease};
            }
            CompletionStage<List<Object>> pending = machinery.scripts.run(script, keys.keysFor(script), args);
            List<Object> reply;
            try {
                reply = machinery.await(pending, "acquire " + kind + " '" + name + "'");
            } catch (SynchronizerUnavailableException e) {
                acquireInDoubt.add(threadId);
                undoIfAcquired(pending, script, owner);
                if (script == policy.queuedTry) {
                    // It may have queued the waiter, now or when it runs late: done(false) leaves,
                    // after it in Redis since commands of one connection run in order.
                    place.queued(sent);
                }
                throw e;
            }
            handoverInDoubt = false;
            acquireInDoubt.remove(threadId);
            Attempt attempt = Attempt.of(AcquireReply.of(script, reply), sent);
            if (!attempt.acquired() && script == policy.queuedTry) {
                place.queued(sent);
                grantFloor = Math.max(grantFloor, attempt.fencingToken());
            }
            return attempt;
        }

        /**
         * A fair release handed the lock to this waiter, with a new token, leased as the waiter's
         * place was: it holds it from then on, which the waiter's place last confirmed was later
         * than. The message names the thread, not this wait, so one that took long to arrive may
         * be meant for an earlier wait of the thread: its token is then at or below the floor this
         * wait was told, and a try settles what the thread holds. A fixed lease takes the lock
         * afresh with a try too, to lease it as asked.
         */
        @Override
        public Attempt granted(String detail) {
            Optional<WakeupMessage.LocalHandover> handover = WakeupMessage.LocalHandover.parse(detail);
            if (handover.isPresent()) {
                // Handed over by a neighbour in this client (lock-handover.lua), with its token.
                return new Attempt(true, handover.get().token(), 0, handover.get().sentNanos());
            }
            long token = detail.isEmpty() ? -1 : Long.parseLong(detail);
            if (fixedLease || token <= grantFloor) {
                return attempt(true);
            }
            return new Attempt(true, token, 0, place.queuedSinceAtLeast());
        }

        @Override
        public boolean mustTryFirst() {
            return acquireInDoubt.contains(threadId);
        }

        /** A non-fair waiter with the client's lease can take a neighbour's hand-over. */
        @Override
        public String handoverOwner() {
            return policy.localQueue && !fixedLease ? owner : null;
        }

        @Override
        public boolean firstTryRegisters() {
            // The fair, read and write tries record the waiter in Redis (queue place, waiting mark);
            // the non-fair first try leaves no trace on purpose.
            return firstTry == policy.subscribedTry;
        }

        @Override
        public boolean heldLocally() {
            for (Hold held : holds.values()) {
                if (held.lease.endedBecause() == null) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void waiting(WakeupDispatcher.Subscription subscription) {
            if (place != null) {
                place.waiting(subscription);
            }
        }

        @Override
        public void handoverInDoubt() {
            handoverInDoubt = true;
        }

        @Override
        public void done(boolean acquired) {
            if (place != null) {
                place.done(acquired);
            }
            if (!acquired && handoverInDoubt) {
                giveBack(threadId, owner);
            }
        }
    }

    /**
     * Releases, by token, a hold that fewer replicas acknowledged than the client asks: it was
     * never given to the caller. Retried in the background if Redis does not answer.
     */
    private void giveBackUnreplicated(String owner, long token) {
        log.debug("{} '{}': acquired, but from a master that was switched away from, or acknowledged by fewer"
                + " replicas than asked; giving it back", kind, name);
        try {
            machinery.await(releaseCommand(owner, token), "give back " + kind + " '" + name + "'");
        } catch (SynchronizerUnavailableException e) {
            releaseQuietly(owner, token);
        }
    }

    /**
     * An acquire whose reply the caller stopped waiting for may still take the lock: if its reply
     * arrives after all and says so, that hold is released again (token-checked, so it can never
     * end a newer hold). If it never arrives, the hold expires with its lease.
     */
    private void undoIfAcquired(CompletionStage<List<Object>> pending, Script script, String owner) {
        pending.thenAccept(raw -> {
            AcquireReply reply = AcquireReply.of(script, raw);
            if (reply.acquired()) {
                machinery.metrics.followUp(Recorder.FollowUp.UNDO);
                releaseQuietly(owner, reply.token());
            }
        });
    }

    /** Sends a token-checked release and does not wait for it; one that fails is retried until the lease is over. */
    private void releaseQuietly(String owner, long token) {
        releaseCommand(owner, token).whenComplete((reply, failure) -> {
            if (failure != null) {
                machinery.watchdog.retryUntil("release of " + kind + " '" + name + "'",
                        () -> releaseCommand(owner, token),
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
            }
        });
    }

    private CompletionStage<List<Object>> releaseCommand(String owner, long token) {
        return machinery.scripts.run(policy.release, keys.keysFor(policy.release), owner, Long.toString(token));
    }

    /* --------------- release --------------- */

    @Override
    public void unlock() {
        long threadId = Machinery.currentThreadId();
        Hold held = holds.get(threadId);
        if (held == null) {
            throw new IllegalMonitorStateException(kind + " '" + name
                    + "': unlock() by a thread that does not hold it (never taken or already released)");
        }
        if (held.count > 1) {
            held.count--;
            LostHold.Cause ended = held.lease.endedBecause();
            if (ended != null) {
                throw lost(ended, "unlock()");
            }
            return;
        }
        holds.remove(threadId, held);
        // A local head that skipped asking Redis because this thread held the lock waits for a
        // wake from here: after the release on success, and on every way out that fails.
        boolean active = machinery.watchdog.unregister(held.lease);
        unpin(held, active && held.lease.endedBecause() == null);
        if (!active) {
            acquirer.wakeHead();
            LostHold.Cause cause = held.lease.endedBecause();
            if (cause == LostHold.Cause.UNRENEWABLE) {
                // Redis may still have it: do not leave it to run out if it can be ended now.
                releaseQuietly(held.owner, held.token);
            }
            throw lost(cause, "unlock()");
        }
        machinery.checkOpen();
        if (policy.localQueue) {
            Acquirer.Handover next = localStreak.get() < MAX_LOCAL_STREAK ? acquirer.reserveHead() : null;
            if (next != null) {
                handOver(threadId, held, next);
                return;
            }
        }
        boolean streakEnded = policy.localQueue && localStreak.getAndSet(0) >= MAX_LOCAL_STREAK;
        List<Object> released;
        machinery.releasing(() -> releaseCommand(held.owner, held.token));
        try {
            released = machinery.await(releaseCommand(held.owner, held.token),
                    "release " + kind + " '" + name + "' (the hold was dropped locally; the release is retried"
                            + " until Redis answers, and the hold expires with its lease at the latest)");
        } catch (RuntimeException e) {
            acquirer.wakeHead();
            if (!(e instanceof SynchronizerUnavailableException)) {
                throw e;
            }
            retryRelease(held);
            throw e;
        }
        ReleaseReply release = ReleaseReply.of(policy.release, released);
        if (!release.released()) {
            acquirer.wakeHead();
            throw lostAtUnlock(threadId, held);
        }
        if (streakEnded) {
            // After a streak of hand-overs within this client, other clients' waiters get a fair
            // chance: the release published to everyone waiting, and the local head hears that
            // message like them instead of being woken first.
            return;
        }
        wakeLocally(release);
    }

    /**
     * Ends this thread's hold by handing the lock to the first local waiter, reserved while idle,
     * in one script call (lock-handover.lua): a new hold with a new token, without the head's own
     * round trip. Counts the streak of hand-overs while other waiters are marked, so that
     * {@link #MAX_LOCAL_STREAK} of them in a row are followed by a real release.
     */
    private void handOver(long threadId, Hold held, Acquirer.Handover next) {
        long sent = System.nanoTime();
        List<Object> reply;
        // Sent again after a switch as a plain release: on a new master that still has this hold.
        machinery.releasing(() -> releaseCommand(held.owner, held.token));
        try {
            // The waiters behind the one handed the lock, for other clients' snapshots.
            String waitersLeft = Integer.toString(Math.max(0, acquirer.localWaiters() - 1));
            reply = machinery.await(machinery.scripts.run(Script.LOCK_HANDOVER, keys.keysFor(Script.LOCK_HANDOVER),
                    held.owner, Long.toString(held.token), next.owner(), Long.toString(machinery.leaseMillis),
                    waitersLeft),
                    "hand " + kind + " '" + name + "' over (the hold was dropped locally; a release is retried"
                            + " until Redis answers, and the hold expires with its lease at the latest)");
        } catch (RuntimeException e) {
            // The head tries for itself: if the hand-over did happen, its try finds it the owner
            // and takes the lock afresh; the token-checked release below is then a no-op. If it
            // stops without a try's answer instead, it gives the lock back (Waiter#done).
            acquirer.settleInDoubt(next);
            if (e instanceof SynchronizerUnavailableException) {
                retryRelease(held);
            }
            throw e;
        }
        HandoverReply handover = HandoverReply.of(Script.LOCK_HANDOVER, reply);
        if (!handover.handedOver()) {
            acquirer.settle(next, null);
            throw lostAtUnlock(threadId, held);
        }
        if (handover.waitingMarked()) {
            localStreak.incrementAndGet();
        } else {
            localStreak.set(0);
        }
        acquirer.settle(next, new WakeupMessage.LocalHandover(handover.token(), sent).encode());
    }

    /**
     * Ends, as soon as Redis is back, a hold whose release could not be sent: left in Redis it
     * would keep everyone out for a whole lease, even this thread's own local queue. Retried until
     * Redis answers or the lease is over; token-checked, so always safe.
     */
    private void retryRelease(Hold held) {
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(held.lease.fixed() ? held.lease.fixedMillis() : machinery.leaseMillis);
        machinery.watchdog.retryUntil("release of " + kind + " '" + name + "'",
                () -> releaseCommand(held.owner, held.token), System.nanoTime() + leaseNanos);
    }

    /** Reports a hold that Redis no longer had when unlock() came, and returns what unlock() throws. */
    private LostHoldException lostAtUnlock(long threadId, Hold held) {
        LostHold.Cause cause = held.lease.endedBecause() == LostHold.Cause.LEASE_EXPIRED
                ? LostHold.Cause.LEASE_EXPIRED
                : LostHold.Cause.GONE;
        machinery.listeners.report(new LostHold(name, kind, threadId, held.token, cause));
        return lost(cause, "unlock()");
    }

    /**
     * Tells this client's waiters what the release did for them, at once rather than when the
     * published message comes back: the fair waiter it handed the lock to (with the token), or
     * the local queue's head. A waiter of another client is not here and hears it from Redis.
     */
    private void wakeLocally(ReleaseReply released) {
        String woken = released.woken();
        if (woken.isEmpty()) {
            acquirer.wakeHead();
        } else if (released.handedOver()) {
            machinery.wakeups.wake(keys.wakeups(),
                    WakeupMessage.granted(woken, String.valueOf(released.grantedToken())).encode());
        } else {
            machinery.wakeups.wake(keys.wakeups(), woken);
        }
    }

    @Override
    public boolean forceUnlock() {
        machinery.checkOpen();
        // Only holds taken before the force can be its victims; one taken right after it is live.
        // A read-write lock's force frees both halves, so both halves' holders are its victims.
        RedisLock other = otherHalf;
        List<Hold> before = List.copyOf(holds.values());
        List<Hold> otherBefore = other == null ? List.of() : List.copyOf(other.holds.values());
        long released = machinery.<Long>await(machinery.scripts.run(policy.forceUnlock, keys.keysFor(policy.forceUnlock)),
                "force-unlock " + kind + " '" + name + "'");
        // This client's own holders learn at once; other clients' at their watchdog's next tick.
        for (Hold held : before) {
            machinery.watchdog.declareLost(held.lease, LostHold.Cause.GONE);
        }
        for (Hold held : otherBefore) {
            machinery.watchdog.declareLost(held.lease, LostHold.Cause.GONE);
        }
        acquirer.wakeHead();
        if (other != null) {
            other.acquirer.wakeHead();
        }
        return released == 1L;
    }

    /* --------------- queries --------------- */

    @Override
    public boolean isLocked() {
        machinery.checkOpen();
        // A read hold counts until its lease ends; one that ended is purged by the next acquire.
        String key = policy == LockPolicy.READ ? keys.readers() : keys.lock();
        return machinery.await(machinery.redis.exists(key), "query " + kind + " '" + name + "'") == 1L;
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
     * One read-only script call: the holders (a read half's are the readers) and the queue
     * estimate; see {@link DistributedLock#getQueueLength()} for what each kind can count.
     */
    @Override
    public LockSnapshot snapshot() {
        machinery.checkOpen();
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
            holders.add(holder(entry.owner(), entry.token(), pttl < 0 ? -1 : pttl));
        }
        for (LockPicture.Waiting waiting : picture.waiting()) {
            if (!machinery.clientId.equals(waiting.client())) {
                queued += waiting.count();   // this client's own line is counted live, below
            }
        }
        queued += acquirer.localWaiters();
        return new LockSnapshot(name, holders, (int) Math.min(Integer.MAX_VALUE, queued));
    }

    /** The read-write lock's picture, for either half; one read-only script call. */
    ReadWriteLockSnapshot readWriteSnapshot() {
        machinery.checkOpen();
        RedisLock read = policy == LockPolicy.READ ? this : otherHalf;
        RedisLock write = policy == LockPolicy.WRITE ? this : otherHalf;
        List<Object> reply = machinery.await(machinery.scripts.run(Script.RW_SNAPSHOT,
                keys.keysFor(Script.RW_SNAPSHOT)), "snapshot read-write lock '" + name + "'");
        ReadWriteLockPicture picture = ReadWriteLockPicture.of(Script.RW_SNAPSHOT, reply);
        long writePttl = picture.writePttl();
        LockSnapshot.Holder writer = null;
        for (ReadWriteLockPicture.Writer entry : picture.writers()) {
            writer = write.holder(entry.owner(), entry.token(), writePttl < 0 ? -1 : writePttl);
        }
        List<LockSnapshot.Holder> readers = new ArrayList<>();
        for (ReadWriteLockPicture.Reader reader : picture.readers()) {
            readers.add(read.holder(reader.owner(), reader.token(), reader.remainingMillis()));
        }
        return new ReadWriteLockSnapshot(name, writer, readers, (int) picture.waitingWriters(),
                picture.readersWaiting());
    }

    /**
     * A holder from its owner string {@code <client-id>:<thread-id>}. Whether its lease is renewed
     * is known only for this client's own holds, from its books.
     */
    private LockSnapshot.Holder holder(String owner, long token, long leaseRemainingMillis) {
        String clientId = Owner.clientOf(owner);
        // -1: an owner another program wrote, with no thread id to show.
        long threadId = Owner.tryParse(owner).map(Owner::threadId).orElse(-1L);
        LockSnapshot.Renewal renewal = LockSnapshot.Renewal.UNKNOWN;
        Hold own = clientId.equals(machinery.clientId) ? holds.get(threadId) : null;
        if (own != null && own.token == token) {
            renewal = own.lease.fixed() ? LockSnapshot.Renewal.FIXED : LockSnapshot.Renewal.RENEWED;
        }
        return new LockSnapshot.Holder(clientId, threadId, token, leaseRemainingMillis, renewal);
    }

    @Override
    public boolean isHeldByCurrentThread() {
        Hold held = holds.get(Machinery.currentThreadId());
        return held != null && held.lease.endedBecause() == null;
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
            throw new IllegalMonitorStateException(kind + " '" + name + "': fencingToken() by a thread that does not hold it");
        }
        return held.token;
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(kind + " '" + name + "': conditions are not supported by distributed locks");
    }

    /** Shows the name and what this JVM knows; makes no network call. */
    @Override
    public String toString() {
        int count = 0;
        for (Hold held : holds.values()) {
            count += held.count;
        }
        String state = count == 0 ? "not held by this JVM" : "held by this JVM: " + count + (count == 1 ? " hold" : " holds");
        return "RedisLock[" + kind + " " + name + ", " + state
                + (acquirer.hasWaiters() ? ", local waiters" : "") + "]";
    }

    /* --------------- helpers --------------- */

    private LostHoldException lost(LostHold.Cause cause, String what) {
        return new LostHoldException(name, cause,
                kind + " '" + name + "': " + what + " failed: the hold was lost: " + LostHoldListeners.describe(cause));
    }

    /**
     * Checks a caller's lease time and returns it in milliseconds: positive, at least 1 ms, at most
     * 3650 days. Shared by every lock that takes one.
     */
    static long leaseMillis(long leaseTime, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        if (leaseTime <= 0) {
            throw new IllegalArgumentException("leaseTime must be > 0: " + leaseTime + " " + unit);
        }
        long millis = unit.toMillis(leaseTime);
        if (millis < 1) {
            throw new IllegalArgumentException("leaseTime must be at least 1 ms: " + leaseTime + " " + unit);
        }
        if (millis > MAX_LEASE_MILLIS) {
            throw new IllegalArgumentException("leaseTime must be at most 3650 days: " + leaseTime + " " + unit);
        }
        return millis;
    }

    /** One thread's hold: its count (touched only by the owning thread), token and lease. */
    private static final class Hold {
        final String owner;
        final long token;
        /** Whether it still keeps its lock object reachable; cleared once, when it ends. */
        final AtomicBoolean pinned = new AtomicBoolean(true);
        /** The hold's handle in the metrics ({@link SynchronizerMeters#holdStarted()}). */
        final Object metric;
        volatile Watchdog.Lease lease;
        volatile int count = 1;

        Hold(String owner, long token, Object metric) {
            this.owner = owner;
            this.token = token;
            this.metric = metric;
        }
    }
}
