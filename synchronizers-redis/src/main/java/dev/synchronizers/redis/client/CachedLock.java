package dev.synchronizers.redis.client;

/**
 * What the client context needs of one lock's cache (the lock package's {@code LockCache}): the
 * client keeps its caches by lock key to route other clients' asks, to give them back at
 * {@code close()}, and to find takes whose thread ended. Known here only through this interface, so
 * that the client context never depends on the lock package.
 */
public interface CachedLock {

    /** How many fencing tokens a cache reserves at a time, unless a test sets fewer. */
    long BLOCK = 1L << 20;

    /** Whether no thread is inside the cache now (for leak checks). */
    boolean idle();

    /** The client closes: gives an idle cached hold back to Redis, so it keeps nobody out for a lease. */
    void giveBackOnClose();

    /** Another client asks for the lock: give it back as soon as no thread of this client is inside. */
    void askedBack();

    /** A watchdog chore: finds takes whose thread ended inside the cache, and ends them. */
    void checkAbandoned();
}
