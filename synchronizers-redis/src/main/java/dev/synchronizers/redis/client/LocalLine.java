package dev.synchronizers.redis.client;

import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The local line of a non-fair lock: this client's waiters in arrival order, of whom only the
 * first talks to Redis ({@link Acquirer}), and the hand-over of the lock from a neighbour's unlock
 * to that first waiter without its own round trip.
 *
 * <p>A thread of this client that unlocks may {@linkplain #reserveHead() reserve} the first in line
 * while it is idle (parked in line, or asleep between tries) and hand the lock to it; a reserved
 * waiter neither tries, wakes to leave, nor gives up until the hand-over is {@linkplain #settle
 * settled}. A waiter that wants to stop must first leave for good ({@link #mayGiveUp}), so that no
 * hand-over reaches it afterwards; one that was handed the lock meanwhile holds it and may not stop.
 *
 * <p>Lock-free: a {@link ConcurrentLinkedQueue} of nodes, each with an atomic state
 * ({@code IDLE}, {@code BUSY}, {@code RESERVED}, {@code LEFT}); waiting uses
 * {@link LockSupport#parkNanos}, never {@code synchronized}, so a virtual thread does not pin its
 * carrier.
 */
public final class LocalLine {

    /** What the line asks of a waiter in it, besides what {@link Acquirer.Step} does. */
    public interface Participant {
        /**
         * Tells whether a thread of this client holds what the waiter waits for, so that its
         * release will wake the local queue's head directly: the head then need not ask Redis
         * until woken. 
         */
        default boolean heldLocally() {
            return false;
        }

        /**
         * Tells whether this waiter must try before joining the local line: it may hold what the
         * line waits for already (an earlier call of its thread ran in Redis but its reply was
         * lost), and behind the line it would wait for itself until that hold's lease ran out.
         */
        default boolean mustTryFirst() {
            return false;
        }

        /**
         * Returns the owner string a neighbour may hand the lock to while this waiter is first in
         * the local line and idle ({@link LocalLine#reserveHead()}), or null if it cannot take a hand-over.
         */
        default String handoverOwner() {
            return null;
        }

        /**
         * Told that a neighbour's hand-over to this waiter may have taken effect in Redis though its
         * reply was lost ({@link LocalLine#settleInDoubt}): if the waiter stops without acquiring and
         * without a try's answer since, {@link Acquirer.Step#done} must give back what Redis may have handed it.
         */
        default void handoverInDoubt() {
        }
    }

    /** A participant that holds nothing locally, need not try first and takes no hand-over. */
    static final Participant PLAIN = new Participant() {
    };

    /** This client's waiters in arrival order, the first talking to Redis. */
    private final ConcurrentLinkedQueue<Node> line = new ConcurrentLinkedQueue<>();

    /**
     * Tells whether a waiter that wants to stop (timed out, interrupted, failed) may: always
     * without a local line; with one, it first leaves the line for good, waiting out any
     * reservation a neighbour's unlock holds on it, so that no hand-over can reach it afterwards.
     * It may not stop if such a hand-over granted it the lock ({@link Node#grant}): that is held.
     */
    static boolean mayGiveUp(Node node) {
        if (node == null) {
            return true;
        }
        while (!node.leave()) {
            node.awaitSettled();
        }
        return node.grant == null;
    }

    /** Takes the node out of the line for good; the next in line, if any, goes on. */
    void leave(Node node) {
        node.state.set(Node.LEFT);
        line.remove(node);
        wakeFirst();
    }

    private void wakeFirst() {
        Node first = line.peek();
        if (first != null) {
            first.wake();
        }
    }

    /** Wakes the local waiter that talks to Redis, if any: a local release need not wait for Pub/Sub. */
    void wakeHead() {
        wakeFirst();
    }

    /**
     * Reserves the first local waiter for a hand-over, if it is idle (parked in line, or asleep
     * between tries) and can take one: until the caller {@linkplain #settle settles} the
     * reservation, which it must, the waiter neither tries, gives up nor leaves.
     *
     * @return the reserved waiter and its owner string, or null if there is none to hand over to
     */
    public Handover reserveHead() {
        Node first = line.peek();
        String owner = first == null ? null : first.participant.handoverOwner();
        if (owner == null || !first.state.compareAndSet(Node.IDLE, Node.RESERVED)) {
            return null;
        }
        return new Handover(first, owner);
    }

    /**
     * Ends a reservation and wakes the waiter: granted with {@code detail}, or, if null, to go on
     * by itself.
     *
     * @param handover what {@link #reserveHead()} returned
     * @param detail what the waiter was handed (see {@link Acquirer.Step#granted(String)}), or null
     */
    public void settle(Handover handover, String detail) {
        Node node = handover.node();
        if (detail != null) {
            node.grant = detail;
        }
        node.state.set(Node.IDLE);
        node.wake();
    }

    /**
     * Ends a reservation whose hand-over may or may not have happened in Redis (its reply was
     * lost): the waiter is told so ({@link Participant#handoverInDoubt()}) and goes on by itself.
     *
     * @param handover what {@link #reserveHead()} returned
     */
    public void settleInDoubt(Handover handover) {
        handover.node().participant.handoverInDoubt();
        settle(handover, null);
    }

    /** A reserved first waiter; it must be {@linkplain #settle settled}. */
    public record Handover(Node node, String owner) {
    }

    /** How many threads of this client wait in the line. */
    int size() {
        return line.size();
    }

    /** Whether nobody waits in the line. */
    boolean isEmpty() {
        return line.isEmpty();
    }

    /** Puts a waiter at the end of the line. */
    Node join(Participant participant) {
        Node node = new Node(participant);
        line.add(node);
        return node;
    }

    /** Whether {@code node} is first in line: the one that talks to Redis. */
    boolean isFirst(Node node) {
        return line.peek() == node;
    }

    /** One local waiter's place in the line. */
    static final class Node {
        /** Parked in line, or asleep between tries: may be reserved. */
        static final int IDLE = 0;
        /** Trying in Redis. */
        static final int BUSY = 1;
        /** Reserved for a hand-over that is under way. */
        static final int RESERVED = 2;
        /** Gone: acquired, gave up or failed. */
        static final int LEFT = 3;
        private static final long SETTLE_PROBE_NANOS = 100_000;

        final Participant participant;
        final Thread thread = Thread.currentThread();
        final AtomicInteger state = new AtomicInteger(IDLE);
        /** What a neighbour handed over; null until then. */
        volatile String grant;
        /** The waiter's subscription while it waits in Redis, for a wake to end its sleep. */
        volatile WakeupDispatcher.Subscription subscription;

        Node(Participant participant) {
            this.participant = participant;
        }

        /** Marks the waiter as trying; false if it is reserved (then it must await the outcome). */
        boolean busy() {
            return state.compareAndSet(IDLE, BUSY);
        }

        /** Marks the waiter idle again after a try. */
        void idle() {
            state.compareAndSet(BUSY, IDLE);
        }

        /** Marks the waiter as leaving, if not already; false if it is reserved (then it must await the outcome). */
        boolean leave() {
            return state.get() == LEFT || state.compareAndSet(IDLE, LEFT) || state.compareAndSet(BUSY, LEFT);
        }

        /** Waits until a reservation is settled; the neighbour settles within its one command's timeout. */
        void awaitSettled() {
            while (state.get() == RESERVED) {
                LockSupport.parkNanos(this, SETTLE_PROBE_NANOS);
            }
        }

        void wake() {
            WakeupDispatcher.Subscription waiting = subscription;
            if (waiting != null) {
                waiting.wake();
            }
            LockSupport.unpark(thread);
        }
    }
}
