package dev.synchronizers.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The cluster fixture against real redis-server processes, checked with Lettuce's cluster client.
 * One cluster serves the whole class; every test leaves it healthy, and starts from whatever
 * roles the earlier tests left, found through the fixture's queries.
 */
@Tag("topology")
class RedisClusterTest {

    private static RedisCluster cluster;
    private static ClientResources resources;
    private static RedisClusterClient client;
    private static StatefulRedisClusterConnection<String, String> connection;
    private static RedisAdvancedClusterCommands<String, String> redis;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start();
        // A short constant reconnect delay: Lettuce's default back-off grows to 30 s.
        resources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(100))).build();
        client = RedisClusterClient.create(resources, cluster.seedUris().stream().map(RedisURI::create).toList());
        // Lettuce 7 has every adaptive refresh trigger on by default; the periodic refresh is added.
        client.setOptions(ClusterClientOptions.builder()
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(Duration.ofSeconds(1))
                        .build())
                .build());
        connection = client.connect();
        redis = connection.sync();
    }

    @AfterAll
    static void stopCluster() {
        try {
            if (connection != null) {
                connection.close();
            }
            if (client != null) {
                client.shutdown();
            }
            if (resources != null) {
                resources.shutdown();
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    @BeforeEach
    void healthy() {
        cluster.awaitHealthy();
    }

    /* --------------- start --------------- */

    /** "3 masters and 3 replicas" serving the slots in three ranges; a cluster client reads and writes on every master. */
    @Test
    void start_defaults_clientSetsAndGetsOnEveryMaster() throws IOException {
        List<RedisServer> masters = cluster.masters();
        assertEquals(3, masters.size(), cluster::toString);
        assertEquals(3, cluster.replicas().size(), cluster::toString);
        assertEquals(6, cluster.seedUris().size());
        assertEquals(3, Set.of(cluster.masterOf(0), cluster.masterOf(5461), cluster.masterOf(10923)).size());
        for (RedisServer master : masters) {
            assertEquals(1, cluster.replicasOf(master).size(), () -> cluster.clusterNodes(master));
            String key = keyOn(master, "every-master-");
            assertEquals(SlotHash.getSlot(key), cluster.slotOf(key));
            assertEquals("OK", redis.set(key, "value of " + key));
            assertEquals("value of " + key, redis.get(key));
            assertEquals("1", master.call("EXISTS", key), "the key lives on the master the fixture names");
        }
    }

    /* --------------- failover --------------- */

    /** "Promotes replica to master of its master's slots ... the old master becomes its replica." */
    @Test
    void failover_replica_becomesMasterAndClientKeepsWorking() {
        RedisServer master = cluster.masters().get(0);
        RedisServer replica = cluster.replicasOf(master).get(0);
        String key = keyOn(master, "failover-");
        redis.set(key, "before");

        cluster.failover(replica);

        assertEquals(replica, cluster.masterOf(key));
        assertTrue(cluster.masters().contains(replica));
        assertEquals(List.of(master), cluster.replicasOf(replica));
        assertEquals("before", redis.get(key), "a coordinated failover loses no write");
        redis.set(key, "after");
        assertEquals("after", redis.get(key));
    }

    /* --------------- moveSlot --------------- */

    /** "Moves slot with its keys to the master to ... every live node agrees on the new owner." */
    @Test
    void moveSlot_toAnotherMaster_movesTheKeysInBatches() throws IOException {
        String tag = "{moving}";
        int slot = SlotHash.getSlot(tag);
        RedisServer from = cluster.masterOf(slot);
        RedisServer to = cluster.masters().stream().filter(master -> !master.equals(from)).findFirst().orElseThrow();
        int keys = 250;   // more than one batch of 100
        for (int i = 0; i < keys; i++) {
            redis.set(tag + i, "v" + i);
        }

        cluster.moveSlot(slot, to);

        assertEquals(to, cluster.masterOf(slot));
        assertEquals(Integer.toString(keys), to.call("CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot)));
        assertEquals("0", from.call("CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot)));
        for (int i = 0; i < keys; i++) {
            assertEquals("v" + i, redis.get(tag + i));
        }
    }

    /* --------------- kill and restart --------------- */

    /**
     * "Starts a new one ... with the same cluster identity ... a replica copies its master's" data,
     * after every node flagged the killed replica as failed.
     */
    @Test
    void killAndRestart_replica_rejoinsItsMasterAndResyncs() throws IOException {
        RedisServer master = cluster.masters().get(2);
        RedisServer replica = cluster.replicasOf(master).get(0);
        assumeTrue(replica.isManaged(), "the nodes run in Docker; the testkit cannot kill them");
        redis.set(keyOn(master, "restart-"), "kept by the master");
        ProcessHandle first = ProcessHandle.of(replica.pid()).orElseThrow();

        cluster.kill(replica);
        assertFalse(first.isAlive());
        cluster.awaitFailed(replica);   // restart only once the cluster has acted on the failure
        cluster.restart(replica);

        assertNotEquals(first.pid(), replica.pid());
        assertEquals(List.of(replica), cluster.replicasOf(master));
        assertEquals("up", Resp.infoField(replica.info("replication"), "master_link_status"));
        assertEquals(master.call("DBSIZE"), replica.call("DBSIZE"), "the restarted replica copied its master's data");
    }

    /* --------------- close --------------- */

    /** "Stops every node's process that this cluster started ... a paused one is continued first." */
    @Test
    void close_withPausedAndKilledNodes_leavesNoProcessRunning() {
        RedisCluster small = RedisCluster.start(RedisCluster.Options.defaults().masters(2));
        Set<ProcessHandle> processes = new HashSet<>();
        try {
            assumeTrue(small.nodes().get(0).isManaged(), "the nodes run in Docker; no pids to check");
            for (RedisServer node : small.nodes()) {
                processes.add(ProcessHandle.of(node.pid()).orElseThrow());
            }
            assertEquals(4, processes.size());
            small.pause(small.replicas().get(0));
            small.kill(small.masters().get(0));
        } finally {
            small.close();
        }
        for (RedisServer node : small.nodes()) {
            assertFalse(node.isRunning(), node::toString);
        }
        // Handles taken before close compare start times too, so a reused pid does not count.
        for (ProcessHandle process : processes) {
            assertFalse(process.isAlive(), process::toString);
        }
    }

    /** Returns a key whose slot {@code master} serves, by Lettuce's slot hash. */
    private static String keyOn(RedisServer master, String prefix) {
        for (int i = 0; ; i++) {
            String key = prefix + i;
            if (cluster.masterOf(SlotHash.getSlot(key)).equals(master)) {
                return key;
            }
        }
    }
}
