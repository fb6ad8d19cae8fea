package dev.synchronizers.redis.lock;

import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.Attempt;
import dev.synchronizers.redis.client.LocalLine;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.client.QueuePlace;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.AcquireReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.wakeup.WakeupMessage;
import dev.synchronizers.redis.watchdog.Renewal;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquire path of a {@link ServerLockBackend}: one thread's wait as tries of its
 * {@link LockPolicy}'s scripts ({@link Waiter}), this client's cache taken first where it may be,
 * replica acknowledgement, and what a try in doubt leaves behind: an acquire whose reply came late
 * is undone, a hand-over nobody learnt of is given back, and a queue place is left.
 */
final class ServerAcquisition {

    // Logged under the backend's name, as before it was split, so that log settings keep working.
    private static final Logger log = LoggerFactory.getLogger(ServerLockBackend.class);

    private final ServerLockBackend backend;
    private final String name;
    private final String kind;
    private final LockKeys keys;
    private final LockPolicy policy;
    private final Machinery machinery;
    private final Holds holds;
    private final Acquirer acquirer;
    private final SynchronizerMeters meters;
    /** This client's cache of the lock, or null (see {@link ServerLockBackend}). */
    private final LockCache cache;
    /** Where a hold that must not be kept is released by token. */
    private final ServerRelease release;
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
     * The highest fencing token a hold of this client on this lock has had (taken, granted or
     * handed over). A grant message names a thread, not one wait of it, so it can reach a later
     * wait of that thread, after the thread held and let go of what it granted: its token is then
     * at or below this, and the wait must not take it for a hold.
     */
    private final AtomicLong highestToken = new AtomicLong(-1);

    ServerAcquisition(ServerLockBackend backend, LockCache cache, ServerRelease release) {
        this.backend = backend;
        this.name = backend.name;
        this.kind = backend.kind;
        this.keys = backend.keys;
        this.policy = backend.policy;
        this.machinery = backend.machinery;
        this.holds = backend.holds;
        this.acquirer = backend.acquirer;
        this.meters = backend.meters;
        this.cache = cache;
        this.release = release;
    }

    /** See {@link ServerLockBackend#acquire}. */
    boolean acquire(long threadId, boolean barging, long timeoutNanos, boolean interruptible, long fixedLeaseMillis,
            boolean forHandle, Consumer<LockBackend.Grant> book) throws InterruptedException {
        // A try that would wait puts the waiter in line if it fails; one that would not leaves no trace.
        Script firstTry = barging || timeoutNanos <= 0 && policy == LockPolicy.NONFAIR ? policy.tryOnce
                : policy.firstTry;
        long leaseMillis = fixedLeaseMillis > 0 ? fixedLeaseMillis : machinery.leaseMillis;
        // A take as the cache that Redis refused is this acquisition's first try: not sent twice.
        CacheTokens.Refusal[] refused = new CacheTokens.Refusal[1];
        if (cache != null && !forHandle && fixedLeaseMillis == 0) {
            // Cached: taken locally if idle; otherwise, with nothing cached, nobody of this client
            // holding or waiting, and no recent ask, taken in Redis as the client's cache
            // (docs/design/lock-caching.md). Otherwise a plain hold, as without caching.
            CacheTake take;
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
            boolean interruptible, long fixedLeaseMillis, long leaseMillis, CacheTokens.Refusal refused,
            Consumer<LockBackend.Grant> book) throws InterruptedException {
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
        highestToken.accumulateAndGet(token, Math::max);
        // A thread's hold ends as abandoned with its thread; a handle's is the client's.
        book.accept(LockBackend.Grant.of(owner, token, onLost -> machinery.watchdog.register(new Renewal(
                policy.renew, keys.keysFor(policy.renew), new String[] {owner, Long.toString(token)}, fixedLeaseMillis,
                sentNanos, threadId >= 0 ? Thread.currentThread() : null, onLost, null, null))));
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
        private CacheTake cacheTake;
        /**
         * A take as the cache that Redis refused just before this wait: its first try, not sent
         * again; and the cacher it asked, not asked again by the try right after it (later tries
         * ask again, and the cacher's renewal is the backstop of a lost ask).
         */
        private CacheTokens.Refusal pretried;
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
            CacheTokens.Refusal refusal = pretried;
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
                // A place in line, leased as the client's holds are.
                args = backend.waitingTryArgs(owner, lease, Long.toString(machinery.leaseMillis));
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
            if (fixedLease || token <= Math.max(grantFloor, highestToken.get())) {
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
                CacheTake take = cache.tryTake();
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
            machinery.await(release.command(owner, token), "give back " + kind + " '" + name + "'");
        } catch (SynchronizerUnavailableException e) {
            release.quietly(owner, token);
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
                release.quietly(owner, reply.token());
            }
        });
    }
}
