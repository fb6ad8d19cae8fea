package dev.synchronizers.redis;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The counting semaphore behind {@link dev.synchronizers.Synchronizers#semaphore(String)}.
 *
 * <p>Permits are owned by the client (this {@code RedisSynchronizers}), not by a thread: any thread
 * of the client may release what any other acquired, and the client cannot release more than it
 * holds. Redis keeps, per client, how many permits it holds and when the lease on them ends; the
 * client's watchdog renews that lease while it holds any. A client that dies returns its permits
 * when the lease runs out: every acquire, try and count purges expired clients first.
 *
 * <p>Waiters queue in Redis in arrival order, each with a leased place (see {@link QueuePlace}),
 * and are served first come, first served: a waiter asking for more permits than are free blocks
 * the waiters behind it, so {@code acquire(5)} is not starved by a stream of {@code acquire(1)}.
 * The line is served in Redis: every script that frees permits or changes the line (release,
 * growth, a waiter leaving, an acquire that purges a dead client) hands the free permits to the
 * waiters at its front, whose clients then hold them, and names each in a {@code granted:}
 * message. A waiter that reads its name has its permits without another round trip, so a permit
 * passes from a releasing client to the next waiter in one script call and one message; its grant
 * record is dropped by this client's next release. A waiter that gives up races nothing: leaving
 * gives back a grant it has not claimed, atomically. A lost message costs time, not permits: the
 * waiter's next try (after its place lease is found served by the watchdog, a reconnect, or its
 * bounded sleep) claims the grant. {@code tryAcquire()} without a timeout barges, as {@link
 * java.util.concurrent.Semaphore#tryAcquire()} does even on a fair semaphore.
 */
final class RedisSemaphore implements DistributedSemaphore {

    private static final String KIND = "semaphore";

    private final String name;
    private final SemaphoreKeys keys;
    private final Machinery machinery;
    private final Acquirer acquirer;
    /** Waiters of this client that took their grant by message: their records go with the next release. */
    private final Queue<String> claimed = new ConcurrentLinkedQueue<>();
    /** Guards {@link #held} and {@link #lease}, never around a Redis call. */
    private final ReentrantLock books = new ReentrantLock();
    private int held;
    private Watchdog.Lease lease;

    RedisSemaphore(String name, Machinery machinery) {
        this.name = name;
        this.keys = SemaphoreKeys.of(machinery.keyPrefix, name);
        this.machinery = machinery;
        this.acquirer = new Acquirer(machinery.wakeups, keys.wakeups(), machinery.leaseMillis, false,
                machinery::checkOpen);
    }

    @Override
    public String name() {
        return name;
    }

    /* --------------- total --------------- */

    @Override
    public boolean trySetPermits(int permits) {
        checkNotNegative("permits", permits);
        machinery.checkOpen();
        return machinery.<Long>await(machinery.scripts.run(Script.SEMAPHORE_SET, new String[] {keys.total()},
                Integer.toString(permits)), what("set the permits of")) == 1L;
    }

    @Override
    public void addPermits(int delta) {
        machinery.checkOpen();
        List<Object> reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_ADD, keys.forQueue(),
                Integer.toString(delta)), what("add permits to"));
        if ((Long) reply.get(0) == 0L) {
            throw new IllegalArgumentException("delta would make the total negative: " + reply.get(1) + " + " + delta);
        }
    }

    /* --------------- acquire --------------- */

    @Override
    public void acquire() throws InterruptedException {
        acquire(1);
    }

    @Override
    public void acquire(int permits) throws InterruptedException {
        checkNotNegative("permits", permits);
        acquire(permits, Acquirer.FOREVER);
    }

    @Override
    public boolean tryAcquire() {
        return tryAcquire(1);
    }

    @Override
    public boolean tryAcquire(int permits) {
        checkNotNegative("permits", permits);
        machinery.checkOpen();
        return permits == 0 || take(permits) > 0;
    }

    @Override
    public boolean tryAcquire(long timeout, TimeUnit unit) throws InterruptedException {
        return tryAcquire(1, timeout, unit);
    }

    @Override
    public boolean tryAcquire(int permits, long timeout, TimeUnit unit) throws InterruptedException {
        checkNotNegative("permits", permits);
        Objects.requireNonNull(unit, "unit");
        return acquire(permits, unit.toNanos(timeout));
    }

    @Override
    public int drainPermits() {
        machinery.checkOpen();
        return take(0);
    }

    private boolean acquire(int permits, long timeoutNanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (permits == 0) {
            return true;
        }
        machinery.checkOpen();
        String waiter = machinery.newAttempt();
        QueuePlace place = new QueuePlace(machinery, waiter, Script.SEMAPHORE_RENEW_PLACE, keys.forPlace(),
                Script.SEMAPHORE_LEAVE, keys.forQueue(), what(""));
        String[] args = {machinery.clientId, waiter, Integer.toString(permits), Long.toString(machinery.leaseMillis),
                Long.toString(machinery.leaseMillis)};
        Attempt attempt = acquirer.acquire(new Acquirer.Step() {
            @Override
            public Attempt attempt(boolean subscribed) {
                machinery.checkOpen();
                long sent = System.nanoTime();
                CompletionStage<List<Object>> pending = machinery.scripts.run(Script.SEMAPHORE_ACQUIRE,
                        keys.forQueue(), args);
                List<Object> reply;
                try {
                    reply = machinery.await(pending, what("acquire " + permits + " permits of"));
                } catch (SynchronizerUnavailableException e) {
                    undoIfAcquired(pending, permits);
                    throw e;
                }
                long code = (Long) reply.get(0);
                if (code < 0) {
                    throw exceedsTotal(permits, (Long) reply.get(1));
                }
                if (code == 1L) {
                    record(permits, sent);
                    return new Attempt(true, -1, 0, sent);
                }
                place.queued(sent);
                return new Attempt(false, -1, (Long) reply.get(1), sent);
            }

            @Override
            public Attempt granted(String detail) {
                // Served from the line after the waiter was last known queued: the lease runs from then at least.
                long since = place.queuedSinceAtLeast();
                record(permits, since);
                claimed.add(waiter);
                return new Attempt(true, -1, 0, since);
            }

            @Override
            public boolean firstTryRegisters() {
                return true;
            }

            @Override
            public void waiting(WakeupDispatcher.Subscription subscription) {
                place.waiting(subscription);
            }

            @Override
            public void done(boolean acquired) {
                place.done(acquired);
            }
        }, waiter, timeoutNanos, true);
        return attempt.acquired();
    }

    /** One barging try; {@code permits == 0} drains. Returns the permits taken. */
    private int take(int permits) {
        long sent = System.nanoTime();
        List<Object> reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_TRY, keys.forTry(),
                machinery.clientId, Integer.toString(permits), Long.toString(machinery.leaseMillis)),
                what(permits == 0 ? "drain" : "try to acquire " + permits + " permits of"));
        long code = (Long) reply.get(0);
        if (code < 0) {
            throw exceedsTotal(permits, (Long) reply.get(1));
        }
        int taken = code == 1L ? (int) (long) (Long) reply.get(1) : 0;
        if (taken > 0) {
            record(taken, sent);
        }
        return permits > 0 && code == 1L ? permits : taken;
    }

    /**
     * An acquire whose reply the caller stopped waiting for may still have taken permits (or
     * claimed a grant): if its reply arrives after all and says so, they are given back, retried
     * until Redis answers or the client's lease on them is over. They were never booked here.
     */
    private void undoIfAcquired(CompletionStage<List<Object>> pending, int permits) {
        pending.thenAccept(reply -> {
            if ((Long) reply.get(0) == 1L) {
                Supplier<CompletionStage<?>> giveBack = () -> machinery.scripts.run(Script.SEMAPHORE_RELEASE,
                        keys.forQueue(), machinery.clientId, Integer.toString(permits), "");
                machinery.watchdog.retryUntil("give back " + permits + " permits of " + what(""), giveBack,
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
            }
        });
    }

    /** Books permits the client now holds, and keeps their lease renewed while it holds any. */
    private void record(int permits, long sentNanos) {
        books.lock();
        try {
            held += permits;
            if (lease == null) {
                lease = machinery.watchdog.registerForClient(Script.SEMAPHORE_RENEW, keys.forRenew(),
                        new String[] {machinery.clientId}, sentNanos, this::lost);
            }
        } finally {
            books.unlock();
        }
    }

    /** Told by the watchdog that the lease on this client's permits is gone: they are back in the pool. */
    private void lost(LostHold.Cause cause) {
        books.lock();
        try {
            held = 0;
            lease = null;
        } finally {
            books.unlock();
        }
        machinery.listeners.report(new LostHold(name, KIND, -1, -1, cause));
    }

    /* --------------- release --------------- */

    @Override
    public void release() {
        release(1);
    }

    @Override
    public void release(int permits) {
        checkNotNegative("permits", permits);
        if (permits == 0) {
            return;
        }
        machinery.checkOpen();
        Watchdog.Lease ended;
        books.lock();
        try {
            if (held < permits) {
                throw new IllegalStateException(what("") + ": cannot release " + permits
                        + " permits: this client holds " + held);
            }
            held -= permits;
            ended = held == 0 ? lease : null;
            if (ended != null) {
                // Stop renewing before the release reaches Redis, so the watchdog never mistakes it for a loss.
                machinery.watchdog.unregister(ended);
                lease = null;
            }
        } finally {
            books.unlock();
        }
        List<String> cleared = drainClaimed();
        List<Object> reply;
        try {
            reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_RELEASE, keys.forQueue(),
                    machinery.clientId, Integer.toString(permits), String.join(" ", cleared)),
                    what("release " + permits + " permits of"));
        } catch (RuntimeException e) {
            // Nothing is known to have changed: the permits stay this client's, leased as before.
            claimed.addAll(cleared);
            record(permits, System.nanoTime());
            throw e;
        }
        if ((Long) reply.get(0) == 0L) {
            long inRedis = (Long) reply.get(1);
            // Redis is the authority: book what it has (the rest went with a lease that ran out).
            books.lock();
            try {
                held = 0;
                if (lease != null) {
                    machinery.watchdog.unregister(lease);
                    lease = null;
                }
            } finally {
                books.unlock();
            }
            if (inRedis > 0) {
                record((int) inRedis, System.nanoTime());
            }
            throw new IllegalStateException(what("") + ": cannot release " + permits + " permits: Redis has "
                    + inRedis + " for this client; the others were lost when its lease ran out");
        }
    }

    /** Takes up to 64 claimed grants whose records the next release drops. */
    private List<String> drainClaimed() {
        List<String> drained = new ArrayList<>();
        for (String waiter; drained.size() < 64 && (waiter = claimed.poll()) != null; ) {
            drained.add(waiter);
        }
        return drained;
    }

    /* --------------- queries --------------- */

    @Override
    public int availablePermits() {
        machinery.checkOpen();
        long available = machinery.<Long>await(machinery.scripts.run(Script.SEMAPHORE_AVAILABLE, keys.forTry()),
                what("count the permits of"));
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, available));
    }

    /** Shows the name and what this JVM knows; makes no network call. */
    @Override
    public String toString() {
        books.lock();
        try {
            return "RedisSemaphore[" + name + ", held by this client: " + held + "]";
        } finally {
            books.unlock();
        }
    }

    /* --------------- helpers --------------- */

    private String what(String verb) {
        return (verb.isEmpty() ? "" : verb + " ") + KIND + " '" + name + "'";
    }

    private IllegalArgumentException exceedsTotal(int permits, long total) {
        return new IllegalArgumentException("permits must not exceed the total of " + what("") + ": "
                + permits + " > " + total);
    }

    private static void checkNotNegative(String argument, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(argument + " must be >= 0: " + value);
        }
    }
}
