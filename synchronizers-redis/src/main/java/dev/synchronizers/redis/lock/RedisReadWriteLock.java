package dev.synchronizers.redis.lock;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.ReadWriteLockSnapshot;
import dev.synchronizers.redis.client.Machinery;

/**
 * The read-write lock behind {@link dev.synchronizers.Synchronizers#readWriteLock(String)}: two
 * {@link RedisLock}s, {@link LockPolicy#READ} and {@link LockPolicy#WRITE}, over the same keys.
 *
 * <p>Any number of owners of any clients may hold the read lock while nobody else holds the write
 * lock; the write lock excludes every other owner. Both halves are reentrant, leased per holder
 * and renewed by the watchdog, fenced and lost-hold aware like {@code lock(name)}: each reader's
 * hold has its own lease, so a dead reader blocks writers only until its own lease runs out.
 *
 * <p>Order: waiting writers queue in Redis in arrival order, each with a leased place. Once a
 * writer waits, readers that do not hold the read lock yet wait behind it (a thread that holds a
 * read hold re-enters locally, without asking Redis), so readers arriving all the time cannot
 * starve a writer. A writer's release wakes the first waiting writer if there is one, and
 * otherwise every waiting reader at once, with one message; the last reader's release wakes the
 * first waiting writer. The untimed {@code tryLock()} of either half barges.
 *
 * <p>Downgrade is allowed: the writer may take the read lock and then release the write lock,
 * keeping a read hold with no gap in which another writer could enter. Upgrade is refused: asking
 * for the write lock while holding only the read lock would wait for oneself, so {@code lock()}
 * and {@code lockInterruptibly()} throw {@link IllegalMonitorStateException} and {@code tryLock}
 * returns false, instead of hanging as {@code ReentrantReadWriteLock} would.
 */
public final class RedisReadWriteLock implements DistributedReadWriteLock {

    private final String name;
    private final RedisLock read;
    private final RedisLock write;
    /** The read half's backend, which takes the picture of both halves. */
    private final ServerLockBackend readBackend;

    public RedisReadWriteLock(String name, Machinery machinery) {
        this.name = name;
        LockKeys keys = LockKeys.readWrite(machinery.keyPrefix, name);
        this.readBackend = new ServerLockBackend(name, LockPolicy.READ, keys, machinery);
        ServerLockBackend writeBackend = new ServerLockBackend(name, LockPolicy.WRITE, keys, machinery);
        readBackend.pairWith(writeBackend);
        writeBackend.pairWith(readBackend);
        this.read = new RedisLock(readBackend, this);
        this.write = new RedisLock(writeBackend, this);
        write.refuseUpgradeFrom(read);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public DistributedLock readLock() {
        return read;
    }

    @Override
    public DistributedLock writeLock() {
        return write;
    }

    /** One read-only script call; see {@link DistributedReadWriteLock#snapshot()}. */
    @Override
    public ReadWriteLockSnapshot snapshot() {
        return readBackend.readWriteSnapshot();
    }

    /** Shows the name and what this JVM knows of both halves; makes no network call. */
    @Override
    public String toString() {
        return "RedisReadWriteLock[" + name + ", " + read + ", " + write + "]";
    }
}
