package dev.synchronizers.examples;

import io.lettuce.core.SetArgs;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

/**
 * The textbook Redis lock of many blog posts, with its two classic flaws, for comparison with
 * {@link dev.synchronizers.DistributedLock}.
 *
 * <ul>
 *   <li>{@link #lock()}: {@code SET key token NX} (SETNX), retried every millisecond until it succeeds, then
 *       {@code PEXPIRE key lease} so that a crashed holder cannot block everyone forever. A holder
 *       that takes longer than the lease loses the lock without noticing, and a second thread
 *       enters the critical section while the first is still in it.</li>
 *   <li>{@link #unlock()}: {@code GET key} and, if the token is ours, {@code DEL key}. The check and
 *       the delete are two commands: if the key expires between them and another thread takes
 *       it, we delete that thread's lock.</li>
 * </ul>
 *
 * <p>{@code DistributedLock} avoids both: its watchdog renews the lease while the holder's JVM is
 * alive, and it takes and releases with one script each, so check and change are atomic.
 *
 * <p>One instance per thread: the instance's token names the holder.
 */
final class NaiveLock implements Lock {

    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final RedisCommands<String, String> redis;
    private final String key;
    private final long leaseMillis;
    private final String token = UUID.randomUUID().toString();

    /** Creates a lock on {@code key} whose holder keeps it for at most {@code leaseMillis}. */
    NaiveLock(RedisCommands<String, String> redis, String key, long leaseMillis) {
        this.redis = redis;
        this.key = key;
        this.leaseMillis = leaseMillis;
    }

    /** Retries {@link #tryLock()} every millisecond until it succeeds. */
    @Override
    public void lock() {
        while (!tryLock()) {
            LockSupport.parkNanos(RETRY_NANOS);
        }
    }

    /** One {@code SET NX}, and a {@code PEXPIRE} if it succeeded. */
    @Override
    public boolean tryLock() {
        if (redis.set(key, token, SetArgs.Builder.nx()) == null) {
            return false;
        }
        redis.pexpire(key, leaseMillis);   // a second round trip: a crash before it leaves the key forever
        return true;
    }

    /** {@code GET}, then {@code DEL} if the token is still ours. */
    @Override
    public void unlock() {
        if (token.equals(redis.get(key))) {
            redis.del(key);   // not atomic with the GET: the key may have expired and been taken meanwhile
        }
    }

    /** Not needed by the demo. */
    @Override
    public void lockInterruptibly() {
        throw new UnsupportedOperationException("not needed by the demo");
    }

    /** Not needed by the demo. */
    @Override
    public boolean tryLock(long time, TimeUnit unit) {
        throw new UnsupportedOperationException("not needed by the demo");
    }

    /** Not supported. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("not supported");
    }
}
