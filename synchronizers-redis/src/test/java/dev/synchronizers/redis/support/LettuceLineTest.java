package dev.synchronizers.redis.support;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.Redlock;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.Test;

/** The check of the Lettuce on the class path that both builders' {@code build()} make first. */
class LettuceLineTest {

    @Test
    void check_olderThanTheMinimum_failsNamingBothVersions() {
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> LettuceLine.check("6.5.3.RELEASE"));

        assertTrue(thrown.getMessage().contains("6.5.3.RELEASE"), thrown.getMessage());
        assertTrue(thrown.getMessage().contains("6.6.0"), thrown.getMessage());
        assertThrows(IllegalStateException.class, () -> LettuceLine.check("5.3.7.RELEASE/abc1234"));
        assertThrows(IllegalStateException.class, () -> LettuceLine.check("6.5"));
    }

    @Test
    void check_supportedOrNewer_passes() {
        for (String version : new String[] {"6.6.0.RELEASE", "6.6.0.RELEASE/643bd47", "6.6.1.BUILD-SNAPSHOT", "6.8.2.RELEASE",
                "7.5.2.RELEASE", "7.7.0.RELEASE/1960d49", "8.0.0.M1", "10.0"}) {
            assertDoesNotThrow(() -> LettuceLine.check(version), version);
        }
    }

    @Test
    void check_versionUnknownOrNotUnderstood_passes() {
        assertDoesNotThrow(() -> LettuceLine.check(null));
        assertDoesNotThrow(() -> LettuceLine.check(""));
        assertDoesNotThrow(() -> LettuceLine.check("unknown"));
        assertDoesNotThrow(() -> LettuceLine.check("99999999999.0.0"));
    }

    @Test
    void isOlder_comparesMajorMinorPatch() {
        assertTrue(LettuceLine.isOlder("6.5.9", "6.6.0"));
        assertTrue(LettuceLine.isOlder("6.6", "6.6.1"));
        assertFalse(LettuceLine.isOlder("6.6.0", "6.6.0"));
        assertFalse(LettuceLine.isOlder("6.10.0", "6.6.0"), "numbers, not text");
        assertFalse(LettuceLine.isOlder("7.0.0", "6.6.0"));
    }

    /** The Lettuce this test runs on (CI runs it on every supported line) is read, one way or the other, and passes. */
    @Test
    void version_ofTheLettuceOnTheClassPath_isReadAndPasses() {
        String version = LettuceLine.version();
        String pom = LettuceLine.pomVersion(RedisClient.class.getClassLoader());

        assertNotNull(version);
        assertNotNull(pom);
        assertTrue(version.startsWith(pom), version + " from the manifest, " + pom + " from the Maven metadata");
        assertFalse(LettuceLine.isOlder(version, LettuceLine.MINIMUM), version);
        assertDoesNotThrow(() -> LettuceLine.check());
    }

    /** On a supported Lettuce both builders pass the check and go on to their own (here: nothing to connect to). */
    @Test
    void builders_onASupportedLettuce_passTheCheck() {
        IllegalStateException standalone = assertThrows(IllegalStateException.class, () -> RedisSynchronizers.builder().build());
        IllegalStateException redlock = assertThrows(IllegalStateException.class, () -> Redlock.builder().build());

        assertEquals("no Redis to connect to: call uri(...), cluster(...) or client(...)", standalone.getMessage());
        assertEquals("no nodes: call nodes(...)", redlock.getMessage());
    }
}
