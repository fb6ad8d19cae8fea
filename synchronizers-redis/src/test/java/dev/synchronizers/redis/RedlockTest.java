package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * A {@link Redlock} over three healthy standalone servers, inspected and tampered with node by node:
 * the settled fencing token, taking a hold back on a node that lost it, losing it below a quorum,
 * queries, and bad input. Faults (killed, paused and restarted nodes and clients) are in
 * {@code RedlockFaultTest}; the {@code DistributedLock} contract runs on a Redlock in {@code -Pcluster}.
 */
@Tag("redis")
class RedlockTest {

    private static final AtomicInteger PREFIXES = new AtomicInteger();
    private static RedlockNodes nodes;
    private static List<RedisServer> NODES;
    private static List<RedisCommands<String, String>> REDIS;

    private final List<Redlock> clients = new ArrayList<>();
    private final Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
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
        prefix = "rl" + PREFIXES.incrementAndGet();
        name = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void close() {
        for (Redlock client : clients) {
            assertEquals(0, RedisInternals.watchdogEntries(client), "no node lease left registered");
            client.close();
        }
    }

    private Redlock client() {
        return client(Duration.ofSeconds(30));
    }

    /** A client whose watchdogs tick every third of {@code lease}; tests tick them by hand. */
    private Redlock client(Duration lease) {
        Redlock client = Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix)
                .lease(lease)
                .lostHoldListener(lost::add)
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

    /** The owner field of the lock's hash on one node, or null if the node has no holder. */
    private static String ownerOn(RedisCommands<String, String> redis, String key) {
        return redis.hkeys(key).stream().filter(field -> !field.startsWith(":")).findFirst().orElse(null);
    }

    /* --------------- acquisition and the fencing token --------------- */

    /**
     * When lock() returns, a quorum of nodes hold it, record the token it returned and know it as
     * their last token; the remaining node's reply may still be on its way, and it holds it too soon.
     */
    @Test
    void lock_everyNodeUp_aQuorumKnowsTheTokenAndEveryNodeHoldsIt() {
        DistributedLock lock = client().lock(name);
        lock.lock();
        long token = lock.fencingToken();
        int carrying = 0;
        int knowing = 0;
        for (RedisCommands<String, String> redis : REDIS) {
            String owner = ownerOn(redis, lockKey());
            if (owner != null && Long.parseLong(redis.hget(lockKey(), owner)) == token) {
                carrying++;
            }
            if (Long.parseLong(String.valueOf(redis.get(tokenKey())).replace("null", "0")) >= token) {
                knowing++;
            }
        }
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        assertTrue(carrying >= 2, "a quorum records the settled token: " + carrying);
        assertTrue(knowing >= 2, "a quorum knows it as their last token: " + knowing);
        lock.unlock();
        // unlock() returns once a quorum released it; the last node's release may still be on its way.
        dev.synchronizers.fixture.Await.until("released on every node",
                () -> REDIS.stream().allMatch(redis -> redis.exists(lockKey()) == 0));
    }

    /** Tokens of successive holds by two clients increase, and a quorum has each hold under one owner string. */
    @Test
    void lock_alternatingClients_tokensIncreaseAndEachHoldHasOneOwnerEverywhere() {
        DistributedLock mine = client().lock(name);
        DistributedLock theirs = client().lock(name);
        long last = 0;
        for (int i = 0; i < 30; i++) {
            DistributedLock next = i % 2 == 0 ? mine : theirs;
            next.lock();
            long token = next.fencingToken();
            assertTrue(token > last, "token " + token + " after " + last);
            List<String> owners = new ArrayList<>();
            for (RedisCommands<String, String> redis : REDIS) {
                String owner = ownerOn(redis, lockKey());
                if (owner != null) {
                    owners.add(owner);
                }
            }
            // A node whose grant was still on its way may have none, and one whose release of the
            // last hold was still on its way may have that one; a quorum has this hold's owner.
            long withThisHold = owners.stream().filter(owner -> owners.stream().filter(owner::equals).count() >= 2)
                    .count();
            assertTrue(withThisHold >= 2, "a quorum holds it under one owner string: " + owners);
            last = token;
            next.unlock();
        }
    }

