package dev.synchronizers.redis.topology;

import dev.synchronizers.fixture.Opened;
import dev.synchronizers.testkit.RedisSentinels;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * The fixture of the tests under Sentinel: one master with 2 replicas and 3 sentinels on loopback per
 * test class, a set that agrees before every test (the failovers, kills and pauses of the test before
 * may still be settling: a sentinel in TILT, one that has not caught up, a replica resyncing), a key
 * prefix of its own for every test, its method name as a synchronizer name, and what the test opened
 * closed after it.
 */
abstract class SentinelTestBase {

    /** The Sentinel set of the running test class. */
    static RedisSentinels sentinels;

    final Opened opened = new Opened();
    /** This test's key prefix: no key of another test is under it. */
    String prefix;
    /** This test's method name. */
    String name;

    @BeforeAll
    static void startSentinels() {
        sentinels = RedisSentinels.start();
    }

    @AfterAll
    static void stopSentinels() {
        if (sentinels != null) {
            sentinels.close();
            sentinels = null;
        }
    }

    @BeforeEach
    void names(TestInfo test) {
        prefix = getClass().getSimpleName().replaceAll("[a-z0-9]", "").toLowerCase() + "-"
                + UUID.randomUUID().toString().substring(0, 8);
        name = test.getTestMethod().orElseThrow().getName();
        System.out.println(java.time.LocalTime.now() + " ---- " + name);
        sentinels.awaitSettled();
    }

    @AfterEach
    void closeOpened() throws Exception {
        opened.closeAll();
    }
}
