package dev.synchronizers.redis.wakeup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.wakeup.WakeupMessage.Form;
import dev.synchronizers.redis.wakeup.WakeupMessage.LocalHandover;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The wake-up messages that {@link WakeupMessage} writes and reads: the bytes the Lua scripts
 * publish, round trips, and texts that only another program would publish. Needs no Redis.
 */
class WakeupMessageTest {

    private static final String OWNER = "0b5a3c9e-3f6d-4b8e-9a41-7d2c6e1f0a58:42";

    /* --------------- encode: the bytes the scripts publish --------------- */

    @Test
    void encode_eachForm_isWhatTheScriptsPublish() {
        assertEquals("released", WakeupMessage.released().encode());                     // 'released'
        assertEquals(OWNER, WakeupMessage.named(OWNER).encode());                         // next writer by name
        assertEquals("granted:" + OWNER + ":7", WakeupMessage.granted(OWNER + ":7", "").encode());   // semaphore
        assertEquals("granted:" + OWNER + "=1700000000000001",
                WakeupMessage.granted(OWNER, "1700000000000001").encode());                // fair lock, token
    }

    /* --------------- parse --------------- */

    @Test
    void parse_encodedMessage_roundTrips() {
        for (WakeupMessage message : List.of(WakeupMessage.released(), WakeupMessage.named(OWNER),
                WakeupMessage.granted(OWNER, ""), WakeupMessage.granted(OWNER, "12"),
                WakeupMessage.granted(OWNER + ":3", ""), WakeupMessage.granted(OWNER, "a=b"))) {
            assertEquals(message, WakeupMessage.parse(message.encode()), message.encode());
        }
    }

    @Test
    void parse_released_isEveryone() {
        assertEquals(new WakeupMessage(Form.EVERYONE, "", ""), WakeupMessage.parse("released"));
    }

    @Test
    void parse_grantWithDetail_splitsAtTheFirstEquals() {
        WakeupMessage message = WakeupMessage.parse("granted:c:1=5=6");
        assertEquals(Form.GRANTED, message.form());
        assertEquals("c:1", message.owner());
        assertEquals("5=6", message.detail());
    }

    @Test
    void parse_grantWithoutDetail_hasEmptyDetail() {
        assertEquals(WakeupMessage.granted("c:1:2", ""), WakeupMessage.parse("granted:c:1:2"));
        assertEquals(WakeupMessage.granted("c:1", ""), WakeupMessage.parse("granted:c:1="));
    }

    /** Whatever is published on a channel is read, without failing; odd texts name no waiter of ours. */
    @ParameterizedTest
    @ValueSource(strings = {"", "granted:", "granted:=5", "Released", "released ", "a=b", "granted", ":w:c"})
    void parse_anyText_isAMessage(String text) {
        WakeupMessage message = WakeupMessage.parse(text);
        assertTrue(message.form() != Form.EVERYONE, text);
        assertEquals(message, WakeupMessage.parse(message.encode()), text);
    }

    @Test
    void parse_null_throwsNullPointerException() {
        assertThrows(NullPointerException.class, () -> WakeupMessage.parse(null));
    }

    /* --------------- construction --------------- */

    @Test
    void new_partsOfAnotherForm_throw() {
        assertThrows(IllegalArgumentException.class, () -> new WakeupMessage(Form.EVERYONE, OWNER, ""));
        assertThrows(IllegalArgumentException.class, () -> new WakeupMessage(Form.EVERYONE, "", "5"));
        assertThrows(IllegalArgumentException.class, () -> new WakeupMessage(Form.NAMED, OWNER, "5"));
        assertThrows(IllegalArgumentException.class, () -> WakeupMessage.named("released"));
        assertThrows(IllegalArgumentException.class, () -> WakeupMessage.named("granted:" + OWNER));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WakeupMessage.granted("c=1", "5"));
        assertTrue(e.getMessage().contains("\"c=1\""), e.getMessage());
        assertThrows(NullPointerException.class, () -> WakeupMessage.granted(OWNER, null));
    }

    /* --------------- the local hand-over detail --------------- */

    @Test
    void localHandover_encode_isTokenAtNanos() {
        assertEquals("1700000000000001@-123456789", new LocalHandover(1700000000000001L, -123456789L).encode());
    }

    @Test
    void localHandover_parse_roundTrips() {
        LocalHandover handover = new LocalHandover(1700000000000001L, Long.MIN_VALUE);
        assertEquals(Optional.of(handover), LocalHandover.parse(handover.encode()));
    }

    @Test
    void localHandover_parse_publishedDetail_isEmpty() {
        assertEquals(Optional.empty(), LocalHandover.parse("1700000000000001"));
        assertEquals(Optional.empty(), LocalHandover.parse(""));
    }

    @Test
    void localHandover_parse_malformed_throws() {
        assertThrows(NumberFormatException.class, () -> LocalHandover.parse("x@1"));
        assertThrows(NumberFormatException.class, () -> LocalHandover.parse("1@"));
    }
}