    /**
     * One node's clock runs a minute ahead (its last token is raised so): a hold whose quorum
     * includes it gets a token from that clock; the next hold, on a quorum without it, still gets a
     * greater one, because the first acquirer wrote its token back to the other nodes of its quorum.
     */
    @Test
    void fencingToken_nextQuorumWithoutTheFastNode_stillGreater() {
        long ahead = (System.currentTimeMillis() + 60_000) * 1000;
        REDIS.get(0).set(tokenKey(), Long.toString(ahead), io.lettuce.core.SetArgs.Builder.px(120_000));
        // Node 1 refuses the first acquirer (someone else's stale grant there): its quorum is {0, 2}.
        refuseOn(1);
        DistributedLock first = client().lock(name);
        assertTrue(first.tryLock());
        long fast = first.fencingToken();
        assertTrue(fast > ahead, "the fast node's proposal wins: " + fast);
        first.unlock();
        dev.synchronizers.fixture.Await.until("released on nodes 0 and 2",
                () -> ownerOn(REDIS.get(0), lockKey()) == null && ownerOn(REDIS.get(2), lockKey()) == null);
        REDIS.get(1).del(lockKey());
        // Node 0 refuses the next acquirer: its quorum is {1, 2}, and only node 2 saw the first token.
        refuseOn(0);
        DistributedLock next = client().lock(name);
        assertTrue(next.tryLock());
        assertTrue(next.fencingToken() > fast, next.fencingToken() + " after " + fast);
        next.unlock();
        REDIS.get(0).del(lockKey(), tokenKey());
    }

    /** Whether the node's holder, if any, records {@code token}. */
    private boolean recordsToken(RedisCommands<String, String> redis, long token) {
        String owner = ownerOn(redis, lockKey());
        return owner != null && Long.toString(token).equals(redis.hget(lockKey(), owner));
    }

    /** Gives node {@code index} a foreign hold of the lock, so that it refuses every acquirer. */
    private void refuseOn(int index) {
        REDIS.get(index).hset(lockKey(), "someone:1:1", "1");
        REDIS.get(index).pexpire(lockKey(), 60_000);
    }

    /** A waiter of another client sleeps on its wake-up and gets the lock when it is released. */
    @Test
    void lock_heldByOtherClient_waiterWokenByTheRelease() throws Exception {
        DistributedLock holder = client().lock(name);
        DistributedLock waiting = client().lock(name);
        holder.lock();
        Background<Long> waiter = Background.start("waiter", () -> {
            waiting.lock();
            try {
                return waiting.fencingToken();
            } finally {
                waiting.unlock();
            }
        });
        dev.synchronizers.fixture.Await.until("the waiter sleeps on its wake-up",
                () -> RedisState.sleepsOnWakeup(waiter.thread()));
        long token = holder.fencingToken();
        holder.unlock();
        assertTrue(waiter.get() > token);
    }

    /* --------------- renewal --------------- */

    /** A node that lost the hold (restarted empty) gets it back at the next renewal, with its token; nothing is reported lost. */
    @Test
    void renewal_nodeLostItsData_holdTakenBackThere() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        // lock() returns once a quorum confirmed; node 1 may be the one whose grant is still on its way.
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        RedisInternals.renewNow(client);   // every node renewed: each one counts
        String owner = ownerOn(REDIS.get(1), lockKey());
        REDIS.get(1).del(lockKey(), tokenKey());

        RedisInternals.renewNow(client);

