package dev.synchronizers.soak;

import dev.synchronizers.fixture.Opened;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Redlock soak: {@value #SLOTS} client JVMs of {@link SoakWorkerMain#THREADS} threads each take
 * and release two {@link dev.synchronizers.redis.Redlock} locks over {@value #NODES} persistent
 * nodes, each JVM reaching each node through a {@link FaultProxy} of its own, while a nemesis in
 * this JVM stalls a node (SIGSTOP for less and for more than a lease), kills one or two nodes and
 * restarts them with their data, runs {@code SCRIPT FLUSH} on a node, loses replies of commands
 * that ran (held, then cut) and delivers replies after the command timeout between one client and
 * one node or all of them, cuts, delays and partitions a client from one node or from all, and
 * SIGKILLs a client JVM and starts another in its place. At most two nodes are down or stalled at
 * once. Afterwards it lets one lease pass and checks that no key of a hold remains on any node,
 * then has {@link HistoryChecker} judge the histories and the {@link Witness}'s records: no two
 * uncovered holds overlap, no fenced write of an uncovered hold is refused, nothing hangs. It prints
 * one summary line ({@code redlock soak: ...}) and fails on any violation.
 *
 * <p>Run with {@code -Psoak}; {@code redlock.soak.seconds} (20 unless the profile says otherwise)
 * sets how long the nemesis runs, {@code soak.seed} replays a schedule; lease and timeouts are
 * {@link FaultSoakTest}'s properties. The run's files stay in {@code target/soak/redlock-<run>/}.
 */
@Tag("soak")
class RedlockSoakTest {

    private static final int SLOTS = 3;
    private static final int NODES = 5;
    private static final String PREFIX = "rsoak";

    private final Opened opened = new Opened();
    private final long seconds = Long.getLong("redlock.soak.seconds", 20);
    private final long seed = Long.getLong("soak.seed", System.nanoTime());
    private final long leaseMillis = Long.getLong("soak.leaseMillis", 2000);
    private final long commandTimeoutMillis = Long.getLong("soak.commandTimeoutMillis", 500);
    private final long slackMillis = Long.getLong("soak.slackMillis", 5000);
    private final Random random = new Random(seed);
    private final Map<String, Integer> faults = new LinkedHashMap<>();
    private final Set<String> killed = new HashSet<>();
    private final List<String> finalViolations = new ArrayList<>();
    private final List<RedisServer> nodes = new ArrayList<>();
    /** A connection to each node, for the nemesis and the final check; Lettuce reconnects it after a restart. */
    private final List<RedisCommands<String, String>> admins = new ArrayList<>();
    private String witnessUri;
    private Witness witness;
    private Path dir;
    private int jvms;

    /** One client JVM's place: its proxy to each node, and the JVM now running in it. */
    private static final class Slot {
        final List<FaultProxy> proxies = new ArrayList<>();
        String jvm;
        ChildJvm child;
    }

    @AfterEach
    void closeAll() throws Exception {
        opened.closeAll();
    }

    /**
     * Under node stalls, kills and restarts, script flushes, lost and late replies, partitions and
     * client crashes: no two uncovered holds of a lock overlap, fenced writes of live holds are never
     * refused, no operation hangs, and no key of a hold outlives its lease.
     */
    @Test
    void redlockSoak_underFaults_noViolation() throws Exception {
        dir = Path.of("target", "soak", "redlock-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        for (int i = 0; i < NODES; i++) {
            nodes.add(opened.add(RedisServers.start(RedisServers.Options.defaults().managed()
                    .args("--appendonly", "yes", "--appendfsync", "always"))));
            admins.add(opened.commands(nodes.get(i).uri()));
        }
        RedisServer witnessServer = opened.add(RedisServers.startManaged());
        witnessUri = witnessServer.uri();
        witness = opened.add(Witness.connect(witnessUri, "soak-nemesis"));
        List<Slot> slots = new ArrayList<>();
        for (int i = 0; i < SLOTS; i++) {
            Slot slot = new Slot();
            for (RedisServer node : nodes) {
                slot.proxies.add(opened.add(FaultProxy.start(node.port())));
            }
            start(slot);
            slots.add(slot);
        }
        runNemesis(slots);
        stopWorkers(slots);
        checkFinalState();
        SoakReport.judge("redlock soak", dir, jvms, witness, killed, faults, finalViolations, seconds, seed);
    }

    /* --------------- workers --------------- */

    private void start(Slot slot) throws InterruptedException {
        slot.jvm = "w" + (++jvms);
        String uris = slot.proxies.stream().map(FaultProxy::uri).collect(Collectors.joining(","));
        slot.child = opened.add(ChildJvm.start(SoakWorkerMain.class.getName(),
                Map.of("org.slf4j.simpleLogger.defaultLogLevel", "warn"),
                List.of(uris, witnessUri, PREFIX, slot.jvm, SoakReport.historyFile(dir, slot.jvm).toString(),
                        Long.toString(seed + jvms), Long.toString(leaseMillis), Long.toString(commandTimeoutMillis),
                        Long.toString(slackMillis))));
        slot.child.awaitLine("READY", Duration.ofSeconds(90));
    }

    private void stopWorkers(List<Slot> slots) throws InterruptedException {
        slots.forEach(slot -> slot.proxies.forEach(FaultProxy::pass));
        witness.requestStop();
        for (Slot slot : slots) {
            try {
                slot.child.awaitLine("DONE", Duration.ofSeconds(60));
            } catch (IllegalStateException e) {
                finalViolations.add("worker did not finish: " + slot.jvm + " not within 60 s of the stop: "
                        + e.getMessage().lines().limit(3).toList());
                slot.child.kill();
            }
        }
    }

    /* --------------- nemesis --------------- */

    private void runNemesis(List<Slot> slots) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(seconds);
        long[] kills = {start + (end - start) / 3, start + 2 * (end - start) / 3};
        int nextKill = 0;
        while (System.nanoTime() < end) {
            pause(500 + random.nextInt(1500));
            if (nextKill < kills.length && System.nanoTime() >= kills[nextKill]) {
                nextKill++;
                killClient(slots.get(random.nextInt(slots.size())));
                continue;
            }
            int pick = random.nextInt(100);
            Slot slot = slots.get(random.nextInt(slots.size()));
            // One client's proxy to one node, or all its proxies: cut off from one node or from all.
            List<FaultProxy> proxies = random.nextBoolean()
                    ? List.of(slot.proxies.get(random.nextInt(NODES)))
                    : slot.proxies;
            String scope = proxies.size() == 1 ? " (one node)" : " (all nodes)";
            if (pick < 12) {
                stall("stall<lease", 1, 300 + random.nextInt((int) leaseMillis - 300));
            } else if (pick < 22) {
                stall("stall>lease", 1 + random.nextInt(2), leaseMillis + 500 + random.nextInt((int) leaseMillis));
            } else if (pick < 32) {
                killNodes(1 + random.nextInt(2));
            } else if (pick < 38) {
                admins.get(random.nextInt(NODES)).scriptFlush();
                count("flush");
            } else if (pick < 55) {
                // Commands run while their replies are kept, then are lost with the connections.
                proxies.forEach(FaultProxy::holdReplies);
                pause(100 + random.nextInt(700));
                proxies.forEach(FaultProxy::cutAll);
                proxies.forEach(FaultProxy::pass);
                count("lost replies" + scope);
            } else if (pick < 70) {
                // Replies come after the command timeout: the caller gave up, the reply arrives.
                proxies.forEach(FaultProxy::holdReplies);
                pause(commandTimeoutMillis + 100 + random.nextInt(1000));
                proxies.forEach(FaultProxy::pass);
                count("late replies" + scope);
            } else if (pick < 80) {
                proxies.forEach(FaultProxy::cutAll);
                count("cut" + scope);
            } else if (pick < 88) {
                Duration delay = Duration.ofMillis(20 + random.nextInt(150));
                proxies.forEach(proxy -> proxy.delay(delay));
                pause(1000 + random.nextInt(2000));
                proxies.forEach(FaultProxy::pass);
                count("delay" + scope);
            } else {
                // A partition, for less or more than a lease; its bytes are then lost or late.
                proxies.forEach(proxy -> proxy.blackhole(true));
                pause(500 + random.nextInt((int) leaseMillis * 2));
                if (random.nextBoolean()) {
                    proxies.forEach(FaultProxy::cutAll);
                }
                proxies.forEach(FaultProxy::pass);
                count("partition" + scope);
            }
        }
    }

    /** SIGSTOPs {@code count} distinct nodes for {@code millis}, then SIGCONTs them. */
    private void stall(String kind, int count, long millis) throws InterruptedException {
        List<RedisServer> stalled = distinctNodes(count);
        stalled.forEach(RedisServer::pause);
        try {
            pause(millis);
        } finally {
            stalled.forEach(RedisServer::resume);
        }
        count(kind + " x" + count);
    }

    /** SIGKILLs {@code count} distinct nodes, leaves them down for up to two leases, and restarts them with their data. */
    private void killNodes(int count) throws InterruptedException {
        List<RedisServer> down = distinctNodes(count);
        down.forEach(RedisServer::kill);
        pause(200 + random.nextInt((int) leaseMillis * 2));
        down.forEach(RedisServer::restart);
        count("node kill x" + count);
    }

    private List<RedisServer> distinctNodes(int count) {
        List<RedisServer> shuffled = new ArrayList<>(nodes);
        Collections.shuffle(shuffled, random);
        return shuffled.subList(0, count);
    }

    /** SIGKILLs the slot's JVM, takes it out of every critical section, and starts another. */
    private void killClient(Slot slot) throws InterruptedException {
        slot.child.kill();
        killed.add(slot.jvm);
        witness.awaitDisconnected(SoakWorkerMain.clientName(slot.jvm));
        witness.forget(slot.jvm + ".", SoakWorkerMain.insideKeys());
        count("client kill");
        start(slot);
    }

    private void count(String fault) {
        faults.merge(fault, 1, Integer::sum);
    }

    /** The nemesis's pacing between faults, and the length of a fault: a schedule, not a synchronisation. */
    private static void pause(long millis) throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep(millis);
    }

    /* --------------- after the run --------------- */

    /**
     * Lets the longest lease pass (a forced unlock's fence lasts two, a token key one second past its
     * token) and checks that no key of this soak remains on any node.
     */
    private void checkFinalState() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * leaseMillis + 3000);
        List<String> problems;
        do {
            problems = new ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                RedisCommands<String, String> admin = admins.get(i);
                for (String key : admin.keys(PREFIX + ":*")) {
                    problems.add("key of a hold remains: one lease after the run, on node " + i + ": " + key + " ("
                            + admin.type(key) + ", pttl " + admin.pttl(key) + " ms)");
                }
            }
            if (problems.isEmpty()) {
                return;
            }
            pause(200);
        } while (System.nanoTime() < deadline);
        finalViolations.addAll(problems);
    }
}
