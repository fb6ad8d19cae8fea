package dev.synchronizers.redis.lock;

import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.Attempt;
import dev.synchronizers.redis.client.LocalLine;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.client.QueuePlace;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.ReadWriteLockSnapshot;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.AcquireReply;
import dev.synchronizers.redis.script.ForceReply;
import dev.synchronizers.redis.script.HandoverReply;
import dev.synchronizers.redis.script.LockPicture;
import dev.synchronizers.redis.script.ReadWriteLockPicture;
import dev.synchronizers.redis.script.ReleaseReply;
import dev.synchronizers.redis.script.RenewReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.wakeup.WakeupMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 */
public final class ServerLockBackend extends LockBackend {

    private static final Logger log = LoggerFactory.getLogger(ServerLockBackend.class);
    /**
     * How many hand-overs within this client may follow each other while waiters of other clients
     * are marked, before a release gives them a chance (see {@link #handOver}).
     */
    public static final int MAX_LOCAL_STREAK = 8;

    private final LockPolicy policy;
    private final Machinery machinery;
    /** Hand-overs in a row within this client while others were marked as waiting. */
    private final AtomicInteger localStreak = new AtomicInteger();
    /** The other half of a read-write lock, which a force frees too; otherwise null. */
    private volatile ServerLockBackend otherHalf;
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
    /**
     * This client's cache of the lock, if the client caches non-fair locks
     * ({@code RedisSynchronizers.Builder.lockCaching}); otherwise null.
     */
    private final LockCache cache;

    ServerLockBackend(String name, LockPolicy policy, LockKeys keys, Machinery machinery) {
        // Readers are woken all at once, on the lock's channel; everyone else by name, on its client's.
        super(name, policy.kind, keys, machinery, policy.localQueue, policy == LockPolicy.READ ? keys.wakeups()
                : keys.clientWakeups(machinery.clientId));
        this.policy = policy;
        this.machinery = machinery;
        this.cache = policy == LockPolicy.NONFAIR && machinery.lockCaching ? new LockCache(name, keys, machinery, meters, () -> acquirer.wakeHead())
                : null;
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
        // A try that would wait puts the waiter in line if it fails; one that would not leaves no trace.
        Script firstTry = barging || timeoutNanos <= 0 && policy == LockPolicy.NONFAIR ? policy.tryOnce
                : policy.firstTry;
        long leaseMillis = fixedLeaseMillis > 0 ? fixedLeaseMillis : machinery.leaseMillis;
        // A take as the cache that Redis refused is this acquisition's first try: not sent twice.
        LockCache.Refusal[] refused = new LockCache.Refusal[1];
        if (cache != null && !forHandle && fixedLeaseMillis == 0) {
            // Cached: taken locally if idle; otherwise, with nothing cached, nobody of this client
            // holding or waiting, and no recent ask, taken in Redis as the client's cache
            // (docs/design/lock-caching.md). Otherwise a plain hold, as without caching.
            LockCache.Take take;
            try {
                take = cache.tryTake();
            } catch (RuntimeException e) {
                // A reservation that went unanswered gave the cache back: threads that waited
                // locally while it was held for the reservation try again now, not after a lease.
                acquirer.wakeHead();
                throw e;
            }
            if (take == null && !cache.present() && cache.mayCache() && acquirer.localWaiters() == 0
                    && !holds.anyLive()) {
                try {
                    take = cache.takeInRedis(refusal -> refused[0] = refusal);
                } finally {
                    if (take == null) {
                        // Threads that found it being taken wait locally: they try again now.
                        acquirer.wakeHead();
                    }
                }
            }
            if (take != null) {
                book.accept(take);
                return true;
            }
        }
        if (forHandle) {
            return acquireInRedis(-1, machinery.newAttempt(), firstTry, timeoutNanos, interruptible, fixedLeaseMillis,
                    leaseMillis, null, book);
        }
        String owner = machinery.currentOwner();
        giveBackOrder.lock();
        try {
            acquiring.add(threadId);
        } finally {
            giveBackOrder.unlock();
        }
        try {
            return acquireInRedis(threadId, owner, firstTry, timeoutNanos, interruptible, fixedLeaseMillis,
                    leaseMillis, refused[0], book);
        } finally {
            acquiring.remove(threadId);
        }
    }

