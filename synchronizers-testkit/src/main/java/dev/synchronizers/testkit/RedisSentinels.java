package dev.synchronizers.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * A master with replicas under Redis Sentinel, on loopback, for tests: by default one master, two
 * replicas ({@code --replicaof}) and three sentinels ({@code redis-server <conf> --sentinel})
 * monitoring it as {@value #MASTER_NAME} with a quorum of 2, {@code down-after-milliseconds 1000}
 * and {@code failover-timeout 3000}, so that a failover completes within a few seconds. Every
 * process comes from {@link RedisServers#start(RedisServers.Options)}, so from the same sources as
 * every other server of the testkit, and {@link #close()} stops exactly those processes.
 *
 * <p>Not thread-safe: one test thread drives it.
 */
public final class RedisSentinels implements AutoCloseable {

    /** The name the sentinels monitor the master under. */
    public static final String MASTER_NAME = "mymaster";

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /**
     * How long a server may take to follow a new master after a failover: the sentinels reconfigure
     * a demoted master only when they next poll it, and a loaded machine has been seen to need more
     * than {@link #TIMEOUT} for the last replica.
     */
    private static final Duration REPLICAS_TIMEOUT = Duration.ofSeconds(90);
    private static final long POLL_MILLIS = 50;

    private final List<RedisServer> servers;
    private final List<RedisServer> sentinels;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisSentinels(List<RedisServer> servers, List<RedisServer> sentinels) {
        this.servers = List.copyOf(servers);
        this.sentinels = List.copyOf(sentinels);
    }

    /**
     * Starts a master, two replicas and three sentinels, and returns once every sentinel knows the
     * master, both replicas and the other two sentinels.
     *
     * @throws IllegalStateException if that state is not reached within 30 s; everything started
     *     is stopped first
     */
    public static RedisSentinels start() {
        List<RedisServer> servers = new ArrayList<>();
        List<RedisServer> sentinels = new ArrayList<>();
        try {
            RedisServer master = RedisServers.start(RedisServers.Options.defaults()
                    .args("--repl-diskless-sync-delay", "0"));
            servers.add(master);
            for (int i = 0; i < 2; i++) {
                servers.add(RedisServers.start(RedisServers.Options.defaults().args("--replicaof", master.host(),
                        Integer.toString(master.port()), "--repl-diskless-sync-delay", "0")));
            }
            String conf = "sentinel monitor " + MASTER_NAME + " " + master.host() + " " + master.port() + " 2\n"
                    + "sentinel down-after-milliseconds " + MASTER_NAME + " 1000\n"
                    + "sentinel failover-timeout " + MASTER_NAME + " 3000\n"
                    + "sentinel parallel-syncs " + MASTER_NAME + " 2\n";
            for (int i = 0; i < 3; i++) {
                sentinels.add(RedisServers.start(RedisServers.Options.defaults().configFile(conf).args("--sentinel")));
            }
            RedisSentinels set = new RedisSentinels(servers, sentinels);
            set.await("every sentinel knows the master, 2 replicas and 2 other sentinels", () -> {
                for (RedisServer sentinel : sentinels) {
                    String state = Resp.infoField(set.call(sentinel, "INFO", "sentinel"), "master0");
                    if (state == null || !state.contains("status=ok") || !state.contains("slaves=2")
                            || !state.contains("sentinels=3")) {
                        return sentinel + ": " + state;
                    }
                }
                return null;
            });
            return set;
        } catch (RuntimeException e) {
            sentinels.forEach(RedisServer::close);
            servers.forEach(RedisServer::close);
            throw e;
        }
    }

    /**
     * Returns the Lettuce URI of the set: {@code redis-sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3#mymaster}.
     */
    public String sentinelUri() {
        StringBuilder uri = new StringBuilder("redis-sentinel://");
        for (int i = 0; i < sentinels.size(); i++) {
            uri.append(i == 0 ? "" : ",").append(sentinels.get(i).host()).append(':').append(sentinels.get(i).port());
        }
        return uri.append('#').append(MASTER_NAME).toString();
    }

    /** Returns the data servers (master and replicas), in start order. */
    public List<RedisServer> servers() {
        return servers;
    }

    /** Returns the sentinels. */
    public List<RedisServer> sentinels() {
        return sentinels;
    }

    /**
     * Returns the current master, as the first sentinel that answers names it.
     *
     * @throws IllegalStateException if no sentinel answers, or it names no server of this set
     */
    public RedisServer master() {
        for (RedisServer sentinel : sentinels) {
            try {
                List<String> address = sentinel.callList("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                int port = Integer.parseInt(address.get(1));
                for (RedisServer server : servers) {
                    if (server.port() == port) {
                        return server;
                    }
                }
                throw new IllegalStateException("the sentinels name a master outside this set: " + address);
            } catch (IOException e) {
                // a killed or paused sentinel: ask the next
            }
        }
        throw new IllegalStateException("no sentinel answers");
    }

    /**
     * Fails the master over with {@code SENTINEL FAILOVER} (no agreement needed, no write lost: the
     * sentinels pick a replica, promote it and make the old master its replica), and returns once
     * every live sentinel names the new master and the new master has every other server as a
     * connected replica. The request goes as {@link #requestFailover} sends it.
     *
     * @return the new master
     */
    public RedisServer failover() {
        RedisServer old = master();
        requestFailover(sentinels.get(0));
        return awaitMasterChangedFrom(old, servers.size() - 1);
    }

    /**
     * Sends {@code SENTINEL FAILOVER} to {@code via} once the set is quiet, and returns once a
     * sentinel names another master than before. A sentinel still finishing an earlier failover
     * refuses the request ({@code INPROG}), and one in TILT mode (after a pause, or when its timer
     * ran late on a loaded machine) accepts it but acts on nothing until TILT ends: so the request
     * waits until no live sentinel is in TILT or has a failover in progress ({@link #awaitQuiet}),
     * and is sent again if {@code via} refused it or gave it up (it shows no failover in progress
     * while the master is still the old one).
     *
     * @param via the sentinel to send it to
     * @return the new master
     * @throws IllegalStateException if the master has not changed within 90 s
     */
    public RedisServer requestFailover(RedisServer via) {
        RedisServer old = master();
        long deadline = System.nanoTime() + REPLICAS_TIMEOUT.toNanos();
        while (true) {
            awaitQuiet();
            try {
                via.call("SENTINEL", "FAILOVER", MASTER_NAME);
            } catch (Resp.RedisReplyException e) {
                String refusal = String.valueOf(e.getMessage());
                // INPROG: an earlier failover is still ending; NOGOODSLAVE: no replica is in a
                // state to be promoted yet (still syncing, or not yet seen by this sentinel).
                if (!refusal.contains("INPROG") && !refusal.contains("NOGOODSLAVE")) {
                    throw new UncheckedIOException("SENTINEL FAILOVER refused", e);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("SENTINEL FAILOVER failed", e);
            }
            while (true) {
                RedisServer now = master();
                if (!now.equals(old)) {
                    return now;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("gave up after " + REPLICAS_TIMEOUT.toSeconds()
                            + " s waiting for SENTINEL FAILOVER sent to " + via + ": the master is still " + old);
                }
                if (!failoverInProgress(via) && !inTilt(via)) {
                    break;   // refused or given up: ask again once the set is quiet
                }
                sleep();
            }
        }
    }

    /**
     * Waits until the set has settled after whatever a test did to it: no live sentinel is in
     * TILT mode or failing over, every live sentinel names the same master with the same
     * configuration epoch, that master has every other running server as a connected replica, and
     * every live sentinel has seen each of them as a replica of it ({@link #sentinelsAgreeOn}). A
     * test that starts from such a set sees the sentinels agree on the master its clients connect
     * to, and a failover it asks for is not undone by a sentinel that lags behind.
     *
     * @throws IllegalStateException if that does not happen within 90 s
     */
    public void awaitSettled() {
        awaitQuiet();
        await("every sentinel names the same master, which has every other running server as a replica",
                REPLICAS_TIMEOUT, () -> {
                    String named = null;
                    for (RedisServer sentinel : sentinels) {
                        if (sentinel.isPaused()) {
                            continue;
                        }
                        List<String> address;
                        try {
                            address = sentinel.callList("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                        } catch (IOException e) {
                            continue;   // not answering: not waited for
                        }
                        String here = String.join(":", address);
                        if (named != null && !named.equals(here)) {
                            return "the sentinels name " + named + " and " + here;
                        }
                        named = here;
                    }
                    if (named == null) {
                        return "no sentinel answers";
                    }
                    RedisServer master = master();
                    long running = servers.stream().filter(RedisServer::isRunning).count();
                    String connected = Resp.infoField(call(master, "INFO", "replication"), "connected_slaves");
                    if (!Long.toString(running - 1).equals(connected)) {
                        return master + " has " + connected + " replicas of " + (running - 1);
                    }
                    return sentinelsAgreeOn(master);
                });
    }

    /**
     * Whether every live sentinel holds the same configuration of {@code master}: the same
     * configuration epoch, and every other running server seen, in the reply to the sentinel's own
     * latest {@code INFO}, as a replica of {@code master} with its link up. A sentinel whose latest
     * {@code INFO} of a server still says {@code role:master} (a demoted or resumed master it has
     * not polled since; it polls replicas every 10 s) counts from the moment it saw that role, and
     * converts a server that has reported it for 8 s back to a replica ({@code +convert-to-slave}).
     * A failover that promotes that very server is then undone at the sentinel's next poll, before
     * the new configuration reaches it: the new master answers {@code READONLY} until the sentinels
     * fail it over again. So a test starts only once each sentinel has seen each replica as one;
     * a promotion then restarts every sentinel's count.
     *
     * @return null if they agree, else what differs
     */
    private String sentinelsAgreeOn(RedisServer master) {
        String epoch = null;
        for (RedisServer sentinel : sentinels) {
            if (sentinel.isPaused()) {
                continue;
            }
            List<String> fields;
            List<Map<String, String>> replicas;
            try {
                fields = sentinel.callList("SENTINEL", "MASTER", MASTER_NAME);
                replicas = sentinel.callMaps("SENTINEL", "REPLICAS", MASTER_NAME);
            } catch (IOException e) {
                continue;   // not answering: not waited for
            }
            String here = field(fields, "config-epoch");
            if (epoch != null && !epoch.equals(here)) {
                return "the sentinels know configuration epochs " + epoch + " and " + here;
            }
            epoch = here;
            for (RedisServer server : servers) {
                if (server.equals(master) || !server.isRunning()) {
                    continue;
                }
                Map<String, String> seen = replicas.stream()
                        .filter(replica -> Integer.toString(server.port()).equals(replica.get("port")))
                        .findFirst().orElse(null);
                if (seen == null) {
                    return sentinel + " does not list " + server + " as a replica";
                }
                String flags = seen.getOrDefault("flags", "");
                if (flags.contains("s_down") || flags.contains("disconnected")
                        || !"slave".equals(seen.get("role-reported"))
                        || !Integer.toString(master.port()).equals(seen.get("master-port"))
                        || !"ok".equals(seen.get("master-link-status"))) {
                    return sentinel + " sees " + server + " as " + seen;
                }
            }
        }
        return null;
    }

    /**
     * Waits until no live sentinel is in TILT mode or has a failover of the master in progress;
     * a sentinel that does not answer (paused, killed) is not waited for.
     *
     * @throws IllegalStateException if that does not happen within 90 s
     */
    public void awaitQuiet() {
        await("no sentinel is in TILT mode or failing over", REPLICAS_TIMEOUT, () -> {
            for (RedisServer sentinel : sentinels) {
                if (sentinel.isPaused()) {
                    continue;
                }
                if (inTilt(sentinel)) {
                    return sentinel + " is in TILT mode";
                }
                if (failoverInProgress(sentinel)) {
                    return sentinel + " has a failover in progress";
                }
            }
            return null;
        });
    }

    private boolean inTilt(RedisServer sentinel) {
        return "1".equals(Resp.infoField(call(sentinel, "INFO", "sentinel"), "sentinel_tilt"));
    }

    /** Whether the sentinel's flags for the master say a failover is under way; false if it does not answer. */
    private static boolean failoverInProgress(RedisServer sentinel) {
        try {
            String flags = field(sentinel.callList("SENTINEL", "MASTER", MASTER_NAME), "flags");
            return flags != null && flags.contains("failover_in_progress");
        } catch (IOException e) {
            return false;
        }
    }

    /** The value of {@code name} in a flat field-value reply (as {@code SENTINEL MASTER}'s), or null. */
    private static String field(List<String> fields, String name) {
        for (int i = 0; i + 1 < fields.size(); i += 2) {
            if (name.equals(fields.get(i))) {
                return fields.get(i + 1);
            }
        }
        return null;
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a failover", e);
        }
    }

    /**
     * Waits until every live sentinel names a master other than {@code old}, and the new master
     * has {@code replicas} connected replicas.
     *
     * @return the new master
     */
    public RedisServer awaitMasterChangedFrom(RedisServer old, int replicas) {
        await("the sentinels name a new master with " + replicas + " replicas", REPLICAS_TIMEOUT, () -> {
            RedisServer now = master();
            if (now.equals(old)) {
                return "still " + old;
            }
            String connected = Resp.infoField(call(now, "INFO", "replication"), "connected_slaves");
            return Integer.toString(replicas).equals(connected) ? null : now + " has " + connected + " replicas";
        });
        return master();
    }

    /**
     * Waits until the current master has {@code replicas} connected replicas, e.g. after a killed
     * old master was restarted and the sentinels made it a replica of the new one.
     */
    public void awaitReplicas(int replicas) {
        await("the master has " + replicas + " connected replicas", REPLICAS_TIMEOUT, () -> {
            RedisServer now = master();
            String connected = Resp.infoField(call(now, "INFO", "replication"), "connected_slaves");
            return Integer.toString(replicas).equals(connected) ? null : now + " has " + connected + " replicas";
        });
    }

    /** Stops every process of the set; idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            sentinels.forEach(RedisServer::close);
            servers.forEach(RedisServer::close);
        }
    }

    @Override
    public String toString() {
        return "RedisSentinels[" + sentinelUri() + ", servers " + servers + "]";
    }

    private String call(RedisServer server, String... command) {
        try {
            return server.call(command);
        } catch (IOException e) {
            return "";
        }
    }

    /** Polls until {@code problem} returns null; fails with its last answer after the timeout. */
    private void await(String what, Supplier<String> problem) {
        await(what, TIMEOUT, problem);
    }

    /** Polls until {@code problem} returns null; fails with its last answer after {@code timeout}. */
    private void await(String what, Duration timeout, Supplier<String> problem) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = problem.get();
        while (last != null) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("gave up after " + timeout.toSeconds() + " s waiting until " + what
                        + ": " + last);
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting until " + what, e);
            }
            last = problem.get();
        }
    }
}
