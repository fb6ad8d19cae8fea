package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.child.RedlockHolderMain;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Review findings on the {@link Redlock} lock, over three healthy standalone servers: contracts of
 * {@code DistributedLock} that a Redlock does not keep. Each test states what a user would check.
 */
@Tag("redis")
class RedlockReviewTest {

    private static final AtomicInteger PREFIXES = new AtomicInteger();
    private static RedlockNodes nodes;
    private static List<RedisServer> NODES;
    private static List<RedisCommands<String, String>> REDIS;

    private final List<Redlock> clients = new ArrayList<>();
    private String prefix;
    private String name;

    @BeforeAll
    static void startNodes() {
        nodes = RedlockNodes.start(3);
        NODES = nodes.servers();
        REDIS = nodes.redis();
    }

    @AfterAll
    static void stopNodes() {
        nodes.close();
    }

    @BeforeEach
    void names(TestInfo test) {
        prefix = "rlr" + PREFIXES.incrementAndGet();
        name = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void close() {
        clients.forEach(Redlock::close);
    }

    private Redlock client(Duration lease) {
        Redlock client = Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix)
                .lease(lease)
                .build();
        clients.add(client);
        return client;
    }

    private String lockKey() {
        return prefix + ":redlock:{" + name + "}";
    }

    private String tokenKey() {
        return lockKey() + ":token";
    }

    /**
     * The holder's JVM is paused (a long GC, a frozen VM) past its lease; meanwhile another client
     * takes the lock, with a greater token, and releases it, and its last token runs out on the
     * nodes a second later. The resumed holder must be told that its hold was lost ("nothing is
     * lost silently": topologies.md, "one whose holder was paused past its validity is reported when
     * the holder resumes"). Its watchdogs instead find the lock free on every node with no newer
     * last token, take the hold back everywhere (redlock-renew.lua's reply 2), and it goes on
     * believing it held the lock all along, though another client held it in between.
     */
    @Test
    void holderPausedPastItsLease_anotherHeldAndReleasedMeanwhile_resumedHolderIsToldItLostTheHold()
            throws Exception {
        String uris = NODES.stream().map(RedisServer::uri).collect(Collectors.joining(","));
        try (ChildJvm holder = ChildJvm.start(RedlockHolderMain.class, uris, prefix, name, "1500", "1000",
                NODES.get(0).uri(), prefix + "-store")) {
            long oldToken = Long.parseLong(holder.awaitLine("LOCKED", Duration.ofSeconds(60)).split(" ")[1]);
            holder.pause();
            long newToken;
            try {
                DistributedLock lock = client(Duration.ofSeconds(30)).lock(name);
                lock.lock();   // once the paused holder's lease ran out on a quorum
                newToken = lock.fencingToken();
                lock.unlock();
                Await.until("the lock and its last token are gone from every node",
                        () -> REDIS.stream().allMatch(redis -> redis.exists(lockKey(), tokenKey()) == 0));
            } finally {
                holder.resume();
            }
            assertTrue(newToken > oldToken, newToken + " after " + oldToken);
            String told;
            try {
                told = holder.awaitLine("LOST", Duration.ofSeconds(20));
            } catch (IllegalStateException silent) {
                List<String> onNodes = REDIS.stream().map(redis -> String.valueOf(redis.hgetall(lockKey()))).toList();
                throw new AssertionError("the resumed holder was never told its hold was lost (its old token "
                        + oldToken + ", the next holder's " + newToken + "); the nodes now hold: " + onNodes, silent);
            }
            assertTrue(told.startsWith("LOST"), told);
        }
    }

    /**
     * A fixed lease of a few milliseconds is accepted (at least 1 ms), but it is no longer than the
     * drift allowance: the validity left is zero or less, so every attempt on a free lock is given
     * back. tryLock() on a free lock must not answer false; either it takes the lock or it refuses
     * the lease as bad input. (lock(3, MILLISECONDS) loops for ever, hammering the nodes.)
     */
    @Test
    void tryLock_fixedLeaseNoLongerThanTheDriftAllowance_freeLockIsNotRefused() throws Exception {
        DistributedLock lock = client(Duration.ofSeconds(30)).lock(name);
        boolean acquired;
        try {
            acquired = lock.tryLock(0, 3, TimeUnit.MILLISECONDS);
        } catch (IllegalArgumentException rejected) {
            assertTrue(rejected.getMessage().contains("leaseTime"), rejected.getMessage());
            return;
        }
        assertTrue(acquired, "tryLock(0, 3 ms) on a free lock that nobody else asks for returned false");
    }