        assertEquals(Long.toString(token), REDIS.get(1).hget(lockKey(), owner), "taken back with the settled token");
        assertEquals(Long.toString(token), REDIS.get(1).get(tokenKey()));
        assertTrue(REDIS.get(1).pttl(lockKey()) > 0, "with a lease");
        assertTrue(lost.isEmpty(), "nothing lost: " + lost);
        assertTrue(lock.isHeldByCurrentThread());
        lock.unlock();
    }

    /**
     * A node that issued a newer token after losing the hold (another acquirer tried there) is not
     * taken back: the hold stays on the other quorum; when a second node goes the same way, the hold
     * is lost, reported GONE, and unlock() throws.
     */
    @Test
    void renewal_newerTokenOnTwoNodes_lostBelowQuorumAndReported() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        RedisInternals.renewNow(client);   // every node renewed: each one counts
        REDIS.get(0).del(lockKey());
        REDIS.get(0).set(tokenKey(), Long.toString(token + 1_000_000));

        RedisInternals.renewNow(client);

        assertEquals(0, REDIS.get(0).exists(lockKey()), "not taken back past a newer token");
        assertTrue(lost.isEmpty(), "two of three still hold it: " + lost);
        assertTrue(lock.isHeldByCurrentThread());

        REDIS.get(2).del(lockKey());
        REDIS.get(2).set(tokenKey(), Long.toString(token + 1_000_000));
        RedisInternals.renewNow(client);

        assertFalse(lock.isHeldByCurrentThread(), "lost at this renewal, not when the first grant's lease runs out");

        // Listeners run on a watchdog thread, after the tick.
        dev.synchronizers.fixture.Await.until("the listener is told", () -> !lost.isEmpty());
        LostHold hold = lost.poll();
        assertTrue(hold != null, "reported lost");
        assertEquals(LostHold.Cause.GONE, hold.cause());
        assertEquals(token, hold.fencingToken());
        assertEquals("redlock", hold.kind());
        assertFalse(lock.isHeldByCurrentThread());
        dev.synchronizers.fixture.Await.until("what the last node had is given back, not left to run out",
                () -> REDIS.get(1).exists(lockKey()) == 0);
        LostHoldException thrown = assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(LostHold.Cause.GONE, thrown.lostCause());
    }

    /**
     * A node where another acquisition held the lock for a while (a stale grant, a release that had
     * not landed yet) counts again once a renewal takes the hold back there, so the hold then
     * survives losing another node.
     */
    @Test
    void renewal_nodeHeldByAnotherForAWhile_takenBackOnceFreeAndCountsAgain() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        lock.lock();
        long token = lock.fencingToken();
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        RedisInternals.renewNow(client);
        // A node of the quorum that settled the token (its last token is the hold's): a node whose
        // grant came late may have proposed more, and is never taken back once it loses the hold.
        int taken = 0;
        while (!Long.toString(token).equals(REDIS.get(taken).get(tokenKey()))) {
            taken++;
        }
        int other = (taken + 1) % 3;
        String owner = ownerOn(REDIS.get(taken), lockKey());
        REDIS.get(taken).hdel(lockKey(), owner);
        REDIS.get(taken).hset(lockKey(), "someone:1:1", "1");

        RedisInternals.renewNow(client);   // gone there
        REDIS.get(taken).del(lockKey());   // the other acquisition ends
        RedisInternals.renewNow(client);   // taken back

        assertEquals(Long.toString(token), REDIS.get(taken).hget(lockKey(), owner));
        REDIS.get(other).del(lockKey());
        REDIS.get(other).set(tokenKey(), Long.toString(token + 1_000_000));
        RedisInternals.renewNow(client);   // the other node: gone for good; two nodes still a quorum

        assertTrue(lock.isHeldByCurrentThread());
        assertTrue(lost.isEmpty(), "nothing lost: " + lost);
        lock.unlock();
        REDIS.get(other).del(tokenKey());
    }

    /**
     * A holding thread that ends without unlocking is reported (ABANDONED) and its hold is no longer
     * renewed, also once every node's lease was registered again (each node lost the hold for a
     * while and was taken back).
     */
    @Test
    void abandoned_afterEveryNodeWasTakenBack_reportedAndNotRenewed() throws Exception {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch end = new java.util.concurrent.CountDownLatch(1);
        Background<Void> holder = Background.start("holder", () -> {
            lock.lock();
            locked.countDown();
            end.await();
            return null;   // ends holding it
        });
        locked.await();
        dev.synchronizers.fixture.Await.until("every node holds it",
                () -> REDIS.stream().allMatch(redis -> ownerOn(redis, lockKey()) != null));
        RedisInternals.renewNow(client);
        String owner = ownerOn(REDIS.get(0), lockKey());
        for (RedisCommands<String, String> redis : REDIS) {
            String token = redis.hget(lockKey(), owner);
            redis.hdel(lockKey(), owner);
            redis.hset(lockKey(), "someone:1:1", "1");
            RedisInternals.renewNow(client);   // gone on this node
            redis.del(lockKey());
            redis.set(tokenKey(), token);       // no newer token was issued here
            RedisInternals.renewNow(client);   // taken back
            assertEquals(token, redis.hget(lockKey(), owner));
        }
        end.countDown();
        holder.get();

        RedisInternals.renewNow(client);

        dev.synchronizers.fixture.Await.until("the listener is told", () -> !lost.isEmpty());
        assertEquals(LostHold.Cause.ABANDONED, lost.poll().cause());
        assertEquals(0, RedisInternals.watchdogEntries(client), "no node renews it any more");
    }

    /** A fixed lease is not renewed and is held on the granting nodes only for its length. */
    @Test
    void lock_fixedLease_endsWithItsLeaseOnEveryNode() throws Exception {
        DistributedLock lock = client().lock(name);
        // Long enough that the quorum tryLock() returned on still has it when it is looked at.
        long fixedMillis = 5_000;
        assertTrue(lock.tryLock(0, fixedMillis, TimeUnit.MILLISECONDS));
        int withTheFixedLease = 0;
        for (RedisCommands<String, String> redis : REDIS) {
            // Not there (-2) is no failure on a node beyond the quorum: its grant may still be on
            // its way. Never a key without a lease, or with a longer one (a renewal).
            long pttl = redis.pttl(lockKey());
            assertTrue(pttl == -2 || pttl > 0 && pttl <= fixedMillis, "the fixed lease wherever it is held: " + pttl);
            if (pttl > 0) {
                withTheFixedLease++;
            }
        }
        assertTrue(withTheFixedLease >= 2, "a quorum holds it with the fixed lease: " + withTheFixedLease + " of 3");
        dev.synchronizers.fixture.Await.until("the lease runs out on every node",
                () -> REDIS.stream().allMatch(redis -> redis.exists(lockKey()) == 0));
        assertFalse(lock.isHeldByCurrentThread());
        LostHoldException thrown = assertThrows(LostHoldException.class, lock::unlock);
        assertEquals(LostHold.Cause.LEASE_EXPIRED, thrown.lostCause());
    }

    /* --------------- queries and force --------------- */

    /** A key on one node of three (an attempt under way) is not a hold. */
    @Test
    void isLocked_keyOnOneNodeOnly_isFalse() {
        DistributedLock lock = client().lock(name);
        REDIS.get(2).hset(lockKey(), "someone:1:1", "5");
        REDIS.get(2).pexpire(lockKey(), 10_000);
        assertFalse(lock.isLocked());
        assertTrue(lock.snapshot().holders().isEmpty());
        REDIS.get(2).del(lockKey());
    }

    /** A snapshot names the holder's client, thread and token, with its lease, renewed by this client. */
    @Test
    void snapshot_held_namesTheHolder() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        lock.lock();
        // A node whose grant was still on its way when lock() returned records its own proposal
        // until the settled token reaches it; the snapshot's token is the largest a node records.
        dev.synchronizers.fixture.Await.until("every node records the settled token",
                () -> REDIS.stream().allMatch(redis -> recordsToken(redis, lock.fencingToken())));
        LockSnapshot snapshot = lock.snapshot();
        assertEquals(1, snapshot.holders().size());
        LockSnapshot.Holder holder = snapshot.holders().get(0);
        assertEquals(client.clientId(), holder.clientId());
        assertEquals(Machinery.currentThreadId(), holder.threadId());
        assertEquals(lock.fencingToken(), holder.fencingToken());
        assertTrue(holder.leaseRemainingMillis() > 0 && holder.leaseRemainingMillis() <= 30_000);
        assertEquals(LockSnapshot.Renewal.RENEWED, holder.renewal());
        assertEquals(0, snapshot.queueLength());
        lock.unlock();
        assertFalse(lock.snapshot().isLocked());
    }

    /** forceUnlock() raises every node's token, so the holder's watchdog cannot take the hold back: it learns it is gone. */
    @Test
    void forceUnlock_holderInOtherClient_notTakenBackAndReportedGone() {
        Redlock holderClient = client();
        DistributedLock held = holderClient.lock(name);
        held.lock();
        assertTrue(client().lock(name).forceUnlock());

        RedisInternals.renewNow(holderClient);

        assertFalse(held.isHeldByCurrentThread(), "lost at this renewal, not when the first grant's lease runs out");
        for (RedisCommands<String, String> redis : REDIS) {
            assertEquals(0, redis.exists(lockKey()), "not taken back");
        }
        // Listeners run on a watchdog thread, after the tick.
        dev.synchronizers.fixture.Await.until("the listener is told", () -> !lost.isEmpty());
        LostHold hold = lost.poll();
        assertTrue(hold != null, "reported lost");
        assertEquals(LostHold.Cause.GONE, hold.cause());
        assertThrows(LostHoldException.class, held::unlock);
    }

    /* --------------- bad input --------------- */

    /** Bad arguments throw, naming the argument, and nothing is connected or written. */
    @Test
    void builder_badArguments_throwNamingThem() {
        String a = NODES.get(0).uri();
        String b = NODES.get(1).uri();
        String c = NODES.get(2).uri();
        assertMessage("nodes", assertThrows(IllegalArgumentException.class, () -> Redlock.create(a, b)));
        assertMessage("twice", assertThrows(IllegalArgumentException.class, () -> Redlock.create(a, b, a)));
        assertMessage("nodes", assertThrows(IllegalArgumentException.class, () -> Redlock.create(a, b, "not a uri")));
        assertMessage("nodes", assertThrows(IllegalArgumentException.class,
                () -> Redlock.create(a, b, "redis-sentinel://127.0.0.1:26379#mymaster")));
        assertMessage("nodes", assertThrows(NullPointerException.class, () -> Redlock.create(a, b, null)));
        assertMessage("clockDriftFactor", assertThrows(IllegalArgumentException.class,
                () -> Redlock.builder().clockDriftFactor(0.5)));
        assertMessage("clockDriftFactor", assertThrows(IllegalArgumentException.class,
                () -> Redlock.builder().clockDriftFactor(Double.NaN)));
        assertMessage("lease", assertThrows(IllegalArgumentException.class,
                () -> Redlock.builder().lease(Duration.ofMillis(29))));
        assertMessage("commandTimeout", assertThrows(IllegalArgumentException.class,
                () -> Redlock.builder().commandTimeout(Duration.ZERO)));
        assertMessage("nodes", assertThrows(IllegalStateException.class, () -> Redlock.builder().build()));
        assertMessage("drift", assertThrows(IllegalStateException.class,
                () -> Redlock.builder().nodes(a, b, c).lease(Duration.ofMillis(40)).clockDriftFactor(0.49).build()));
        Redlock client = client();
        assertMessage("name", assertThrows(IllegalArgumentException.class, () -> client.lock("")));
        DistributedLock lock = client.lock(name);
        assertMessage("leaseTime", assertThrows(IllegalArgumentException.class, () -> lock.lock(0, TimeUnit.SECONDS)));
        for (RedisCommands<String, String> redis : REDIS) {
            List<String> keys = new ArrayList<>();
            redis.scan(keys::add, ScanArgs.Builder.matches(prefix + ":*"));
            assertTrue(keys.isEmpty(), "nothing written: " + keys);
        }
    }

    /** A closed client refuses new locks and calls with IllegalStateException. */
    @Test
    void close_thenCalls_throwIllegalState() {
        Redlock client = client();
        DistributedLock lock = client.lock(name);
        client.close();
        assertThrows(IllegalStateException.class, () -> client.lock(name));
        assertThrows(IllegalStateException.class, lock::tryLock);
        assertNull(ownerOn(REDIS.get(0), lockKey()));
    }

    private static void assertMessage(String expected, Throwable thrown) {
        assertTrue(String.valueOf(thrown.getMessage()).contains(expected),
                "message names " + expected + ": " + thrown.getMessage());
    }
}
