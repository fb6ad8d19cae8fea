package dev.synchronizers.redis.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LostHold;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.redis.child.RedlockHolderMain;
import dev.synchronizers.redis.child.RedlockWorkerMain;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A {@link Redlock} under faults: five independent servers (persisting every write, so a restart
 * keeps what they granted), killed, paused and restarted under client JVMs and threads, with the
 * counter they protect kept in a sixth server that checks fencing tokens; and three servers without
 * persistence for the classic caveat of a node that restarts empty.
 */
@Tag("topology")
class RedlockFaultTest {

    private static final Duration LINE = Duration.ofSeconds(60);
    private static final AtomicInteger PREFIXES = new AtomicInteger();
    private static final List<RedisServer> NODES = new ArrayList<>();
    private static RedisServer store;
    private static RedisClient storeClient;
    private static RedisCommands<String, String> storeRedis;

    private final List<Redlock> clients = new ArrayList<>();
    private final List<ChildJvm> jvms = new ArrayList<>();
    private final Queue<LostHold> lost = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 5; i++) {
            NODES.add(RedisServers.start(RedisServers.Options.defaults().managed()
                    .args("--appendonly", "yes", "--appendfsync", "always")));
        }
        store = RedisServers.startManaged();
        storeClient = RedisClient.create(store.uri());
        storeRedis = storeClient.connect(StringCodec.UTF8).sync();
    }

    @AfterAll
    static void stopServers() {
        storeClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        store.close();
        NODES.forEach(RedisServer::close);
    }

    @AfterEach
    void closeClients() {
        jvms.forEach(ChildJvm::close);
        clients.forEach(Redlock::close);
        // A test that failed half-way leaves nodes down: the next one starts with all five.
        for (RedisServer node : NODES) {
            if (!node.isRunning()) {
                node.restart();
            }
        }
    }

    private static String nodeUris(List<RedisServer> nodes) {
        return nodes.stream().map(RedisServer::uri).collect(Collectors.joining(","));
    }

    private Redlock client(List<RedisServer> nodes, String prefix, Duration lease, Duration timeout) {
        Redlock client = Redlock.builder()
                .nodes(nodes.stream().map(RedisServer::uri).toArray(String[]::new))
                .keyPrefix(prefix)
                .lease(lease)
                .commandTimeout(timeout)
                .lostHoldListener(lost::add)
                .build();
        clients.add(client);
        return client;
    }

    private static long storeCount(String prefix, int which) {
        String value = storeRedis.get(RedlockWorkerMain.storeKeys(prefix)[which]);
        return value == null ? 0 : Long.parseLong(value);
    }

    private static long accepted(String prefix) {
        return storeCount(prefix, 3);
    }

    /**
     * Three client JVMs of four threads each increment the store's counter under one lock. Two of
     * five nodes are SIGKILLed: nothing reaches a caller, no update is lost, no stale write happens.
     * A third is killed: every JVM gets a SynchronizerUnavailableException that says how many nodes
     * answered; once one node is back, they go on.
     */
    @Test
    void threeJvms_twoOfFiveKilledThenThree_noLostUpdateThenUnavailableThenRecovery() throws Exception {
        String prefix = "jvm" + PREFIXES.incrementAndGet();
        for (int i = 0; i < 3; i++) {
            jvms.add(ChildJvm.start(RedlockWorkerMain.class, nodeUris(NODES), prefix, "counter", "2000", "1000",
                    store.uri(), "4"));
        }
        for (ChildJvm jvm : jvms) {
            jvm.awaitLine("READY", LINE);
        }
        awaitWorkers("100 increments on five nodes", () -> accepted(prefix) >= 100);

        NODES.get(3).kill();
        NODES.get(4).kill();
        long twoDown = accepted(prefix);
        awaitWorkers("300 more increments with two nodes down", () -> accepted(prefix) >= twoDown + 300);

        long beforeThird = accepted(prefix);
        long thirdKilledAt = System.currentTimeMillis();
        NODES.get(2).kill();
        List<String> firstErrors = new ArrayList<>();
        for (ChildJvm jvm : jvms) {
            firstErrors.add(jvm.awaitLine("ERROR", LINE));
        }
        long firstErrorAt = System.currentTimeMillis();
        long stalled = accepted(prefix);

        long restartedAt = System.currentTimeMillis();
        NODES.get(2).restart();
        awaitWorkers("100 more increments once a third node is back", () -> accepted(prefix) >= stalled + 100);
        long recoveredAt = System.currentTimeMillis();
        storeRedis.set(RedlockWorkerMain.stopKey(prefix), "1");
        long ok = 0;
        for (ChildJvm jvm : jvms) {
            Matcher done = Pattern.compile("DONE ok=(\\d+)").matcher(jvm.awaitLine("DONE", LINE));
            assertTrue(done.find());
            ok += Long.parseLong(done.group(1));
        }

        long errors = 0;
        long lostLines = 0;
        long latestFirstError = 0;
        for (int i = 0; i < jvms.size(); i++) {
            latestFirstError = Math.max(latestFirstError, Long.parseLong(firstErrors.get(i).split(" ")[1]));
            for (String line : jvms.get(i).output().split("\n")) {
                errors += line.startsWith("ERROR ") ? 1 : 0;
                lostLines += line.startsWith("LOST ") ? 1 : 0;
            }
        }
        System.out.printf("redlock 3 JVMs x 4 threads: %d increments in all (%d on 5 nodes and then with 2 down,"
                + " before the third kill), no error before it; every JVM's first error within %d ms of the third kill (seen by the test"
                + " after %d ms); %d errors and %d lost holds while 2 of 5 answered; 100 more increments %d ms after a"
                + " node came back; store: %d accepted, %d refused%n", ok, beforeThird, latestFirstError - thirdKilledAt,
                firstErrorAt - thirdKilledAt, errors, lostLines, recoveredAt - restartedAt, accepted(prefix),
                storeCount(prefix, 2));
        for (String error : firstErrors) {
            assertTrue(error.contains("SynchronizerUnavailableException") && error.contains("of 5 nodes answered")
                    && error.contains("a quorum is 3"), "a clear error naming how many nodes answered: " + error);
        }
        for (ChildJvm jvm : jvms) {
            for (String line : jvm.output().split("\n")) {
                if (line.startsWith("ERROR ") || line.startsWith("LOST ")) {
                    long at = Long.parseLong(line.split(" ")[1]);
                    assertTrue(at >= thirdKilledAt, "nothing reached a caller before the third node died: " + line);
                }
            }
        }
        assertEquals(0, storeCount(prefix, 2), "no write or read with a stale token");
        assertEquals(accepted(prefix), storeCount(prefix, 1), "no lost update: the value counts every accepted write");
        assertEquals(accepted(prefix), ok, "every increment a caller saw accepted is in the store");
    }

    /** Awaits a condition; if it does not come, fails with the end of every worker JVM's output. */
    private void awaitWorkers(String what, java.util.function.BooleanSupplier condition) {
        try {
            Await.until(what, condition);
        } catch (AssertionError e) {
            StringBuilder outputs = new StringBuilder(e.getMessage());
            for (ChildJvm jvm : jvms) {
                String output = jvm.output();
                outputs.append("\n--- worker output (end) ---\n").append(output.substring(Math.max(0, output.length() - 3000)));
            }
            throw new AssertionError(outputs.toString(), e);
        }
    }

    /**
     * One node of five is SIGSTOPped while a client takes and releases the lock: every acquisition
     * succeeds on the other four, and what the paused node granted late is released once it resumes.
     */
    @Test
    void pausedNode_acquisitionsSucceedOnTheOthers_lateGrantsReleasedOnResume() throws Exception {
        String prefix = "pause" + PREFIXES.incrementAndGet();
        Redlock client = client(NODES, prefix, Duration.ofSeconds(10), Duration.ofMillis(500));
        Redlock other = client(NODES, prefix, Duration.ofSeconds(10), Duration.ofMillis(500));
        DistributedLock lock = client.lock("order-42");
        String key = prefix + ":redlock:{order-42}";
        RedisServer paused = NODES.get(4);
        paused.pause();
        try {
            for (int i = 0; i < 20; i++) {
                lock.lock();
                assertFalse(Background.start("other client", () -> other.lock("order-42").tryLock()).get(),
                        "held on a quorum: the other client cannot take it");
                lock.unlock();
            }
        } finally {
            paused.resume();
        }
        try (var connection = RedisClient.create(paused.uri()).connect(StringCodec.UTF8)) {
            Await.until("the paused node ran the late grants and their releases",
                    () -> connection.sync().exists(key) == 0);
        }
        Await.until("no release left to retry", () -> RedisInternals.pendingRetries(client) == 0);
        assertFalse(lock.isLocked());
        assertTrue(lost.isEmpty(), "nothing lost: " + lost);
    }

    /**
     * A holder JVM SIGSTOPped past its validity: another client takes the lock once the holder's
     * lease ran out on the nodes, with a greater token, and writes the store. The holder, resumed,
     * is told its hold is lost, and its write with the old token is refused by the store.
     */
    @Test
    void holderPausedPastValidity_reportedLostAndItsTokenRefused() throws Exception {
        String prefix = "gc" + PREFIXES.incrementAndGet();
        ChildJvm holder = ChildJvm.start(RedlockHolderMain.class, nodeUris(NODES), prefix, "ledger", "1500", "1000",
                store.uri(), prefix);
        jvms.add(holder);
        long oldToken = Long.parseLong(holder.awaitLine("LOCKED", LINE).split(" ")[1]);
        holder.pause();
        DistributedLock lock = client(NODES, prefix, Duration.ofSeconds(30), Duration.ofSeconds(1)).lock("ledger");
        long newToken;
        try {
            lock.lock();   // once the paused holder's lease runs out on a quorum
            newToken = lock.fencingToken();
            String[] keys = RedlockWorkerMain.storeKeys(prefix);
            assertEquals(1L, (Long) storeRedis.eval(RedlockWorkerMain.WRITE, ScriptOutputType.INTEGER, keys,
                    Long.toString(newToken), "1"));
        } finally {
            holder.resume();
        }
        assertTrue(newToken > oldToken, "the new holder's token is greater");
        assertEquals("LOST GONE", holder.awaitLine("LOST", LINE));
        assertEquals("WRITE 0", holder.awaitLine("WRITE", LINE), "the store refused the stale token");
        assertEquals("UNLOCK LostHoldException", holder.awaitLine("UNLOCK", LINE));
        assertTrue(lock.isHeldByCurrentThread(), "the new holder keeps it");
        lock.unlock();
        assertEquals(1, storeCount(prefix, 2), "one refused write");
    }

    /**
     * Fencing tokens strictly increase over 1,000 acquisitions by six threads of three clients while
     * the nodes are killed and restarted one after another (with their data), so that successive
     * quorums differ, and while one node's clock runs a minute ahead (its last token raised): a
     * quorum without it must still issue greater tokens, which only the write-back of each settled
     * token makes so.
     */
    @Test
    void tokens_thousandAcquisitionsWhileNodesRestart_strictlyIncrease() throws Exception {
        String prefix = "tok" + PREFIXES.incrementAndGet();
        String tokenKey = prefix + ":redlock:{serial}:token";
        long aheadMicros = (System.currentTimeMillis() + 60_000) * 1000;
        try (var connection = RedisClient.create(NODES.get(0).uri()).connect(StringCodec.UTF8)) {
            connection.sync().set(tokenKey, Long.toString(aheadMicros), io.lettuce.core.SetArgs.Builder.px(120_000));
        }
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<Background<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            DistributedLock lock = client(NODES, prefix, Duration.ofSeconds(5), Duration.ofSeconds(1)).lock("serial");
            for (int t = 0; t < 2; t++) {
                workers.add(Background.start("client-" + c + "-" + t, () -> {
                    while (tokens.size() < 1000) {
                        lock.lock();
                        try {
                            tokens.add(lock.fencingToken());
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
        }
        for (int k = 1; k <= 8; k++) {
            int at = k * 100;
            Await.until(at + " acquisitions", () -> tokens.size() >= at);
            RedisServer node = NODES.get(k % NODES.size());
            node.kill();
            Await.until((at + 30) + " acquisitions with node " + (k % NODES.size()) + " down",
                    () -> tokens.size() >= at + 30);
            node.restart();
        }
        for (Background<Void> worker : workers) {
            worker.get();
        }
        List<Long> seen = List.copyOf(tokens);
        assertTrue(seen.size() >= 1000);
        for (int i = 1; i < seen.size(); i++) {
            assertTrue(seen.get(i) > seen.get(i - 1), "token " + i + " (" + seen.get(i) + ") after " + seen.get(i - 1));
        }
        assertTrue(seen.get(seen.size() - 1) > aheadMicros, "past the fast node's last token");
        System.out.printf("redlock tokens: %d acquisitions by 6 threads of 3 clients, 8 node kills and restarts,"
                + " strictly increasing from %d to %d%n", seen.size(), seen.get(0), seen.get(seen.size() - 1));
        assertTrue(lost.isEmpty(), "nothing lost: " + lost);
    }

    /**
     * A client started while a node is down works on the others, and connects that node once it is
     * back: a hold taken meanwhile is taken back there at the next renewal. With fewer than a quorum
     * reachable, the build fails naming how many were.
     */
    @Test
    void build_nodeDownAtStart_worksOnTheOthersAndConnectsItOnceBack() throws Exception {
        String prefix = "late" + PREFIXES.incrementAndGet();
        RedisServer late = NODES.get(4);
        late.kill();
        Redlock client = client(NODES, prefix, Duration.ofMillis(1500), Duration.ofSeconds(1));
        DistributedLock lock = client.lock("report");
        lock.lock();

        late.restart();
        try (var connection = RedisClient.create(late.uri()).connect(StringCodec.UTF8)) {
            Await.until("the late node is connected and its renewal takes the hold there",
                    () -> connection.sync().exists(prefix + ":redlock:{report}") == 1);
        }
        assertTrue(lock.isHeldByCurrentThread());
        lock.unlock();
        assertTrue(lost.isEmpty(), "nothing lost: " + lost);

        NODES.get(0).kill();
        NODES.get(1).kill();
        NODES.get(2).kill();
        dev.synchronizers.SynchronizerUnavailableException thrown = org.junit.jupiter.api.Assertions.assertThrows(
                dev.synchronizers.SynchronizerUnavailableException.class,
                () -> client(NODES, prefix, Duration.ofSeconds(3), Duration.ofSeconds(1)));
        assertTrue(thrown.getMessage().contains("only 2 of 5 nodes reachable") && thrown.getMessage().contains("a quorum is 3"),
                thrown.getMessage());
    }

    /* --------------- the caveat: a node that restarts empty --------------- */

    /**
     * Restarting a node without its data at once can break mutual exclusion: a hold on a bare
     * quorum ({n0, n1}; n2 was down) loses n1's copy, and another client takes {n1, n2} while the
     * first still believes it holds. Its watchdog's next renewal tells it (GONE), but the overlap
     * happened. This is why a node without persistence must stay down for at least a lease.
     */
    @Test
    void restartEmptyAtOnce_anotherClientTakesTheLockWhileTheHolderStillHoldsIt() throws Exception {
        try (Bare nodes = new Bare()) {
            String prefix = "bare" + PREFIXES.incrementAndGet();
            Redlock holderClient = client(nodes.servers, prefix, Duration.ofMinutes(2), Duration.ofSeconds(1));
            DistributedLock holder = holderClient.lock("job");
            nodes.servers.get(2).kill();
            holder.lock();
            nodes.servers.get(2).restart();
            nodes.servers.get(1).restart();   // empty, at once

            DistributedLock other = client(nodes.servers, prefix, Duration.ofMinutes(2), Duration.ofSeconds(1)).lock("job");
            assertTrue(Background.start("other client", other::tryLock).get(), "the other client got the lock");
            assertTrue(holder.isHeldByCurrentThread(), "while the holder still believes it holds it: exclusion broken");

            Await.until("the holder's watchdog finds its hold gone", () -> {
                RedisInternals.renewNow(holderClient);
                return !lost.isEmpty();
            });
            assertEquals(LostHold.Cause.GONE, lost.poll().cause());
            assertFalse(holder.isHeldByCurrentThread());
        }
    }

    /**
     * With the rule (a node that lost its data stays down for at least a lease, in which the
     * holder's watchdog renews at least once), the holder takes back the node that came back empty
     * earlier, and when the other node returns empty, no other client can take the lock.
     */
    @Test
    void restartEmptyAfterALease_holderTakesTheFreeNodeBackAndKeepsTheLock() throws Exception {
        try (Bare nodes = new Bare()) {
            String prefix = "bare" + PREFIXES.incrementAndGet();
            Redlock holderClient = client(nodes.servers, prefix, Duration.ofMinutes(2), Duration.ofSeconds(1));
            DistributedLock holder = holderClient.lock("job");
            nodes.servers.get(2).kill();
            holder.lock();
            nodes.servers.get(2).restart();
            nodes.servers.get(1).kill();   // stays down for the delay

            // A lease holds three watchdog ticks; the test runs them rather than waiting two minutes.
            try (var n2 = RedisClient.create(nodes.servers.get(2).uri()).connect(StringCodec.UTF8)) {
                Await.until("the holder's renewal takes the empty node back", () -> {
                    RedisInternals.renewNow(holderClient);
                    return n2.sync().exists(prefix + ":redlock:{job}") == 1;
                });
            }
            nodes.servers.get(1).restart();   // empty, after the delay

            DistributedLock other = client(nodes.servers, prefix, Duration.ofMinutes(2), Duration.ofSeconds(1)).lock("job");
            assertFalse(Background.start("other client", other::tryLock).get(), "the other client cannot take it");
            assertTrue(holder.isHeldByCurrentThread());
            assertTrue(lost.isEmpty(), "nothing lost: " + lost);
            holder.unlock();
        }
    }

    /** Three managed servers that keep nothing across a restart, stopped at the end of a test. */
    private static final class Bare implements AutoCloseable {
        final List<RedisServer> servers = new ArrayList<>();

        Bare() {
            for (int i = 0; i < 3; i++) {
                servers.add(RedisServers.startManaged());
            }
        }

        @Override
        public void close() {
            servers.forEach(RedisServer::close);
        }
    }
}
