package dev.synchronizers;

/**
 * Thrown when the store could not be reached, or did not answer within the configured command
 * timeout. Every blocking call that needs the store throws this within a bounded time (the connect
 * or command timeout) rather than hang while the store is down.
 *
 * <p>An acquisition that throws this exception does not leave the caller holding anything: if the
 * command reached the store and took effect after all, the implementation releases that hold when
 * the late reply arrives, and the hold expires with its lease if no reply ever arrives.
 */
public class SynchronizerUnavailableException extends SynchronizerException {

    /**
     * Creates an exception with a message that names the synchronizer, the store and the time
     * waited.
     *
     * @param message what could not be done and for how long the store was waited for
     * @param cause the underlying failure
     */
    public SynchronizerUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
