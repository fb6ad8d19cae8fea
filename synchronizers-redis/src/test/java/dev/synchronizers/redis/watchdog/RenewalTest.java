package dev.synchronizers.redis.watchdog;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.script.Script;
import org.junit.jupiter.api.Test;

/** {@link Renewal}: checked against its renew script's item, and kept apart from the caller's arrays. Needs no Redis. */
class RenewalTest {

    @Test
    void renewal_itemOfAnotherShape_throws() {
        assertThrows(IllegalArgumentException.class, () -> Renewal.ofThread(Script.LOCK_RENEW, new String[] {"k"},
                new String[] {"owner"}, 0, 0, Thread.currentThread(), cause -> { }));
        assertThrows(IllegalArgumentException.class, () -> Renewal.ofClient(Script.SEMAPHORE_RENEW, new String[] {"k"},
                new String[] {"grant"}, 0, cause -> { }));
    }

    @Test
    void renewal_callerChangesItsArrays_renewalKeepsWhatItWasGiven() {
        String[] keys = {"holds", "leases"};
        String[] args = {"grant"};
        Renewal renewal = Renewal.ofClient(Script.SEMAPHORE_RENEW, keys, args, 0, cause -> { });
        keys[0] = "other";
        args[0] = "other";
        assertArrayEquals(new String[] {"holds", "leases"}, renewal.keys());
        assertArrayEquals(new String[] {"grant"}, renewal.itemArgs());
    }

    @Test
    void factories_sayWhoseTheHoldIs() {
        Renewal ofThread = Renewal.ofThread(Script.LOCK_RENEW, new String[] {"lock"}, new String[] {"owner", "7"},
                5_000, 0, Thread.currentThread(), cause -> { });
        assertSame(Thread.currentThread(), ofThread.owner());
        assertTrue(ofThread.fixed());
        assertNull(ofThread.takeBack());
        Renewal ofClient = Renewal.ofClient(Script.SEMAPHORE_RENEW, new String[] {"holds", "leases"},
                new String[] {"grant"}, 0, cause -> { });
        assertNull(ofClient.owner());
        assertFalse(ofClient.fixed());
    }
}
