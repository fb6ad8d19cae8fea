package dev.synchronizers.shedlock;

import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock lock that carries the fencing token of its hold: every lock that
 * {@link SynchronizersLockProvider} returns is one. The token is greater than every token issued
 * earlier for the lock's name, so a store that remembers the greatest token it has seen can refuse
 * the late write of a task whose lock ran out while it was still running (a pause, a partition)
 * after a newer task took the lock.
 *
 * <p>A task run by ShedLock's executor (for example a {@code @SchedulerLock} method) does not see
 * its lock object; it reads the same token with
 * {@link SynchronizersLockProvider#currentFencingToken()}.
 */
public interface FencedLock extends SimpleLock {

    /**
     * Returns the fencing token of this lock's hold: greater than every token issued earlier for
     * the name. A lock returned by {@link #extend} keeps the token of the lock it extends, since it
     * is the same hold. Makes no network call, and answers also after the lock was unlocked,
     * extended or lost.
     *
     * @return the token
     */
    long fencingToken();
}
