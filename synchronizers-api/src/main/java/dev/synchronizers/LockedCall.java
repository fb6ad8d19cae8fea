package dev.synchronizers;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run of {@link DistributedLock#callLocked}'s body: interrupts the calling thread when the
 * hold is lost while the body runs, and, when the body ends, clears the interrupt it set. The
 * loss and the end race on one state, so that a loss reported after the body ended interrupts
 * nothing, and an interrupt set for a loss is always cleared by the end.
 */
final class LockedCall {

    private static final int RUNNING = 0;
    private static final int INTERRUPTING = 1;
    private static final int INTERRUPTED = 2;
    private static final int ENDED = 3;

    private final Thread caller;
    private final AtomicInteger state = new AtomicInteger(RUNNING);
    /** The loss report, set before the state leaves RUNNING for a loss. */
    private volatile LostHold report;
    /** Whether this object set the caller's interrupt (it was not set already). */
    private volatile boolean interruptedHere;

    LockedCall(Thread caller) {
        this.caller = caller;
    }

    /** The hold was lost: interrupts the caller if its body still runs. */
    void lost(LostHold lost) {
        report = lost;
        if (state.compareAndSet(RUNNING, INTERRUPTING)) {
            if (!caller.isInterrupted()) {
                interruptedHere = true;
                caller.interrupt();
            }
            state.set(INTERRUPTED);
        }
    }

    /**
     * The body ended, on the caller's thread: no interrupt comes after this, and the one set for a
     * loss is cleared.
     *
     * @return the loss that interrupted the body, or null if none did
     */
    LostHold end() {
        if (state.compareAndSet(RUNNING, ENDED)) {
            return null;
        }
        while (state.get() == INTERRUPTING) {
            Thread.onSpinWait();
        }
        if (interruptedHere) {
            Thread.interrupted();
        }
        return report;
    }
}
