/**
 * Internal: may change without notice. The locks: {@link dev.synchronizers.redis.lock.RedisLock} (the
 * reentrant, fair and write locks, and the Redlock's lock) over a
 * {@link dev.synchronizers.redis.lock.LockBackend} — {@link dev.synchronizers.redis.lock.ServerLockBackend}
 * on one server, with its {@link dev.synchronizers.redis.lock.LockPolicy}, or the quorum package's backend —,
 * the read-write pair, the conditions, the lock handles, this JVM's holds, the lock cache and the
 * lock's key names.
 */
package dev.synchronizers.redis.lock;