    /**
     * Waiting threads of one client record, in the holder's hash on each node, how many threads of
     * that client wait: one record per client (":w:<client-uuid>", overwritten by each try), as
     * lock-acquire-waiting.lua and getQueueLength() document. A Redlock's owner strings carry an
     * attempt number, so the record is made per thread: during one long hold, every new thread
     * that ever waited adds a field (the hash grows without bound with virtual threads or short-
     * lived workers), and other clients' getQueueLength() counts every thread that waited once.
     */
    @Test
    void waitingRecords_tenThreadsOfOneClientTriedOneAfterAnother_oneRecordAndQueueLengthOfOne() throws Exception {
        Redlock holderClient = client(Duration.ofSeconds(30));
        DistributedLock held = holderClient.lock(name);
        held.lock();
        DistributedLock waiting = client(Duration.ofSeconds(30)).lock(name);
        for (int i = 0; i < 10; i++) {
            // Each gives up after its subscribed try, which records it as a waiter.
            assertFalse(Background.start("waiter-" + i, () -> waiting.tryLock(10, TimeUnit.MILLISECONDS)).get());
        }
        for (RedisCommands<String, String> redis : REDIS) {
            List<String> records = redis.hkeys(lockKey()).stream().filter(field -> field.startsWith(":w:")).toList();
            assertTrue(records.size() <= 1, "one waiting record per client, not per thread: " + records);
        }
        assertTrue(held.getQueueLength() <= 1,
                "one client's threads waited one after another: queue length " + held.getQueueLength());
        held.unlock();
    }

    /**
     * forceUnlock() returns true only if the lock was held (DistributedLock's javadoc); a Redlock's
     * lock is held while a quorum of nodes hold it, and isLocked() says so. A key on one node of
     * three (an attempt under way, or a grant whose give-back has not landed) is not a hold.
     */
    @Test
    void forceUnlock_keyOnOneNodeOnly_returnsFalseAsIsLockedSaysNotHeld() {
        DistributedLock lock = client(Duration.ofSeconds(30)).lock(name);
        REDIS.get(2).hset(lockKey(), "someone:1:1", "5");
        REDIS.get(2).pexpire(lockKey(), 10_000);
        assertFalse(lock.isLocked());
        boolean forced = lock.forceUnlock();
        REDIS.forEach(redis -> redis.del(lockKey()));
        assertFalse(forced, "forceUnlock() reports a lock as held that isLocked() just called free");
    }

    /**
     * Closing the client wakes its waiters, which fail with IllegalStateException (as
     * RedisSynchronizers.close() documents), rather than trying once more and sleeping for the
     * holder's whole lease, or failing as if the nodes were unreachable.
     */
    @Test
    void close_whileAThreadWaitsForAnotherClientsHold_waiterFailsWithIllegalState() throws Exception {
        DistributedLock held = client(Duration.ofSeconds(60)).lock(name);
        held.lock();
        Redlock waitingClient = Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix)
                .lease(Duration.ofSeconds(60))
                .build();
        DistributedLock waiting = waitingClient.lock(name);
        Background<Void> waiter = Background.start("waiter", () -> {
            waiting.lock();
            return null;
        });
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));

        waitingClient.close();

        Throwable failure = waiter.failure();
        held.unlock();
        assertInstanceOf(IllegalStateException.class, failure, "the waiter failed with " + failure);
    }

    /**
     * A snapshot (and getQueueLength(), hasQueuedThreads()) needs a quorum of the nodes: with one
     * node of three paused, the two others answer at once and the call should not wait out the
     * command timeout for the third (the acquire path decides on a quorum for the same reason).
     */
    @Test
    void snapshot_oneNodePaused_answersFromTheQuorum() throws Exception {
        Redlock client = Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(120))
                .build();
        clients.add(client);
        DistributedLock lock = client.lock(name);
        lock.lock();
        NODES.get(2).pause();
        try {
            Background<Integer> holders = Background.start("snapshot", () -> lock.snapshot().holders().size());
            assertEquals(1, holders.get(), "the holder, seen on the quorum");
        } finally {
            NODES.get(2).resume();
        }
        lock.unlock();
    }
}
