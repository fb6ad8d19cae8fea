package dev.synchronizers.redis;

import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.quorum.RedlockNode;
import java.util.List;

/** Test bridge to the package-private diagnostics of {@link RedisSynchronizers}. */
public final class RedisInternals {

    private RedisInternals() {
    }

    private static Machinery machinery(Synchronizers synchronizers) {
        return ((RedisSynchronizers) synchronizers).machinery();
    }

    /** Holds the client's watchdog tracks. */
    public static int watchdogEntries(Synchronizers synchronizers) {
        return machinery(synchronizers).watchdog.registered();
    }

    /** Channels the client's wake-up dispatcher is subscribed to. */
    public static int subscribedChannels(Synchronizers synchronizers) {
        return machinery(synchronizers).wakeups.subscribedChannels();
    }

    /** Locks the client caches now: being taken, idle or held (lock caching). */
    public static int activeCaches(Synchronizers synchronizers) {
        return machinery(synchronizers).cachedLocks();
    }

    /** Locks the client caches with no thread of it inside (lock caching). */
    public static int idleCaches(Synchronizers synchronizers) {
        return machinery(synchronizers).idleCaches();
    }

    /** Releases the client's watchdog still retries because Redis could not be reached. */
    public static int pendingRetries(Synchronizers synchronizers) {
        return machinery(synchronizers).followUps.pending();
    }

    /** Runs one watchdog tick of the client now. */
    public static void renewNow(Synchronizers synchronizers) {
        machinery(synchronizers).watchdog.tick();
    }

    /** Holds a Redlock client's node watchdogs track, summed over its nodes. */
    public static int watchdogEntries(Redlock redlock) {
        return redlock.watchdogEntries();
    }

    /** Channels a Redlock client's wake-up dispatcher has waiters on. */
    public static int subscribedChannels(Redlock redlock) {
        return redlock.subscribedChannels();
    }

    /** Follow-ups a Redlock client's node watchdogs still retry. */
    public static int pendingRetries(Redlock redlock) {
        return redlock.pendingRetries();
    }

    /** Runs one watchdog tick of every node of a Redlock client now. */
    public static void renewNow(Redlock redlock) {
        redlock.renewNow();
    }

    /** Lock objects a Redlock client's holds keep reachable. */
    public static int pinnedCount(Redlock redlock) {
        return redlock.pinnedCount();
    }

    /** Lock objects the client's holds keep reachable. */
    public static int pinnedSynchronizers(Synchronizers synchronizers) {
        return machinery(synchronizers).pinnedCount();
    }

    /** Makes the client's lock caches reserve {@code tokens} fencing tokens at a time. */
    public static void cacheBlockForTests(Synchronizers synchronizers, long tokens) {
        if (tokens < 1) {
            throw new IllegalArgumentException("tokens must be >= 1: " + tokens);
        }
        machinery(synchronizers).cacheBlock = tokens;
    }

    /** Runs {@code hook} when a cache's token reservation is answered (see RedisSynchronizers). */
    public static void onReservationAnsweredForTests(Synchronizers synchronizers, Runnable hook) {
        machinery(synchronizers).reservationAnsweredForTests = hook;
    }

    /** Locks the client caches now (same as {@link #activeCaches}). */
    public static int cachedLocks(Synchronizers synchronizers) {
        return machinery(synchronizers).cachedLocks();
    }

    /** A Redlock client's nodes, in node order. */
    public static List<RedlockNode> nodes(Redlock redlock) {
        return redlock.nodes;
    }
}
