package dev.synchronizers;

/**
 * Thrown by {@code unlock()} (and {@code release()}) when the calling owner's hold was lost before
 * it released it: its lease ran out, an administrator forced it, or the store lost it in a restart
 * or failover. The code that ran under the hold may have overlapped with another holder; a fencing
 * token checked by the downstream store is what protects against that.
 *
 * <p>It is an {@link IllegalMonitorStateException}, so code written against
 * {@link java.util.concurrent.locks.Lock} that treats an unlock without a hold as a programming
 * error still sees the type it expects. When it is thrown the hold is already gone locally and in
 * the store; nothing remains to release.
 */
public class LostHoldException extends IllegalMonitorStateException {

    /** The name of the synchronizer whose hold was lost. */
    private final String name;
    /** Why the hold was lost. */
    private final LostHold.Cause cause;

    /**
     * Creates an exception for a hold of {@code name} that was lost.
     *
     * @param name the synchronizer's name
     * @param cause why the hold was lost
     * @param message a message that names the synchronizer and says what happened
     */
    public LostHoldException(String name, LostHold.Cause cause, String message) {
        super(message);
        this.name = name;
        this.cause = cause;
    }

    /**
     * Returns the name of the synchronizer whose hold was lost.
     *
     * @return the synchronizer's name
     */
    public String name() {
        return name;
    }

    /**
     * Returns why the hold was lost.
     *
     * @return the cause, as the lost-hold listener was told it
     */
    public LostHold.Cause lostCause() {
        return cause;
    }
}