    /**
     * Waits for the lock in Redis and books the hold; with replica acknowledgement, gives back and
     * tries again, within the wait, a hold fewer replicas acknowledged than asked.
     */
    private boolean acquireInRedis(long threadId, String owner, Script firstTry, long timeoutNanos,
            boolean interruptible, long fixedLeaseMillis, long leaseMillis, LockCache.Refusal refused,
            Consumer<Grant> book) throws InterruptedException {
        Waiter[] last = new Waiter[1];
        Attempt attempt = machinery.acquireCounted(timeoutNanos, interruptible, new Machinery.Countable() {
            @Override
            public Attempt acquire(long remainingNanos) throws InterruptedException {
                Waiter waiter = new Waiter(threadId, owner, firstTry, leaseMillis, fixedLeaseMillis > 0);
                if (last[0] == null) {
                    waiter.pretried = refused;
                }
                last[0] = waiter;
                return acquirer.acquire(waiter, waiter, owner, remainingNanos, interruptible);
            }

            @Override
            public boolean counts(Attempt acquired) {
                if (last[0].cacheTake != null) {
                    return true;   // taken from this client's cache: no write of its own to replicate
                }
                return machinery.replicated(acquired.sentNanos(), policy.renew, keys.keysFor(policy.renew),
                        Long.toString(leaseMillis), owner, Long.toString(acquired.fencingToken()));
            }

            @Override
            public void giveBack(Attempt acquired) {
                giveBackUnreplicated(owner, acquired.fencingToken());
            }
        });
        if (!attempt.acquired()) {
            return false;
        }
        if (last[0] != null && last[0].cacheTake != null) {
            book.accept(last[0].cacheTake);
            return true;
        }
        long sentNanos = attempt.sentNanos();
        long token = attempt.fencingToken();
        book.accept(new Grant() {
            @Override
            public String owner() {
                return owner;
            }

            @Override
            public long token() {
                return token;
            }

            @Override
            public HoldLease start(Consumer<LostHold.Cause> onLost) {
                // A thread's hold ends as abandoned with its thread; a handle's is the client's.
                return machinery.watchdog.register(new Renewal(policy.renew, keys.keysFor(policy.renew),
                        new String[] {owner, Long.toString(token)}, fixedLeaseMillis, sentNanos,
                        threadId >= 0 ? Thread.currentThread() : null, onLost, null, null));
            }
        });
        machinery.registeredAfterCheck(sentNanos);
        return true;
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
            machinery.followUps.retryUntil(Script.LOCK_GIVE_BACK, what,
                    () -> unlessTaken(threadId, () -> giveBackCommand(owner)),
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
        if (threadId < 0) {
            // A handle's acquisition: its owner string names nothing else.
            return send.get();
        }
        giveBackOrder.lock();
        try {
            return holds.containsThread(threadId) || acquiring.contains(threadId)
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
    private final class Waiter implements Acquirer.Step, LocalLine.Participant {
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
        /** What a try took from this client's cache, if it did; booked instead of a hold in Redis. */
        private LockCache.Take cacheTake;
        /**
         * A take as the cache that Redis refused just before this wait: its first try, not sent
         * again; and the cacher it asked, not asked again by the try right after it (later tries
         * ask again, and the cacher's renewal is the backstop of a lost ask).
         */
        private LockCache.Refusal pretried;
        private String askedJustNow = "";

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
            LockCache.Refusal refusal = pretried;
            pretried = null;
            String alreadyAsked = askedJustNow;
            askedJustNow = "";
            if (refusal != null && !subscribed && !mustTryFirst()) {
                askedJustNow = refusal.askedCacher();
                return refusal.asTry();
            }
            Script script = subscribed ? policy.subscribedTry : firstTry;
            long sent = System.nanoTime();
            if (cache != null) {
                Attempt cached = attemptCache(sent);
                if (cached != null) {
                    return cached;
                }
            }
            String[] args;
            if (script == Script.LOCK_ACQUIRE_WAITING) {
                // The client's waiters, this one among them, for other clients' snapshots; counted
                // until this waiter's next try is due, which a reply may delay by a command timeout.
                args = new String[] {owner, lease, Integer.toString(Math.max(1, acquirer.localWaiters())),
                        Long.toString(machinery.timeout.toMillis()), Long.toString(machinery.leaseMillis)};
            } else if (script == policy.queuedTry) {
                args = new String[] {owner, lease, Long.toString(machinery.leaseMillis)};
            } else {
                args = new String[] {owner, lease};
            }
            CompletionStage<List<Object>> pending = machinery.scripts.run(script, keys.keysFor(script), args);
            List<Object> reply;
            try {
                reply = machinery.await(pending, "acquire " + kind + " '" + name + "'");
            } catch (SynchronizerUnavailableException e) {
                if (threadId >= 0) {
                    acquireInDoubt.add(threadId);
                }
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
            AcquireReply decoded = AcquireReply.of(script, reply);
            // Another client caches it: tell it (the try's waiting mark is the ask; this is its message).
            if (!decoded.cacher().equals(alreadyAsked) && machinery.askBack(decoded.cacher(), keys.lock())) {
                meters.askSent();
            }
            Attempt attempt = Attempt.of(decoded, sent);
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

        /**
         * A try while this client caches the lock: a take from the cache if it is idle; otherwise
         * the wait is local (its holder's release wakes this waiter), since a try in Redis would
         * find this client's own cache. A fixed-lease or handle waiter, which does not use the cache,
         * has an idle cache given back first and then tries in Redis. Null: nothing cached, try in Redis.
         */
        private Attempt attemptCache(long sent) {
            if (!fixedLease && threadId >= 0) {
                LockCache.Take take = cache.tryTake();
                if (take != null) {
                    cacheTake = take;
                    return new Attempt(true, take.token(), 0, sent);
                }
            } else {
                cache.giveBackIfIdle();
            }
            return cache.present() ? new Attempt(false, -1, machinery.leaseMillis, sent) : null;
        }

        @Override
        public boolean mustTryFirst() {
            return threadId >= 0 && acquireInDoubt.contains(threadId);
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
            return holds.anyLive();
        }

        @Override
        public void waiting(WakeupDispatcher.Subscription subscription) {
            if (place != null) {
                place.waiting(subscription);
            }
        }

        @Override
        public void leaveRedisLine() {
            if (place != null) {
                place.leave();
            }
        }

        @Override
        public void handoverInDoubt() {
            handoverInDoubt = true;
        }

        @Override
        public void done(boolean acquired) {
            if (place != null) {
                // Taken from this client's cache: the hold is the cache's, so a place this waiter
                // took in line is left like that of a waiter that gave up (nothing of its own to give back).
                place.done(acquired && cacheTake == null);
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
        machinery.followUps.send(policy.release, "release of " + kind + " '" + name + "'",
                () -> releaseCommand(owner, token),
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
    }

    private CompletionStage<List<Object>> releaseCommand(String owner, long token) {
        return machinery.scripts.run(policy.release, keys.keysFor(policy.release), owner, Long.toString(token));
    }

    /* --------------- handles: verify, relet --------------- */

    /** One read-only script call: the lock's picture (both halves' for a read-write lock) names the hold. */
    @Override
    public boolean stillHeld(Holds.Hold held) {
        String what = "verify " + kind + " '" + name + "'";
        if (policy == LockPolicy.READ || policy == LockPolicy.WRITE) {
            ReadWriteLockPicture picture = ReadWriteLockPicture.of(Script.RW_SNAPSHOT, machinery.await(
                    machinery.scripts.run(Script.RW_SNAPSHOT, keys.keysFor(Script.RW_SNAPSHOT)), what));
            if (policy == LockPolicy.READ) {
                return picture.readers().stream()
                        .anyMatch(reader -> reader.owner().equals(held.owner) && reader.token() == held.token);
            }
            return picture.writers().stream()
                    .anyMatch(writer -> writer.owner().equals(held.owner) && writer.token() == held.token);
        }
        LockPicture picture = LockPicture.of(Script.LOCK_SNAPSHOT, machinery.await(
                machinery.scripts.run(Script.LOCK_SNAPSHOT, keys.keysFor(Script.LOCK_SNAPSHOT)), what));
        return picture.holders().stream()
                .anyMatch(holder -> holder.owner().equals(held.owner)
                        && Long.toString(holder.token()).equals(held.checkToken));
    }

    /** One call of the renew script with the new lease, token-checked as every renewal is. */
    @Override
    public HoldLease relet(Holds.Hold held, long millis, Consumer<LostHold.Cause> onLost) {
        long sent = System.nanoTime();
        String[] itemArgs = {held.owner, Long.toString(held.token)};
        List<Object> reply = machinery.await(machinery.scripts.run(policy.renew, keys.keysFor(policy.renew),
                Long.toString(millis), itemArgs[0], itemArgs[1]), "set the lease of " + kind + " '" + name + "'");
        if (RenewReply.of(policy.renew, reply, 1).outcome(0) != RenewReply.Outcome.RENEWED) {
            machinery.watchdog.declareLost((Watchdog.Lease) held.lease, LostHold.Cause.GONE);
            return null;
        }
        if (!machinery.watchdog.unregister((Watchdog.Lease) held.lease)) {
            return null;   // reported lost meanwhile: its owner was told so already
        }
        return machinery.watchdog.register(new Renewal(policy.renew, keys.keysFor(policy.renew), itemArgs, millis,
                sent, null, onLost, null, null));
    }

    @Override
    public void declareLost(HoldLease lease, LostHold.Cause cause) {
        if (lease instanceof LockCache.Take take) {
            cache.declareLost(take, cause);
            return;
        }
        machinery.watchdog.declareLost((Watchdog.Lease) lease, cause);
    }

    /* --------------- release --------------- */

    @Override
    public boolean endLease(HoldLease lease) {
        if (lease instanceof LockCache.Take take) {
            // The cache's own lease goes on; release() decides whether the cache stays.
            return take.endedBecause() == null;
        }
        return machinery.watchdog.unregister((Watchdog.Lease) lease);
    }

    @Override
    void unlockedLost(Holds.Hold held, LostHold.Cause cause) {
        if (cause == LostHold.Cause.UNRENEWABLE) {
            // Redis may still have it: do not leave it to run out if it can be ended now.
            releaseQuietly(held.owner, held.token);
        }
    }

    @Override
    public LostHold.Cause release(long threadId, Holds.Hold held) {
        machinery.checkOpen();
        if (held.lease instanceof LockCache.Take take) {
            // Kept as an idle cache (no round trip) unless asked back; the local head takes it next.
            try {
                return cache.release(take);
            } finally {
                acquirer.wakeHead();
            }
        }
        if (policy.localQueue) {
            LocalLine.Handover next = localStreak.get() < MAX_LOCAL_STREAK ? acquirer.line().reserveHead() : null;
            if (next != null) {
                return handOver(held, next);
            }
        }
        if (policy.localQueue) {
            localStreak.set(0);
        }
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
            return lostAtUnlock(held);
        }
        wakeLocally(release);
        return null;
    }

    /**
     * Ends this thread's hold by handing the lock to the first local waiter, reserved while idle,
     * in one script call (lock-handover.lua): a new hold with a new token, without the head's own
     * round trip. Counts the streak of hand-overs while other waiters are marked, so that
     * {@link #MAX_LOCAL_STREAK} of them in a row are followed by a real release.
     */
    private LostHold.Cause handOver(Holds.Hold held, LocalLine.Handover next) {
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
            acquirer.line().settleInDoubt(next);
            if (e instanceof SynchronizerUnavailableException) {
                retryRelease(held);
            }
            throw e;
        }
        HandoverReply handover = HandoverReply.of(Script.LOCK_HANDOVER, reply);
        if (!handover.handedOver()) {
            acquirer.line().settle(next, null);
            return lostAtUnlock(held);
        }
        if (handover.waitingMarked()) {
            localStreak.incrementAndGet();
        } else {
            localStreak.set(0);
        }
        acquirer.line().settle(next, new WakeupMessage.LocalHandover(handover.token(), sent).encode());
        return null;
    }

    /**
     * Ends, as soon as Redis is back, a hold whose release could not be sent: left in Redis it
     * would keep everyone out for a whole lease, even this thread's own local queue. Retried until
     * Redis answers or the lease is over; token-checked, so always safe.
     */
    private void retryRelease(Holds.Hold held) {
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(held.lease.fixed() ? held.lease.fixedMillis() : machinery.leaseMillis);
        machinery.followUps.retryUntil(policy.release, "release of " + kind + " '" + name + "'",
                () -> releaseCommand(held.owner, held.token), System.nanoTime() + leaseNanos);
    }

    /** Why Redis no longer had a hold when unlock() came. */
    private static LostHold.Cause lostAtUnlock(Holds.Hold held) {
        return held.lease.endedBecause() == LostHold.Cause.LEASE_EXPIRED
                ? LostHold.Cause.LEASE_EXPIRED
                : LostHold.Cause.GONE;
    }

    /**
     * Tells this client's waiters what the release did for them, at once rather than when the
     * published message comes back: the fair waiter it handed the lock to (with the token), or
     * the local queue's head. A waiter of another client is not here and hears it from Redis.
     */
    private void wakeLocally(ReleaseReply released) {
        String woken = released.woken();
        if (released.handedOver()) {
            machinery.wakeups.wake(keys.clientWakeups(machinery.clientId),
                    WakeupMessage.granted(woken, String.valueOf(released.grantedToken())).encode());
        } else if (woken.equals(WakeupMessage.RELEASED)) {
            machinery.wakeups.wake(keys.wakeups(), woken);
        } else if (!woken.isEmpty()) {
            machinery.wakeups.wake(keys.clientWakeups(machinery.clientId), woken);
        }
        // The local line's first waiter tries now: it takes a free lock, or takes its place in
        // Redis's line behind the client the lock was handed to (not handed over to it locally
        // when a streak of local hand-overs ended, so that other clients get their turn).
        if (woken.isEmpty() || released.handedOver() && policy.localQueue) {
            acquirer.wakeHead();
        }
    }

    @Override
    void releaseForReal(Holds.Hold held) {
        if (held.lease instanceof LockCache.Take take) {
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
                queued += waiting.count();   // this client's own line is counted live, below
            }
        }
        queued += acquirer.localWaiters();
        return new LockSnapshot(name, holders, (int) Math.min(Integer.MAX_VALUE, queued));
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
