package dev.synchronizers;

/**
 * Thrown when the store behind a synchronizer fails an operation for a reason other than the
 * caller's arguments: a command error, a key of the wrong type, an unexpected reply.
 *
 * <p>An operation that throws this exception may or may not have taken effect in the store, except
 * where a method's documentation says otherwise. Holds the caller did not get are undone on a
 * best-effort basis, and in any case expire with their lease.
 */
public class SynchronizerException extends RuntimeException {

    /**
     * Creates an exception with a message that names the synchronizer and what failed.
     *
     * @param message what failed, including the synchronizer's name
     */
    public SynchronizerException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a message and the failure that caused it.
     *
     * @param message what failed, including the synchronizer's name
     * @param cause the underlying failure, for example the Redis client's exception
     */
    public SynchronizerException(String message, Throwable cause) {
        super(message, cause);
    }
}
