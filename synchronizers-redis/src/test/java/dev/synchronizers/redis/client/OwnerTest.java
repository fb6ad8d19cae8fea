package dev.synchronizers.redis.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The owner strings that {@link Owner} writes and reads: the two forms byte for byte, round trips,
 * the client part as the Lua scripts read it, and strings that are not owners. Needs no Redis.
 */
class OwnerTest {

    private static final String CLIENT = "0b5a3c9e-3f6d-4b8e-9a41-7d2c6e1f0a58";

    /**
     * The Lua scripts' rule, as lock-acquire-waiting.lua and lock-handover.lua write it:
     * {@code string.match(owner, '^([^:]*):') or owner}.
     */
    private static final Pattern LUA_CLIENT = Pattern.compile("^([^:]*):");

    private static String luaClient(String owner) {
        Matcher matcher = LUA_CLIENT.matcher(owner);
        return matcher.find() ? matcher.group(1) : owner;
    }

    /* --------------- encode --------------- */

    @Test
    void encode_threadForm_isClientColonThread() {
        assertEquals(CLIENT + ":42", Owner.ofThread(CLIENT, 42).encode());
    }

    @Test
    void encode_attemptForm_isClientColonThreadColonAttempt() {
        assertEquals(CLIENT + ":42:7", Owner.ofAttempt(CLIENT, 42, 7).encode());
    }

    @Test
    void encode_extremes_plainDecimal() {
        assertEquals("c:0", Owner.ofThread("c", 0).encode());
        assertEquals("c:" + Long.MAX_VALUE + ":" + Long.MAX_VALUE,
                Owner.ofAttempt("c", Long.MAX_VALUE, Long.MAX_VALUE).encode());
    }

    /* --------------- parse --------------- */

    @Test
    void parse_encodedOwner_roundTrips() {
        for (Owner owner : List.of(Owner.ofThread(CLIENT, 1), Owner.ofThread(CLIENT, 0),
                Owner.ofAttempt(CLIENT, 1, 1), Owner.ofAttempt("client-a", Long.MAX_VALUE, Long.MAX_VALUE),
                Owner.ofThread(UUID.randomUUID().toString(), 31337))) {
            assertEquals(owner, Owner.parse(owner.encode()), owner.encode());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"client-a:7", "client-a:1:1", CLIENT + ":123:456", "c:0", "x:9223372036854775807"})
    void parse_ownerString_encodesBackToTheSameBytes(String text) {
        assertEquals(text, Owner.parse(text).encode());
    }

    @Test
    void parse_threadForm_hasNoAttempt() {
        Owner owner = Owner.parse(CLIENT + ":42");
        assertEquals(CLIENT, owner.clientId());
        assertEquals(42, owner.threadId());
        assertEquals(OptionalLong.empty(), owner.attempt());
    }

    @Test
    void parse_attemptForm_hasTheAttempt() {
        Owner owner = Owner.parse(CLIENT + ":42:7");
        assertEquals(CLIENT, owner.clientId());
        assertEquals(42, owner.threadId());
        assertEquals(OptionalLong.of(7), owner.attempt());
    }

    /** Strings in neither form: rejected with a message that quotes them. */
    @ParameterizedTest
    @ValueSource(strings = {"", "client", ":", ":7", "client:", "client:x", "client:7:", "client::7", "client:7:0",
            "client:-7", "client:+7", "client:07", "client:7:07", "client:7:8:9", "client:7 ", " client:7x",
            "client:9223372036854775808", "client:99999999999999999999", ":w:client", "client:7:-1"})
    void parse_notAnOwner_throwsNamingTheString(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Owner.parse(text));
        assertTrue(e.getMessage().contains("\"" + text + "\""), e.getMessage());
        assertTrue(e.getMessage().contains("<client-id>:<thread-id>"), e.getMessage());
        assertTrue(Owner.tryParse(text).isEmpty(), text);
    }

    @Test
    void parse_null_throwsNullPointerException() {
        assertThrows(NullPointerException.class, () -> Owner.parse(null));
        assertTrue(Owner.tryParse(null).isEmpty());
    }

    /* --------------- the client part (the Lua rule) --------------- */

    @Test
    void clientOf_eitherForm_isTheClientId_asLuaReadsIt() {
        for (Owner owner : List.of(Owner.ofThread(CLIENT, 42), Owner.ofAttempt(CLIENT, 42, 7))) {
            assertEquals(CLIENT, Owner.clientOf(owner.encode()));
            assertEquals(CLIENT, luaClient(owner.encode()), "the Lua rule reads the same client");
        }
    }

    /** For any string, even one another program wrote, the Java rule and the Lua rule agree. */
    @ParameterizedTest
    @ValueSource(strings = {"", "client", ":", ":7", "client:", "a:b:c", "a:b:c:d", "client:7:8:9", "::"})
    void clientOf_anyString_agreesWithTheLuaRule(String text) {
        assertEquals(luaClient(text), Owner.clientOf(text));
    }

    @Test
    void prefixOf_everyOwnerOfTheClient_startsWithIt_andNoOtherClientsDo() {
        String prefix = Owner.prefixOf("client-a");
        assertEquals("client-a:", prefix);
        assertTrue(Owner.ofThread("client-a", 3).encode().startsWith(prefix));
        assertTrue(Owner.ofAttempt("client-a", 3, 4).encode().startsWith(prefix));
        assertFalse(Owner.ofThread("client-ab", 3).encode().startsWith(prefix));
        assertFalse(Owner.ofThread("client", 3).encode().startsWith(prefix));
    }

    /* --------------- construction --------------- */

    @ParameterizedTest
    @ValueSource(strings = {"", "a:b", ":", "client:"})
    void ofThread_clientIdEmptyOrWithColon_throws(String clientId) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Owner.ofThread(clientId, 1));
        assertTrue(e.getMessage().contains("clientId"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Owner.prefixOf(clientId));
    }

    @Test
    void ofThread_negativeThreadId_throws() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Owner.ofThread(CLIENT, -1));
        assertEquals("threadId must be >= 0: -1", e.getMessage());
    }

    @Test
    void ofAttempt_attemptBelowOne_throws() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Owner.ofAttempt(CLIENT, 1, 0));
        assertEquals("attempt must be >= 1: 0", e.getMessage());
    }

    @Test
    void new_nullParts_throwNullPointerException() {
        assertThrows(NullPointerException.class, () -> Owner.ofThread(null, 1));
        assertThrows(NullPointerException.class, () -> new Owner(CLIENT, 1, null));
    }
}
