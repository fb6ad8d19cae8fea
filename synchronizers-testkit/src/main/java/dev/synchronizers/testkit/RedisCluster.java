package dev.synchronizers.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis Cluster on loopback for tests: by default 3 masters with one replica each, six
 * {@code redis-server} processes formed into a cluster from Java ({@code CLUSTER MEET}, {@code
 * CLUSTER ADDSLOTS}, {@code CLUSTER REPLICATE}), so that no {@code redis-cli} is needed.
 *
 * <p>Each node is a {@link RedisServer} from {@link RedisServers#start(RedisServers.Options)},
 * so from the same sources in the same order: a {@code redis-server} on the {@code PATH}, else a
 * Docker engine (each node in the host's network, which only a Linux engine offers), else the
 * bundled Redis 6.2 binary; the system property {@link RedisServers#SOURCE_PROPERTY} forces one.
 * {@code REDIS_URL} is never used. Every node runs with {@code --cluster-enabled yes}, its own
 * {@code cluster-config-file} in its own fresh temporary directory, the cluster bus on {@code
 * port + 10000} (both ports were free when chosen), and the {@code cluster-node-timeout} and
 * {@code cluster-require-full-coverage} of the {@link Options}, and {@code repl-diskless-sync-delay
 * 0} so that a replica's full sync starts at once. The slots are split into
 * contiguous ranges as {@code redis-cli --cluster create} splits them (for three masters {@code
 * 0-5460}, {@code 5461-10922}, {@code 10923-16383}).
 *
 * <p>The queries ({@link #masters()}, {@link #replicas()}, {@link #masterOf(int)}) read {@code
 * CLUSTER NODES} from one live node each time, so they give the current roles as that node sees
 * them; call {@link #awaitHealthy()} first when the cluster may still be settling. A node is
 * <em>live</em> when its process runs and is not paused (a node in Docker is always live).
 *
 * <p>The fault controls {@link #kill}, {@link #pause}, {@link #resume} and {@link #restart} signal
 * only the processes this cluster started, by pid; they need nodes the testkit started as
 * processes ({@code PATH} or {@code BUNDLED}) and throw {@link UnsupportedOperationException} for
 * nodes in Docker. A restarted node keeps its cluster identity (its {@code nodes.conf}) but not
 * its data, which a replica then copies from its master.
 *
 * <p>Not thread-safe: one test thread drives the topology while any number of clients use the
 * cluster. {@link #close()} stops every node and deletes its directory; a JVM shutdown hook stops
 * nodes that were not closed.
 */
public final class RedisCluster implements AutoCloseable {

    /** The number of hash slots of every Redis Cluster. */
    public static final int SLOTS = 16384;

    private static final Logger log = LoggerFactory.getLogger(RedisCluster.class);
    private static final int ADDSLOTS_CHUNK = 1000;       // slots per CLUSTER ADDSLOTS command
    private static final int MIGRATE_BATCH = 100;          // keys per GETKEYSINSLOT and MIGRATE
    private static final int MIGRATE_TIMEOUT_MILLIS = 1000;   // below Resp's 2 s read timeout
    private static final long POLL_MILLIS = 50;

    private final Options options;
    private final List<RedisServer> nodes;            // in start order: masters first, then replicas
    private final Map<String, RedisServer> byId;      // node id -> node; ids survive restarts
    private final Map<RedisServer, String> idOf;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisCluster(Options options, List<RedisServer> nodes, Map<String, RedisServer> byId) {
        this.options = options;
        this.nodes = List.copyOf(nodes);
        this.byId = Map.copyOf(byId);
        Map<RedisServer, String> ids = new HashMap<>();
        byId.forEach((id, node) -> ids.put(node, id));
        this.idOf = Map.copyOf(ids);
    }

    /* --------------- start --------------- */

    /**
     * Starts and forms a cluster of 3 masters and 3 replicas with the default {@link Options},
     * and returns once it is healthy ({@link #awaitHealthy()}).
     *
     * @throws IllegalStateException if a node cannot be started or the cluster does not become
     *     healthy within the options' timeout; every node started so far is stopped first
     */
    public static RedisCluster start() {
        return start(Options.defaults());
    }

    /**
     * Starts and forms a cluster as {@code options} describe, and returns once it is healthy
     * ({@link #awaitHealthy()}): every node reports {@code cluster_state:ok}, all agree on the slot
     * map and the roles, and every replica's link to its master is up.
     *
     * @throws IllegalStateException if a node cannot be started or the cluster does not become
     *     healthy within {@code options}' timeout; every node started so far is stopped first
     */
    public static RedisCluster start(Options options) {
        Objects.requireNonNull(options, "options");
        long startNanos = System.nanoTime();
        List<RedisServer> started = new ArrayList<>();
        try {
            int total = options.masters * (1 + options.replicasPerMaster);
            RedisServers.Options serverOptions = RedisServers.Options.defaults().args(
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", Long.toString(options.nodeTimeoutMillis),
                    "--cluster-require-full-coverage", options.requireFullCoverage ? "yes" : "no",
                    // Redis 7 waits 5 s by default before a diskless full sync, to batch replicas.
                    "--repl-diskless-sync-delay", "0")
                    .args(options.args.toArray(new String[0]));
            if (options.bundled) {
                serverOptions = serverOptions.bundled();
            }
            for (int i = 0; i < total; i++) {
                started.add(RedisServers.start(serverOptions));
            }
            Map<String, RedisServer> byId = new LinkedHashMap<>();
            for (RedisServer node : started) {
                byId.put(call(node, "CLUSTER", "MYID"), node);
            }
            RedisCluster cluster = new RedisCluster(options, started, byId);
            cluster.form();
            log.info("Formed a cluster of {} masters and {} replicas ({} {}) in {} ms", options.masters,
                    total - options.masters, started.get(0).source(), started.get(0).version(),
                    (System.nanoTime() - startNanos) / 1_000_000);
            return cluster;
        } catch (RuntimeException e) {
            for (RedisServer node : started) {
                try {
                    node.close();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    private void form() {
        RedisServer first = nodes.get(0);
        for (RedisServer node : nodes.subList(1, nodes.size())) {
            call(first, "CLUSTER", "MEET", RedisServer.LOOPBACK, Integer.toString(node.port()));
        }
        List<RedisServer> masters = nodes.subList(0, options.masters);
        double perMaster = (double) SLOTS / options.masters;
        int firstSlot = 0;
        for (int i = 0; i < options.masters; i++) {
            // Rounded as redis-cli --cluster create rounds, so that both draw the same map.
            int lastSlot = i == options.masters - 1 ? SLOTS - 1
                    : Math.max(firstSlot, (int) Math.round(i * perMaster + perMaster - 1));
            addSlots(masters.get(i), firstSlot, lastSlot);
            firstSlot = lastSlot + 1;
        }
        // A replica can only follow a master it has heard of: wait for the gossip to reach everyone.
        await("the nodes to meet and cover every slot", this::unhealthyReason);
        for (int i = options.masters; i < nodes.size(); i++) {
            RedisServer master = masters.get((i - options.masters) % options.masters);
            call(nodes.get(i), "CLUSTER", "REPLICATE", idOf.get(master));
        }
        awaitHealthy();
    }

    /** ADDSLOTS in chunks rather than ADDSLOTSRANGE, which Redis 6.2 does not have. */
    private static void addSlots(RedisServer master, int firstSlot, int lastSlot) {
        for (int from = firstSlot; from <= lastSlot; from += ADDSLOTS_CHUNK) {
            int to = Math.min(lastSlot, from + ADDSLOTS_CHUNK - 1);
            String[] command = new String[2 + to - from + 1];
            command[0] = "CLUSTER";
            command[1] = "ADDSLOTS";
            for (int slot = from; slot <= to; slot++) {
                command[2 + slot - from] = Integer.toString(slot);
            }
            call(master, command);
        }
    }

    /* --------------- what it is --------------- */

    /**
     * Returns {@code "redis://127.0.0.1:<port>"} for every node, masters and replicas, in the order
     * the nodes were started; any of them serves as a seed for a cluster client.
     */
    public List<String> seedUris() {
        return nodes.stream().map(RedisServer::uri).toList();
    }

    /** Returns every node of the cluster, live or not, in the order they were started. */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /**
     * Returns the nodes that currently serve at least one slot as masters, ordered by the first
     * slot each serves, as one live node sees them.
     *
     * @throws IllegalStateException if no node answers
     */
    public List<RedisServer> masters() {
        return mastersIn(view());
    }

    /**
     * Returns the nodes that are currently replicas, live or not, as one live node sees them:
     * the replicas of the first of {@link #masters()} first, then those of the next, and so on.
     *
     * @throws IllegalStateException if no node answers
     */
    public List<RedisServer> replicas() {
        List<NodeEntry> view = view();
        List<RedisServer> replicas = new ArrayList<>();
        for (RedisServer master : mastersIn(view)) {
            replicas.addAll(replicasIn(view, idOf.get(master)));
        }
        return replicas;
    }

    /**
     * Returns the nodes that currently replicate {@code master}, live or not, as one live node
     * sees them; empty if it has none or is not a master.
     *
     * @throws IllegalArgumentException if {@code master} is not a node of this cluster
     * @throws IllegalStateException if no node answers
     */
    public List<RedisServer> replicasOf(RedisServer master) {
        return replicasIn(view(), idOf(master));
    }

    /**
     * Returns the master that currently serves {@code slot}, as one live node sees it.
     *
     * @throws IllegalArgumentException if {@code slot} is not in {@code 0..16383}
     * @throws IllegalStateException if no master serves it or no node answers
     */
    public RedisServer masterOf(int slot) {
        if (slot < 0 || slot >= SLOTS) {
            throw new IllegalArgumentException("slot must be in 0.." + (SLOTS - 1) + ": " + slot);
        }
        String owner = slotMap(view())[slot];
        if (owner == null) {
            throw new IllegalStateException("No master serves slot " + slot);
        }
        return byId.get(owner);
    }

    /**
     * Returns the master that currently serves {@code key}'s slot ({@code CLUSTER KEYSLOT}, so
     * hash tags count as they do for clients), as one live node sees it.
     *
     * @throws IllegalStateException if no master serves it or no node answers
     */
    public RedisServer masterOf(String key) {
        return masterOf(slotOf(key));
    }

    /**
     * Returns {@code key}'s hash slot, as {@code CLUSTER KEYSLOT} on a live node answers.
     *
     * @throws IllegalStateException if no node answers
     */
    public int slotOf(String key) {
        Objects.requireNonNull(key, "key");
        return Integer.parseInt(call(anyLive(), "CLUSTER", "KEYSLOT", key));
    }

    /**
     * Returns {@code CLUSTER NODES} as {@code node} sees the cluster, for assertion messages.
     *
     * @throws IllegalArgumentException if {@code node} is not a node of this cluster
     * @throws UncheckedIOException if the node does not answer within two seconds
     */
    public String clusterNodes(RedisServer node) {
        idOf(node);
        return call(node, "CLUSTER", "NODES");
    }

    /* --------------- topology changes --------------- */

    /**
     * Promotes {@code replica} to master of its master's slots with {@code CLUSTER FAILOVER}, and
     * returns once it sees itself as master and the cluster is healthy again ({@link
     * #awaitHealthy()}), so that every live node agrees on the new owner. If its master is live,
     * the failover is the coordinated one (the replica first catches up, no write is lost) and
     * the old master becomes its replica; if its master is killed or paused, {@code CLUSTER
     * FAILOVER FORCE} skips the handshake with it.
     *
     * @throws IllegalArgumentException if {@code replica} is not a replica of this cluster
     * @throws IllegalStateException if the promotion or the healthy state is not reached within
     *     the options' timeout
     * @throws UncheckedIOException if {@code replica} does not answer {@code CLUSTER FAILOVER}
     */
    public void failover(RedisServer replica) {
        String id = idOf(replica);
        NodeEntry entry = entry(view(), id);
        if (entry == null || !entry.isReplica()) {
            throw new IllegalArgumentException(replica + " is not a replica: " + entry);
        }
        RedisServer master = byId.get(entry.masterId);
        if (master != null && isLive(master)) {
            call(replica, "CLUSTER", "FAILOVER");
        } else {
            call(replica, "CLUSTER", "FAILOVER", "FORCE");
        }
        await(replica + " to become master", () -> {
            NodeEntry self = entry(parse(call(replica, "CLUSTER", "NODES")), id);
            return self != null && self.isMaster() ? null : "it is " + self;
        });
        awaitHealthy();
    }

    /**
     * Moves {@code slot} with its keys to the master {@code to}, as {@code redis-cli --cluster
     * reshard} does: {@code CLUSTER SETSLOT IMPORTING} on the target and {@code MIGRATING} on the
     * source, {@code MIGRATE} of the slot's keys in batches of 100 ({@code CLUSTER GETKEYSINSLOT}),
     * then {@code CLUSTER SETSLOT NODE} on the target, the source and every other master. Returns
     * once the cluster is healthy ({@link #awaitHealthy()}), so every live node agrees on the new
     * owner. Does nothing if {@code to} already serves the slot. Clients see {@code ASK}
     * redirections while the keys move and {@code MOVED} afterwards.
     *
     * @throws IllegalArgumentException if {@code slot} is not in {@code 0..16383} or {@code to} is
     *     not a master of this cluster
     * @throws IllegalStateException if the move or the healthy state is not reached within the
     *     options' timeout
     * @throws UncheckedIOException if a node does not answer a command of the move
     */
    public void moveSlot(int slot, RedisServer to) {
        String toId = idOf(to);
        RedisServer from = masterOf(slot);
        List<RedisServer> masters = masters();
        if (!masters.contains(to)) {
            throw new IllegalArgumentException(to + " is not a master serving slots; masters are " + masters);
        }
        if (from.equals(to)) {
            return;
        }
        String fromId = idOf.get(from);
        String slotText = Integer.toString(slot);
        call(to, "CLUSTER", "SETSLOT", slotText, "IMPORTING", fromId);
        call(from, "CLUSTER", "SETSLOT", slotText, "MIGRATING", toId);
        while (true) {
            List<String> keys = callList(from, "CLUSTER", "GETKEYSINSLOT", slotText, Integer.toString(MIGRATE_BATCH));
            if (keys.isEmpty()) {
                break;
            }
            List<String> migrate = new ArrayList<>(List.of("MIGRATE", RedisServer.LOOPBACK, Integer.toString(to.port()),
                    "", "0", Integer.toString(MIGRATE_TIMEOUT_MILLIS), "KEYS"));
            migrate.addAll(keys);
            call(from, migrate.toArray(new String[0]));
        }
        // Target first, so that the slot is never owned by no one: redis-cli's order.
        call(to, "CLUSTER", "SETSLOT", slotText, "NODE", toId);
        call(from, "CLUSTER", "SETSLOT", slotText, "NODE", toId);
        for (RedisServer master : masters) {
            if (!master.equals(to) && !master.equals(from) && isLive(master)) {
                call(master, "CLUSTER", "SETSLOT", slotText, "NODE", toId);
            }
        }
        awaitHealthy();
    }

    /* --------------- fault controls --------------- */

    /**
     * Kills {@code node}'s process with SIGKILL ({@link RedisServer#kill()}) and returns at once.
     * If it was a master, its replica is promoted once the other masters agree it failed (about
     * {@code cluster-node-timeout} plus an election); {@link #awaitHealthy()} waits for that.
     *
     * @throws IllegalArgumentException if {@code node} is not a node of this cluster
     * @throws UnsupportedOperationException if the testkit did not start the node's process
     */
    public void kill(RedisServer node) {
        idOf(node);
        node.kill();
    }

    /**
     * Stops {@code node}'s process with SIGSTOP ({@link RedisServer#pause()}): it keeps its
     * connections but answers nothing, to clients and to the cluster bus, until {@link #resume}.
     *
     * @throws IllegalArgumentException if {@code node} is not a node of this cluster
     * @throws UnsupportedOperationException if the testkit did not start the node's process
     */
    public void pause(RedisServer node) {
        idOf(node);
        node.pause();
    }

    /**
     * Continues {@code node}'s paused process with SIGCONT ({@link RedisServer#resume()}) and
     * returns at once; {@link #awaitHealthy()} waits until it has caught up with the cluster.
     *
     * @throws IllegalArgumentException if {@code node} is not a node of this cluster
     * @throws UnsupportedOperationException if the testkit did not start the node's process
     */
    public void resume(RedisServer node) {
        idOf(node);
        node.resume();
    }

    /**
     * Kills {@code node}'s process if it runs and starts a new one on the same ports with the same
     * cluster identity ({@link RedisServer#restart()}), then returns once the cluster is healthy
     * ({@link #awaitHealthy()}). The node comes back with an empty data set: a replica copies
     * its master's, and a master whose slots went to its replica meanwhile rejoins as a replica.
     *
     * @throws IllegalArgumentException if {@code node} is not a node of this cluster
     * @throws UnsupportedOperationException if the testkit did not start the node's process
     * @throws IllegalStateException if the node does not start, or the cluster does not become
     *     healthy within the options' timeout
     */
    public void restart(RedisServer node) {
        idOf(node);
        node.restart();
        awaitHealthy();
    }

    /**
     * Waits until every live node flags {@code node} as failed ({@code fail} in {@code CLUSTER
     * NODES}), which takes about {@code cluster-node-timeout} after it was killed or paused: the
     * point from which the cluster acts on the failure, for example by promoting a replica.
     *
     * @throws IllegalArgumentException if {@code node} is not a node of this cluster
     * @throws IllegalStateException if that is not reached within the options' timeout
     */
    public void awaitFailed(RedisServer node) {
        String id = idOf(node);
        await("every live node to flag " + node + " as failed", () -> {
            for (RedisServer other : nodes) {
                if (isLive(other)) {
                    NodeEntry seen = entry(parse(call(other, "CLUSTER", "NODES")), id);
                    if (seen == null || !seen.flags.contains("fail")) {
                        return other + " sees " + seen;
                    }
                }
            }
            return null;
        });
    }

    /**
     * Waits until the cluster is healthy, as far as its live nodes go: every live node reports
     * {@code cluster_state:ok} and knows every node, all live nodes see the same owner for every
     * slot and the same role (and master) for every live node, none sees a live node as failing,
     * and every live replica's link to its master is up. Nodes that are killed or paused are only
     * required to have been replaced: their slots served by a live master.
     *
     * @throws IllegalStateException if that is not reached within the options' timeout; the
     *     message says what was still missing
     */
    public void awaitHealthy() {
        await("the cluster to be healthy", this::unhealthyReason);
    }

    /* --------------- close --------------- */

    /**
     * Stops every node's process that this cluster started ({@link RedisServer#close()}: SIGTERM,
     * then SIGKILL after five seconds; a paused one is continued first) and deletes the nodes'
     * temporary directories. Idempotent. Failures to stop are thrown together once all nodes were
     * tried.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        for (RedisServer node : nodes) {
            try {
                node.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Returns the number of masters and replicas and every node, for assertion messages. */
    @Override
    public String toString() {
        return "RedisCluster[" + options.masters + " masters x " + options.replicasPerMaster + " replicas, "
                + nodes + "]";
    }

    /* --------------- health --------------- */

    /** Returns what keeps the cluster from being healthy, or null if it is healthy. */
    private String unhealthyReason() {
        List<RedisServer> live = nodes.stream().filter(RedisCluster::isLive).toList();
        if (live.isEmpty()) {
            return "no node is live";
        }
        String[] referenceSlots = null;
        Map<String, String> referenceRoles = null;
        RedisServer reference = null;
        for (RedisServer node : live) {
            String info;
            List<NodeEntry> view;
            try {
                info = node.call("CLUSTER", "INFO");
                view = parse(node.call("CLUSTER", "NODES"));
            } catch (IOException e) {
                return node + " does not answer: " + e.getMessage();
            }
            if (!"ok".equals(Resp.infoField(info, "cluster_state"))) {
                return node + " reports cluster_state:" + Resp.infoField(info, "cluster_state");
            }
            if (!Integer.toString(nodes.size()).equals(Resp.infoField(info, "cluster_known_nodes"))) {
                return node + " knows " + Resp.infoField(info, "cluster_known_nodes") + " of " + nodes.size()
                        + " nodes";
            }
            Map<String, String> roles = new HashMap<>();
            for (NodeEntry entry : view) {
                RedisServer other = byId.get(entry.id);
                if (other == null || !live.contains(other)) {
                    continue;
                }
                if (entry.flags.contains("fail") || entry.flags.contains("fail?")
                        || entry.flags.contains("handshake") || entry.flags.contains("noaddr")) {
                    return node + " sees live " + other + " as " + entry.flags;
                }
                roles.put(entry.id, entry.isMaster() ? "master" : "replica of " + entry.masterId);
            }
            String[] slots = slotMap(view);
            if (reference == null) {
                reference = node;
                referenceSlots = slots;
                referenceRoles = roles;
            } else if (!Arrays.equals(slots, referenceSlots)) {
                return node + " and " + reference + " disagree on the slot map";
            } else if (!roles.equals(referenceRoles)) {
                return node + " sees roles " + roles + " but " + reference + " sees " + referenceRoles;
            }
            NodeEntry self = view.stream().filter(entry -> entry.flags.contains("myself")).findFirst().orElse(null);
            if (self != null && self.isReplica()) {
                String link;
                try {
                    link = Resp.infoField(node.call("INFO", "replication"), "master_link_status");
                } catch (IOException e) {
                    return node + " does not answer: " + e.getMessage();
                }
                if (!"up".equals(link)) {
                    return "replica " + node + " has master_link_status:" + link;
                }
            }
        }
        for (int slot = 0; slot < SLOTS; slot++) {
            String owner = referenceSlots[slot];
            if (owner == null || !live.contains(byId.get(owner))) {
                return "slot " + slot + " is served by " + (owner == null ? "no node" : byId.get(owner));
            }
        }
        return null;
    }

    /** Polls {@code problem} until it returns null; throws with its last answer at the deadline. */
    private void await(String what, Supplier<String> problem) {
        long deadline = System.nanoTime() + options.timeout.toNanos();
        while (true) {
            String reason;
            try {
                reason = problem.get();
            } catch (UncheckedIOException e) {
                reason = e.getMessage();
            }
            if (reason == null) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("Waited " + options.timeout.toMillis() + " ms for " + what
                        + "; still: " + reason);
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while waiting for " + what, e);
            }
        }
    }

    /* --------------- CLUSTER NODES --------------- */

    /** One line of {@code CLUSTER NODES}: id, address, flags, master, slots. */
    private record NodeEntry(String id, int port, Set<String> flags, String masterId, List<int[]> slots) {

        boolean isMaster() {
            return flags.contains("master");
        }

        boolean isReplica() {
            return flags.contains("slave");
        }

        @Override
        public String toString() {
            return "NodeEntry[" + id + " port " + port + " " + flags + (masterId == null ? "" : " of " + masterId)
                    + "]";
        }
    }

    /**
     * Parses {@code CLUSTER NODES}: {@code <id> <ip:port@cport[,hostname]> <flags> <master|-> <ping>
     * <pong> <epoch> <link> <slot|from-to|[migration]>...}.
     */
    private static List<NodeEntry> parse(String clusterNodes) {
        List<NodeEntry> entries = new ArrayList<>();
        for (String line : clusterNodes.split("\n")) {
            String[] fields = line.trim().split(" ");
            if (fields.length < 8) {
                continue;
            }
            String address = fields[1];
            int at = address.indexOf('@');
            String hostPort = at < 0 ? address : address.substring(0, at);
            int port = Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
            List<int[]> slots = new ArrayList<>();
            for (int i = 8; i < fields.length; i++) {
                String range = fields[i];
                if (range.startsWith("[")) {
                    continue;   // a slot being imported or migrated: still served by its owner
                }
                int dash = range.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(range.substring(dash + 1));
                slots.add(new int[] {from, to});
            }
            entries.add(new NodeEntry(fields[0], port, Set.of(fields[2].split(",")),
                    fields[3].equals("-") ? null : fields[3], slots));
        }
        return entries;
    }

    /** Returns, for every slot, the id of the master that serves it in {@code view} (or null). */
    private static String[] slotMap(List<NodeEntry> view) {
        String[] owners = new String[SLOTS];
        for (NodeEntry entry : view) {
            for (int[] range : entry.slots) {
                Arrays.fill(owners, range[0], range[1] + 1, entry.id);
            }
        }
        return owners;
    }

    private List<RedisServer> mastersIn(List<NodeEntry> view) {
        return view.stream()
                .filter(entry -> entry.isMaster() && !entry.slots.isEmpty() && byId.containsKey(entry.id))
                .sorted(Comparator.comparingInt(entry -> entry.slots.stream().mapToInt(range -> range[0]).min()
                        .orElse(SLOTS)))
                .map(entry -> byId.get(entry.id))
                .toList();
    }

    private List<RedisServer> replicasIn(List<NodeEntry> view, String masterId) {
        return view.stream()
                .filter(entry -> entry.isReplica() && masterId.equals(entry.masterId) && byId.containsKey(entry.id))
                .sorted(Comparator.comparingInt(NodeEntry::port))
                .map(entry -> byId.get(entry.id))
                .toList();
    }

    private static NodeEntry entry(List<NodeEntry> view, String id) {
        return view.stream().filter(entry -> entry.id.equals(id)).findFirst().orElse(null);
    }

    /** {@code CLUSTER NODES} from the first live node that answers. */
    private List<NodeEntry> view() {
        return parse(call(anyLive(), "CLUSTER", "NODES"));
    }

    private RedisServer anyLive() {
        for (RedisServer node : nodes) {
            if (isLive(node)) {
                return node;
            }
        }
        throw new IllegalStateException("No node of " + this + " is live");
    }

    /* --------------- helpers --------------- */

    private static boolean isLive(RedisServer node) {
        return node.isRunning() && !node.isPaused();
    }

    private String idOf(RedisServer node) {
        String id = idOf.get(Objects.requireNonNull(node, "node"));
        if (id == null) {
            throw new IllegalArgumentException(node + " is not a node of " + this);
        }
        return id;
    }

    private static String call(RedisServer node, String... command) {
        try {
            return node.call(command);
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", Arrays.asList(command).subList(0,
                    Math.min(4, command.length))) + " failed on " + node + ": " + e.getMessage(), e);
        }
    }

    private static List<String> callList(RedisServer node, String... command) {
        try {
            return node.callList(command);
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", Arrays.asList(command).subList(0,
                    Math.min(4, command.length))) + " failed on " + node + ": " + e.getMessage(), e);
        }
    }

    /**
     * How to start a cluster: how many masters and replicas, the cluster settings, extra
     * {@code redis-server} arguments and how long to wait for it. Immutable; each method returns
     * a new instance.
     */
    public static final class Options {

        private final int masters;
        private final int replicasPerMaster;
        private final long nodeTimeoutMillis;
        private final boolean requireFullCoverage;
        private final List<String> args;
        private final Duration timeout;
        /** Whether every node runs the bundled Redis 6.2 binary; set once, before the instance is shared. */
        private boolean bundled;

        private Options(int masters, int replicasPerMaster, long nodeTimeoutMillis, boolean requireFullCoverage,
                List<String> args, Duration timeout) {
            this.masters = masters;
            this.replicasPerMaster = replicasPerMaster;
            this.nodeTimeoutMillis = nodeTimeoutMillis;
            this.requireFullCoverage = requireFullCoverage;
            this.args = args;
            this.timeout = timeout;
        }

        /**
         * Returns the options of {@link RedisCluster#start()}: 3 masters, 1 replica per master,
         * {@code cluster-node-timeout 1000}, {@code cluster-require-full-coverage yes}, no extra
         * arguments, 30 seconds to form or heal.
         */
        public static Options defaults() {
            return new Options(3, 1, 1000, true, List.of(), Duration.ofSeconds(30));
        }

        /**
         * Returns these options with every node on the bundled Redis 6.2 binary
         * ({@link RedisServers.Options#bundled()}), for tests of what only that version does.
         */
        public Options bundled() {
            Options copy = new Options(masters, replicasPerMaster, nodeTimeoutMillis, requireFullCoverage, args, timeout);
            copy.bundled = true;
            return copy;
        }

        /** Carries this instance's binary choice over to a modified copy. */
        private Options keep(Options copy) {
            copy.bundled = bundled;
            return copy;
        }

        /**
         * Returns these options with {@code masters} masters.
         *
         * @throws IllegalArgumentException if {@code masters < 1}
         */
        public Options masters(int masters) {
            if (masters < 1) {
                throw new IllegalArgumentException("masters must be >= 1: " + masters);
            }
            return keep(new Options(masters, replicasPerMaster, nodeTimeoutMillis, requireFullCoverage, args, timeout));
        }

        /**
         * Returns these options with {@code replicasPerMaster} replicas for each master.
         *
         * @throws IllegalArgumentException if {@code replicasPerMaster < 0}
         */
        public Options replicasPerMaster(int replicasPerMaster) {
            if (replicasPerMaster < 0) {
                throw new IllegalArgumentException("replicasPerMaster must be >= 0: " + replicasPerMaster);
            }
            return keep(new Options(masters, replicasPerMaster, nodeTimeoutMillis, requireFullCoverage, args, timeout));
        }

        /**
         * Returns these options with {@code cluster-node-timeout} set to {@code nodeTimeoutMillis}:
         * how long a node may be unreachable before it counts as failing, and so roughly how long
         * an automatic failover takes to start.
         *
         * @throws IllegalArgumentException if {@code nodeTimeoutMillis <= 0}
         */
        public Options nodeTimeoutMillis(long nodeTimeoutMillis) {
            if (nodeTimeoutMillis <= 0) {
                throw new IllegalArgumentException("nodeTimeoutMillis must be > 0: " + nodeTimeoutMillis);
            }
            return keep(new Options(masters, replicasPerMaster, nodeTimeoutMillis, requireFullCoverage, args, timeout));
        }

        /**
         * Returns these options with {@code cluster-require-full-coverage} set: when true, the whole
         * cluster refuses queries while any slot is served by no live master; when false, only the
         * keys of such slots are refused. Either way {@link RedisCluster#awaitHealthy()} waits until
         * every slot is served.
         */
        public Options requireFullCoverage(boolean requireFullCoverage) {
            return keep(new Options(masters, replicasPerMaster, nodeTimeoutMillis, requireFullCoverage, args, timeout));
        }

        /**
         * Returns these options with {@code extraArgs} appended to every node's {@code
         * redis-server} command line, after the cluster's own arguments (so they win), for example
         * {@code args("--cluster-replica-validity-factor", "0")}.
         */
        public Options args(String... extraArgs) {
            List<String> all = new ArrayList<>(args);
            all.addAll(Arrays.asList(extraArgs));
            return keep(new Options(masters, replicasPerMaster, nodeTimeoutMillis, requireFullCoverage, List.copyOf(all),
                    timeout));
        }

        /**
         * Returns these options with {@code timeout} as the bound on forming the cluster and on
         * each wait for it to settle ({@link RedisCluster#awaitHealthy()}, {@link
         * RedisCluster#failover}, {@link RedisCluster#moveSlot}, {@link RedisCluster#restart}).
         *
         * @throws IllegalArgumentException if {@code timeout} is not positive
         */
        public Options timeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be > 0: " + timeout);
            }
            return keep(new Options(masters, replicasPerMaster, nodeTimeoutMillis, requireFullCoverage, args, timeout));
        }

        /** Returns every setting, for logs and assertion messages. */
        @Override
        public String toString() {
            return "Options[masters=" + masters + ", replicasPerMaster=" + replicasPerMaster + ", nodeTimeoutMillis="
                    + nodeTimeoutMillis + ", requireFullCoverage=" + requireFullCoverage + ", args=" + args
                    + ", timeout=" + timeout + (bundled ? ", bundled" : "") + "]";
        }
    }
}
