package dev.synchronizers;

import java.util.List;
import java.util.Objects;

/**
 * A picture of one read-write lock at one moment, taken by {@link DistributedReadWriteLock#snapshot()}
 * in one read-only call to the store: the writer or the readers, and who waits. It is out of date
 * as soon as it is returned: use it for monitoring and diagnosis, never for control.
 *
 * @param name the lock's name
 * @param writer the holder of the write lock at that moment, or null
 * @param readers the holders of the read lock at that moment (a writer that downgraded appears in
 *     both)
 * @param waitingWriters how many writers of all clients waited at that moment
 * @param readersWaiting whether at least one reader waited at that moment (the store marks that
 *     readers wait, not how many)
 */
public record ReadWriteLockSnapshot(String name, LockSnapshot.Holder writer, List<LockSnapshot.Holder> readers,
        int waitingWriters, boolean readersWaiting) {

    /**
     * Checks and copies the components.
     *
     * @param name the lock's name
     * @param writer the holder of the write lock at that moment, or null
     * @param readers the holders of the read lock at that moment (a writer that downgraded appears in
     *     both)
     * @param waitingWriters how many writers of all clients waited at that moment
     * @param readersWaiting whether at least one reader waited at that moment (the store marks that
     *     readers wait, not how many)
     * @throws NullPointerException if {@code name} or {@code readers} is null or holds null
     * @throws IllegalArgumentException if {@code waitingWriters} is negative
     */
    public ReadWriteLockSnapshot {
        Objects.requireNonNull(name, "name");
        readers = List.copyOf(readers);
        if (waitingWriters < 0) {
            throw new IllegalArgumentException("waitingWriters must be >= 0: " + waitingWriters);
        }
    }
}
