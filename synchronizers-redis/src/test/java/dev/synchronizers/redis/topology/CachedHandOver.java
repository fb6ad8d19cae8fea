package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.TimeUnit;

/**
 * Hand-overs of a cached lock from the client that caches it (the cacher) to another client, as the
 * Cluster and Sentinel caching tests check them: the other client gets the lock, at once if it is
 * idle and at the holder's unlock (never before) if it is held, and every fencing token is above the
 * one before it, whoever took it.
 */
final class CachedHandOver {

    /** How long a step waits for what the contract promises before it fails rather than hang. */
    static final long PATIENCE_SECONDS = 60;

    private CachedHandOver() {
    }

    /** Every token taken for one name, in the order taken; each must be above all before it. */
    static final class Tokens {
        private long last = Long.MIN_VALUE;

        void add(long token) {
            assertTrue(token > last, "token " + token + " after " + last);
            last = token;
        }
    }

    /** The cacher caches {@code cached} idle; the other client asks it back and gets it; then the cacher takes it again. */
    static void idle(DistributedLock cached, DistributedLock asker) throws Exception {
        Tokens tokens = new Tokens();
        for (int i = 0; i < 3; i++) {
            cached.lock();
            tokens.add(cached.fencingToken());
            cached.unlock();
        }
        assertTrue(asker.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the other client gets the idle cached lock");
        tokens.add(asker.fencingToken());
        asker.unlock();
        assertTrue(cached.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS), "the cacher gets it back");
        tokens.add(cached.fencingToken());
        cached.unlock();
    }

    /**
     * The cacher holds {@code cached}; the other client waits for it and gets it at the holder's
     * unlock, not before. {@code awaitAsked} returns once the other client has marked the lock as
     * wanted (its try's ask).
     */
    static void held(DistributedLock cached, DistributedLock asker, Runnable awaitAsked) throws Exception {
        Tokens tokens = new Tokens();
        cached.lock();
        long holderToken = cached.fencingToken();
        tokens.add(holderToken);
        Background<Long> waiter = Background.start("asker", () -> lockAndUnlock(asker));
        awaitAsked.run();
        assertTrue(cached.isHeldByCurrentThread());
        cached.unlock();
        long waiterToken = waiter.get();
        assertTrue(waiterToken > holderToken, "token " + waiterToken + " above the holder's " + holderToken);
        tokens.add(waiterToken);
    }

    /** Takes {@code lock} within the patience and gives it back: its fencing token, or -1 if not taken. */
    static long lockAndUnlock(DistributedLock lock) throws InterruptedException {
        if (!lock.tryLock(PATIENCE_SECONDS, TimeUnit.SECONDS)) {
            return -1L;
        }
        try {
            return lock.fencingToken();
        } finally {
            lock.unlock();
        }
    }

    /** The client id of the one client that caches the lock at {@code lockKey}, read from its cache field on {@code master}. */
    static String cacherId(RedisCommands<String, String> master, String lockKey) {
        List<String> cachers = master.hkeys(lockKey).stream().filter(field -> field.endsWith(":cache")).toList();
        assertEquals(1, cachers.size(), "one cache field: " + cachers);
        return cachers.get(0).substring(0, cachers.get(0).length() - ":cache".length());
    }

    /**
     * After the master that cached {@code held} (taken with {@code holderToken}) was killed and
     * replaced: once the cacher answers from the new master and has renewed there (one watchdog
     * tick, run here), either the hold was reported lost, and {@code unlock()} says so, or it is
     * intact, and {@code unlock()} hands it over with a smaller token than the waiter's. The waiting
     * client gets the lock either way. Prints which.
     */
    static void afterTheMasterWasReplaced(RedisSynchronizers cacher, String probeName, DistributedLock held,
            long holderToken, DistributedLock waiting, Queue<LostHold> lost) throws Exception {
        Await.until("the cacher answers from the new master", () -> {
            try {
                cacher.lock(probeName).isLocked();
                RedisInternals.renewNow(cacher);   // the cache renewed there, or found lost
                return true;
            } catch (SynchronizerUnavailableException e) {
                return false;
            }
        });
        boolean reportedLost = lost.stream().anyMatch(hold -> hold.fencingToken() == holderToken);
        Background<Long> waiter = Background.start("asker", () -> {
            while (true) {
                try {
                    return lockAndUnlock(waiting);
                } catch (SynchronizerUnavailableException e) {
                    // the failover is not over for this client yet
                }
            }
        });
        if (reportedLost) {
            assertThrows(LostHoldException.class, held::unlock);
        } else {
            held.unlock();
        }
        long waiterToken = waiter.get();
        assertTrue(waiterToken > 0, "the other client gets the lock");
        if (!reportedLost) {
            assertTrue(waiterToken > holderToken, "token " + waiterToken + " above the holder's " + holderToken);
        }
        System.out.printf("master killed under a held cached lock: %s%n",
                reportedLost ? "the hold was lost and reported" : "the hold survived and was handed over");
    }
}
