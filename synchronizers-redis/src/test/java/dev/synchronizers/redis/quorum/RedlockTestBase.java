package dev.synchronizers.redis.quorum;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.synchronizers.LostHold;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.Redlock;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the tests of a {@link Redlock} share: three standalone nodes per test class, inspected and
 * tampered with node by node; and per test its names, a {@link FaultProxy} in front of each node,
 * the clients it makes, and the holds they report lost.
 *
 * <p>A test's clients: {@link #client(Duration)} reaches the nodes directly, reports to
 * {@link #lost}, and after the test must have no node lease left registered; {@link #plain(Duration)}
 * reaches them directly with nothing more; {@link #proxied(Duration)} reaches every node through
 * its proxy, and {@link #direct()} is another client for it. "Ran, reply lost" is
 * {@link FaultProxy#holdReplies()} until the command is seen in Redis, then the connection cut;
 * "never arrived" is {@link FaultProxy#blackhole(boolean)} and the connection cut before it is
 * turned off. Every script is cached on every node before each test, so that a held call is one
 * EVALSHA that runs (a NOSCRIPT answer would be held too).
 */
@ExtendWith(SynchronizersExtension.class)
public abstract class RedlockTestBase {

    @RegisterExtension
    static final RedlockNodes nodes = new RedlockNodes(3);
    /** The nodes, in order; filled before a class's first test. */
    static final List<RedisServer> NODES = nodes.servers();
    /** A connection to each node, in order; filled before a class's first test. */
    static final List<RedisCommands<String, String>> REDIS = nodes.redis();

    /** Longer than any test: a grant left behind would outlast it, so only a follow-up can end it. */
    static final Duration LONG_LEASE = Duration.ofSeconds(60);
    /**
     * The proxied clients' command timeout: long enough that the test sees a command run and cuts
     * the follow-up off before the caller gives up on the command's reply.
     */
    static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** A command timeout no held reply of the NOSCRIPT tests comes near: the held call is answered, never timed out. */
    static final Duration NEVER_TIMES_OUT = Duration.ofSeconds(60);
    /**
     * The NOSCRIPT tests' lease: its watchdog ticks (every third of it) never come during a test,
     * so the only renewal is the one the test sends, and a grant left behind outlasts the test.
     */
    static final Duration TEN_MINUTES = Duration.ofMinutes(10);
    /**
     * The command timeout of an acquisition kept in flight while another client takes and releases
     * the lock: it must still be waiting for its write-back's replies when they are let through.
     */
    static final Duration LATE_TIMEOUT = Duration.ofSeconds(15);
    private static final Pattern CALLS = Pattern.compile("\\bcalls=(\\d+)");

    final Opened opened;
    final String prefix;
    final String name;
    /** What the clients of {@link #client(Duration)} and {@link #proxied(Duration)} report lost. */
    final Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
    /** One per node, in node order. */
    final List<FaultProxy> proxies = new ArrayList<>();
    private final List<Redlock> clients = new ArrayList<>();

    RedlockTestBase(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    @BeforeAll
    static void cacheScripts() {
        loadScripts();
    }

    @BeforeEach
    void startProxies() {
        for (RedisServer node : NODES) {
            proxies.add(opened.add(FaultProxy.start(node.port())));
        }
    }

    /**
     * Lets every proxy's traffic through, caches the scripts again (the NOSCRIPT tests flush a
     * node's), and closes the clients of {@link #client(Duration)}, each of which must have no node
     * lease left registered; what {@link #opened} holds is closed after this.
     */
    @AfterEach
    void settle() {
        for (FaultProxy proxy : proxies) {
            proxy.blackhole(false);
            proxy.pass();
        }
        loadScripts();
        for (Redlock client : clients) {
            assertEquals(0, RedisInternals.watchdogEntries(client), "no node lease left registered");
            client.close();
        }
    }

    /** Caches every script on every node. */
    private static void loadScripts() {
        for (RedisCommands<String, String> redis : REDIS) {
            for (Script script : Script.values()) {
                redis.scriptLoad(ScriptRegistry.text(script));
            }
        }
    }

    /* --------------- clients --------------- */

    Redlock client() {
        return client(Duration.ofSeconds(30));
    }

    /**
     * A client that reaches the nodes directly and reports to {@link #lost}; its watchdogs tick
     * every third of {@code lease} (tests tick them by hand). Once the test is over, it must have
     * no node lease left registered.
     */
    Redlock client(Duration lease) {
        Redlock client = Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix)
                .lease(lease)
                .lostHoldListener(lost::add)
                .build();
        clients.add(client);
        return client;
    }

    /** A client that reaches the nodes directly, with no listener, closed after the test. */
    Redlock plain(Duration lease) {
        return opened.add(Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix)
                .lease(lease)
                .build());
    }

    /** A client whose every node is reached through this test's proxies. */
    Redlock proxied(Duration lease) {
        return proxied(lease, TIMEOUT);
    }

    Redlock proxied(Duration lease, Duration timeout) {
        return opened.add(Redlock.builder()
                .nodes(proxies.stream().map(FaultProxy::uri).toArray(String[]::new))
                .keyPrefix(prefix).lease(lease).commandTimeout(timeout).lostHoldListener(lost::add).build());
    }

    /** Another client for a test of {@link #proxied(Duration)} clients: it reaches the nodes directly. */
    Redlock direct() {
        return opened.add(Redlock.builder()
                .nodes(nodes.uris())
                .keyPrefix(prefix).lease(LONG_LEASE).commandTimeout(TIMEOUT).build());
    }

    /* --------------- the lock on the nodes --------------- */

    String lockKey() {
        return prefix + ":redlock:{" + name + "}";
    }

    String tokenKey() {
        return lockKey() + ":token";
    }

    /** The owner field of the lock's hash on one node, or null if the node has no holder. */
    static String ownerOn(RedisCommands<String, String> redis, String key) {
        return redis.hkeys(key).stream().filter(field -> !field.startsWith(":")).findFirst().orElse(null);
    }

    /** The owner field of the lock's hash on node {@code i}, or null if it has no holder. */
    String ownerOn(int i) {
        return REDIS.get(i).hkeys(lockKey()).stream().filter(field -> !field.startsWith(":")).findFirst().orElse(null);
    }

    /* --------------- faults --------------- */

    /** Cuts every connection through node {@code i}'s proxy, losing what it kept, and lets traffic through again. */
    void loseKept(int i) {
        proxies.get(i).cutAll();
        proxies.get(i).blackhole(false);
        proxies.get(i).pass();
    }

    /**
     * Ticks the client's watchdogs until no node has the lock and every follow-up it retries has
     * been taken. Not until the retries alone: a follow-up is queued when its command fails, which
     * may come a moment after the connection it was sent on is cut.
     */
    void awaitFollowUpsFreeingEveryNode(Redlock client) {
        // What the contract promises: follow-ups are retried while the hold's lease lasts (60 s
        // here, for every client these tests pass), so that a node is freed before its key would
        // expire by itself. Waited for up to just short of that, not for the default 30 s: a retry
        // may wait for its node's connection to come back (Lettuce's reconnect back-off), and a
        // key that outlives the wait is still a failure.
        Await.until("the retried follow-ups free every node", LONG_LEASE.minusSeconds(8), () -> {
            RedisInternals.renewNow(client);
            return ownerOn(0) == null && ownerOn(1) == null && ownerOn(2) == null
                    && RedisInternals.pendingRetries(client) == 0;
        });
    }

    /**
     * Holds every node's watchdog thread until the returned latch is counted down, as a paused JVM
     * holds them while its other threads resume first; returns once every one is held.
     */
    static CountDownLatch pauseWatchdogs(Redlock client) throws InterruptedException {
        return holdWatchdogs(RedisInternals.nodes(client));
    }

    /** Holds these nodes' watchdog threads until the returned latch is counted down; returns once they are held. */
    static CountDownLatch holdWatchdogs(List<RedlockNode> nodes) throws InterruptedException {
        CountDownLatch resume = new CountDownLatch(1);
        CountDownLatch held = new CountDownLatch(nodes.size());
        for (RedlockNode node : nodes) {
            node.watchdog().executor().execute(() -> {
                held.countDown();
                try {
                    resume.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        held.await();
        return resume;
    }

    /**
     * Empties node {@code i}'s script cache, as a restart or a failover would, but caches the
     * give-back again, so that the release or give-back queued behind a script that meets NOSCRIPT
     * runs at once even where it is sent by SHA (as it was before the fix); and counts the node's
     * script calls from zero.
     */
    void flushScriptsButGiveBack(int i) {
        REDIS.get(i).scriptFlush();
        REDIS.get(i).scriptLoad(ScriptRegistry.text(Script.LOCK_GIVE_BACK));
        REDIS.get(i).configResetstat();
    }

    /** How many script calls node {@code i} has run (EVAL and EVALSHA, NOSCRIPT answers included) since its stats were reset. */
    static long scriptCalls(int i) {
        long calls = 0;
        for (String line : REDIS.get(i).info("commandstats").split("\\r?\\n")) {
            if (line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:")) {
                Matcher m = CALLS.matcher(line);
                if (m.find()) {
                    calls += Long.parseLong(m.group(1));
                }
            }
        }
        return calls;
    }
}
