package dev.synchronizers.redis.topology;

import dev.synchronizers.fixture.Opened;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.testkit.RedisCluster;
import dev.synchronizers.testkit.RedisServer;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * The fixture of the tests on a Redis Cluster: one 3-master, 3-replica cluster formed on loopback
 * per test class (started before its first test, stopped after its last), a key prefix of its own
 * for every test, its method name as a synchronizer name, and what the test opened closed after it.
 */
abstract class ClusterTestBase {

    /** The cluster of the running test class. */
    static RedisCluster cluster;

    final Opened opened = new Opened();
    /** This test's key prefix: no key of another test is under it. */
    String prefix;
    /** This test's method name. */
    String name;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }

    @BeforeEach
    void names(TestInfo test) {
        prefix = getClass().getSimpleName().replaceAll("[a-z0-9]", "").toLowerCase() + "-"
                + UUID.randomUUID().toString().substring(0, 8);
        name = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void closeOpened() throws Exception {
        opened.closeAll();
    }

    /** A name derived from {@code base} whose lock keys live on {@code master}. */
    String nameOn(RedisServer master, String base) {
        for (int i = 0; ; i++) {
            String candidate = base + "-" + i;
            if (cluster.masterOf(LockKeys.of(prefix, candidate).lock()).equals(master)) {
                return candidate;
            }
        }
    }
}
