package dev.synchronizers.redis.quorum;

import dev.synchronizers.redis.support.Disconnected;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * The replies of one call sent to every node, tallied as they come, and the moment a quorum
 * decides.
 *
 * <p>Each node is in one of five states: <em>pending</em> (asked, no reply yet), <em>yes</em>
 * (answered, and the predicate given to the constructor accepts the reply), <em>no</em> (answered
 * otherwise), <em>failed</em> (no answer: the reply completed exceptionally, or the predicate threw
 * on a reply of an unexpected shape) or <em>skipped</em> (not asked, see {@link #skip}). A node
 * leaves <em>pending</em> once and never changes state again.
 *
 * <p>The tally is <em>decided</em> as soon as one of these holds:
 * <ul>
 *   <li>{@code needed} nodes said yes;
 *   <li>at least {@code needed} nodes answered (yes or no) and the pending ones are too few to
 *       make {@code needed} yes: the call is refused, and no further reply can change whether
 *       a quorum answered;
 *   <li>no node is pending.
 * </ul>
 * It is <em>complete</em> once no node is pending. Failed and skipped nodes count toward neither
 * yes nor answered, so a call that too many nodes failed stays undecided until every reply is in.
 *
 * <p>The tally sets no time limit on a reply: {@link #await} and {@link #awaitAll} stop waiting at
 * the caller's deadline, and a node still pending then stays pending. Replies may complete on
 * any thread, concurrently with each other and with the queries; every method is thread-safe.
 *
 * @param <T> the type of one node's reply
 */
public final class Tally<T> {
    private static final int PENDING = 0;
    private static final int YES = 1;
    private static final int NO = 2;
    private static final int FAILED = 3;
    private static final int SKIPPED = 4;

    private final int needed;
    private final Predicate<T> isYes;
    private final int[] states;
    private final Object[] replies;
    private final Runnable[] onYes;
    private final Runnable[] onYesOrFailed;
    private final ReentrantLock lock = new ReentrantLock();
    private final CompletableFuture<Void> decided = new CompletableFuture<>();
    private final CompletableFuture<Void> complete = new CompletableFuture<>();
    private int yes;
    private int no;
    private int failed;
    private int skipped;

    /**
     * A tally of {@code nodes} nodes, all pending, that needs {@code needed} of them to say yes.
     *
     * @param nodes  how many nodes the call goes to; they are numbered {@code 0 .. nodes - 1}
     * @param needed how many yes replies decide the call (the quorum)
     * @param isYes  whether a reply is a yes; a reply it throws on counts as a failure
     */
    public Tally(int nodes, int needed, Predicate<T> isYes) {
        this.needed = needed;
        this.isYes = isYes;
        this.states = new int[nodes];
        this.replies = new Object[nodes];
        this.onYes = new Runnable[nodes];
        this.onYesOrFailed = new Runnable[nodes];
    }

    /**
     * Tallies node {@code index}'s reply when it completes, on the thread that completes it (or
     * on this one if it already has). Called at most once per node, and not for a skipped node.
     */
    public void watch(int index, CompletionStage<T> reply) {
        reply.whenComplete((value, failure) -> record(index, value, failure));
    }

    /**
     * Runs {@code then} once node {@code index} says yes: now, on this thread, if it has already;
     * otherwise on the thread that completes its reply. Never runs it if the node said no,
     * failed or was skipped. At most one action per node; a second call while the node is
     * pending replaces the first.
     */
    public void onYes(int index, Runnable then) {
        lock.lock();
        try {
            if (states[index] != YES) {
                if (states[index] == PENDING) {
                    onYes[index] = then;
                }
                return;
            }
        } finally {
            lock.unlock();
        }
        then.run();
    }

    /**
     * Runs {@code then} once node {@code index} says yes or fails (no answer: the call may have
     * run): now, on this thread, if it has already; otherwise on the thread that completes its
     * reply. Never runs it if the node said no or was skipped. At most one action per node; a
     * second call while the node is pending replaces the first. Independent of {@link #onYes}.
     *
     * @param index the node
     * @param then what to run
     */
    public void onYesOrFailed(int index, Runnable then) {
        lock.lock();
        try {
            if (states[index] == PENDING) {
                onYesOrFailed[index] = then;
                return;
            }
            if (states[index] != YES && states[index] != FAILED) {
                return;
            }
        } finally {
            lock.unlock();
        }
        then.run();
    }

    /** Counts node {@code index} as not asked: it is no longer pending, and counts toward nothing. */
    public void skip(int index) {
        lock.lock();
        try {
            states[index] = SKIPPED;
            skipped++;
            decide();
        } finally {
            lock.unlock();
        }
    }

    private void record(int index, T value, Throwable failure) {
        Runnable then = null;
        Runnable settled = null;
        lock.lock();
        try {
            boolean positive = false;
            if (failure == null) {
                try {
                    positive = isYes.test(value);
                } catch (RuntimeException e) {
                    failure = e;   // a reply of an unexpected shape counts as no answer
                }
            }
            replies[index] = failure != null ? failure : value;
            if (failure != null) {
                states[index] = FAILED;
                failed++;
                settled = onYesOrFailed[index];
            } else if (positive) {
                states[index] = YES;
                yes++;
                then = onYes[index];
                settled = onYesOrFailed[index];
            } else {
                states[index] = NO;
                no++;
            }
            decide();
        } finally {
            lock.unlock();
        }
        if (then != null) {
            then.run();
        }
        if (settled != null) {
            settled.run();
        }
    }

    private void decide() {
        int pending = states.length - yes - no - failed - skipped;
        if (yes >= needed || yes + pending < needed && yes + no >= needed || pending == 0) {
            decided.complete(null);
        }
        if (pending == 0) {
            complete.complete(null);
        }
    }

    /**
     * Waits until the tally is decided or {@code deadlineNanos} (on the {@link System#nanoTime()}
     * scale) has passed, whichever is first. Not interruptible: an interrupt does not end the wait,
     * and the thread's interrupt status is set again before this returns.
     */
    public void await(long deadlineNanos) {
        await(decided, deadlineNanos);
    }

    /**
     * Waits until no node is pending or {@code deadlineNanos} (on the {@link System#nanoTime()}
     * scale) has passed, whichever is first. Not interruptible, as {@link #await}.
     */
    public void awaitAll(long deadlineNanos) {
        await(complete, deadlineNanos);
    }

    private static void await(CompletableFuture<Void> decided, long deadlineNanos) {
        boolean interrupted = false;
        try {
            while (!decided.isDone()) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    decided.get(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException | TimeoutException e) {
                    return;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private int state(int index) {
        lock.lock();
        try {
            return states[index];
        } finally {
            lock.unlock();
        }
    }

    /** Whether node {@code index} said yes. */
    public boolean isYes(int index) {
        return state(index) == YES;
    }

    /** Whether node {@code index} answered, and not yes. */
    public boolean isNo(int index) {
        return state(index) == NO;
    }

    /** Whether node {@code index} was asked and its reply has not completed yet. */
    public boolean isPending(int index) {
        return state(index) == PENDING;
    }

    /**
     * Node {@code index}'s reply, if it answered (yes or no); {@code null} while it is pending or
     * if it was skipped. For a failed node this is its failure, not a {@code T}: ask only after
     * {@link #isYes} or {@link #isNo}.
     */
    @SuppressWarnings("unchecked")
    public T reply(int index) {
        lock.lock();
        try {
            return (T) replies[index];
        } finally {
            lock.unlock();
        }
    }

    /** How many nodes said yes so far. */
    public int yes() {
        lock.lock();
        try {
            return yes;
        } finally {
            lock.unlock();
        }
    }

    /** How many nodes answered so far, yes or no; failed, pending and skipped nodes do not count. */
    public int answered() {
        lock.lock();
        try {
            return yes + no;
        } finally {
            lock.unlock();
        }
    }

    /** Whether node {@code index} was asked and has not answered (yet): failed or pending. */
    public boolean isUnanswered(int index) {
        int state = state(index);
        return state == PENDING || state == FAILED;
    }

    /**
     * Whether node {@code index}'s call failed before it was sent: refused by the client while
     * the connection was down, so it cannot have run.
     */
    public boolean neverSent(int index) {
        lock.lock();
        try {
            if (states[index] != FAILED) {
                return false;
            }
            return Disconnected.isRefusal((Throwable) replies[index]);
        } finally {
            lock.unlock();
        }
    }

    /** The failure of the lowest-numbered failed node, or {@code null} if none failed (yet). */
    public Throwable firstFailure() {
        lock.lock();
        try {
            for (int i = 0; i < states.length; i++) {
                if (states[i] == FAILED) {
                    return (Throwable) replies[i];
                }
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** The state of each node, by index (0 pending, 1 yes, 2 no, 3 failed, 4 skipped); for debugging. */
    @Override
    public String toString() {
        return "Tally" + Arrays.toString(states);
    }
}
