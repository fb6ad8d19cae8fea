package dev.synchronizers;

/**
 * Work to run while a lock is held, for {@link DistributedLock#callLocked}: it is given the hold it
 * runs under, for its {@linkplain LockHandle#fencingToken() fencing token}, a
 * {@linkplain LockHandle#verify() check with the store} or its {@linkplain LockHandle#lost() loss
 * signal}.
 *
 * @param <T> the type of the result
 */
@FunctionalInterface
public interface LockedCallable<T> {

    /**
     * Runs the work under the hold.
     *
     * @param hold the hold the work runs under; {@code callLocked} releases it, so the work must
     *     not (a release by the work makes {@code callLocked}'s own release do nothing)
     * @return the result, returned by {@code callLocked}
     * @throws Exception if the work fails; {@code callLocked} throws it wrapped in an
     *     {@link java.util.concurrent.ExecutionException}, after the release
     */
    T call(LockHandle hold) throws Exception;
}
