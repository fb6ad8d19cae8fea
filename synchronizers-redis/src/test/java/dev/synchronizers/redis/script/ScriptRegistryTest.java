package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.fixture.Await;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.testkit.FaultProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link ScriptRegistry} against a real server: SHA1s, the EVAL fallback and the arity check. */
@Tag("redis")
class ScriptRegistryTest extends LuaTestBase {

    private String lock;
    private String tokenKey;

    @BeforeEach
    void names() {
        lock = base;
        tokenKey = lock + ":token";
    }

    private List<Object> acquire(String owner) throws Exception {
        return lua.run(Script.LOCK_ACQUIRE, new String[] {lock, tokenKey}, owner, Long.toString(LONG_LEASE_MS));
    }

    /* --------------- sha --------------- */

    @ParameterizedTest
    @EnumSource(Script.class)
    void sha_everyScript_equalsWhatScriptLoadReturns(Script script) {
        assertEquals(lua.redis.scriptLoad(ScriptRegistry.text(script)), lua.scripts.sha(script), script.file);
    }

    /* --------------- NOSCRIPT --------------- */

    @Test
    void run_afterScriptFlush_fallsBackToEvalAndCachesTheScript() throws Exception {
        lua.redis.scriptFlush();
        String sha = lua.scripts.sha(Script.LOCK_ACQUIRE);
        assertEquals(List.of(false), lua.redis.scriptExists(sha));

        List<Object> reply = acquire("owner-a");

        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        assertEquals(reply.get(1).toString(), lua.redis.hget(lock, "owner-a"));
        assertEquals(List.of(true), lua.redis.scriptExists(sha), "EVAL caches the script again");
    }

    @Test
    void run_repeatedFlushes_neverFails() throws Exception {
        for (int i = 0; i < 20; i++) {
            lua.redis.scriptFlush();
            List<Object> reply = acquire("owner-" + i);
            int round = i;
            assertEquals(1L, reply.get(0), () -> "round " + round + ": reply " + reply);
            assertEquals(1L, lua.redis.del(lock));
        }
    }

    /**
     * A script sent with its text ({@link Script.Sending#WITH_TEXT}: the renewals) never meets
     * NOSCRIPT, so it runs where it was sent on the connection, not after what was queued behind
     * it: after a flush it is one EVAL, and no EVALSHA reaches the server.
     */
    @Test
    void run_withTextScriptAfterScriptFlush_isOneEvalAndNeverMeetsNoScript() throws Exception {
        assertEquals(Script.Sending.WITH_TEXT, Script.REDLOCK_RENEW.sending);
        lua.redis.scriptFlush();
        lua.redis.configResetstat();

        List<Object> reply = lua.run(Script.LOCK_RENEW, new String[] {lock}, "1000", "owner-a", "1001");

        assertEquals(List.of(0L), reply, "nothing to renew");
        assertEquals(1, scriptCalls("eval"), "one EVAL");
        assertEquals(0, scriptCalls("evalsha"), "no EVALSHA, so no NOSCRIPT");
    }

    /**
     * A NOSCRIPT answer that arrives after the call's command timeout is not followed by the EVAL:
     * its caller may have given up and sent a follow-up, which the EVAL would overtake. The call
     * fails as unanswered, and it did not run. (The wait before the answer is let through is the
     * command timeout itself passing, not a guess at how long something takes.)
     */
    @Test
    void run_noScriptAnsweredAfterTheCommandTimeout_failsUnansweredAndIsNotSentAgain() throws Exception {
        Duration timeout = Duration.ofMillis(200);
        try (FaultProxy proxy = FaultProxy.start(redis.server().port())) {
            // Lettuce's own timeout far longer: only the registry's command timeout is passed.
            RedisURI uri = RedisURI.create(proxy.uri());
            uri.setTimeout(Duration.ofSeconds(60));
            RedisClient client = RedisClient.create(uri);
            try (StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8)) {
                ScriptRegistry registry = new ScriptRegistry(connection.async(), Recorder.NONE, timeout);
                lua.redis.scriptFlush();
                lua.redis.configResetstat();
                proxy.holdReplies();
                CompletableFuture<List<Object>> reply = registry.<List<Object>>run(Script.LOCK_ACQUIRE,
                        new String[] {lock, tokenKey}, "owner-a", Long.toString(LONG_LEASE_MS)).toCompletableFuture();
                // Read after run() returned, so after the registry started the call's window: waiting
                // from a moment before it could let the NOSCRIPT answer through inside the window.
                long sent = System.nanoTime();
                Await.until("the EVALSHA reached the server", () -> scriptCalls("evalsha") == 1);
                while (System.nanoTime() - sent <= timeout.toNanos()) {
                    LockSupport.parkNanos(timeout.toNanos());
                }
                proxy.pass();

                ExecutionException e = assertThrows(ExecutionException.class, () -> reply.get(30, TimeUnit.SECONDS));
                assertInstanceOf(RedisCommandTimeoutException.class, e.getCause(), e.toString());
                assertEquals(0, scriptCalls("eval"), "not sent again with its text");
                assertNull(lua.redis.hget(lock, "owner-a"), "the call did not run");
            } finally {
                client.shutdown();
            }
        }
    }

    /** How many calls of {@code command} ({@code eval}, {@code evalsha}) the server ran since its stats were reset. */
    private static long scriptCalls(String command) {
        for (String line : lua.redis.info("commandstats").split("\\r?\\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                Matcher m = Pattern.compile("\\bcalls=(\\d+)").matcher(line);
                return m.find() ? Long.parseLong(m.group(1)) : 0;
            }
        }
        return 0;
    }

    /* --------------- arity --------------- */

    @Test
    void run_wrongArity_throwsBeforeAnythingReachesRedis() {
        // A connection of its own, so that its last command as the server records it shows
        // whether any of the calls below was sent.
        RedisClient client = RedisClient.create(redis.server().uri());
        try (StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8)) {
            long id = connection.sync().clientId();
            connection.sync().ping();
            ScriptRegistry registry = new ScriptRegistry(connection.async());
            String[] two = {lock, tokenKey};
            String[] four = {lock, tokenKey, lock + ":queue", lock + ":places"};

            assertArity(() -> registry.run(Script.LOCK_ACQUIRE, new String[] {lock}, "owner-a", "1000"));
            assertArity(() -> registry.run(Script.LOCK_ACQUIRE, new String[] {lock, tokenKey, lock}, "owner-a", "1000"));
            assertArity(() -> registry.run(Script.LOCK_ACQUIRE, two, "owner-a"));
            assertArity(() -> registry.run(Script.LOCK_ACQUIRE_WAITING, two, "owner-a", "1000", "1"));
            assertArity(() -> registry.run(Script.LOCK_ACQUIRE_WAITING, two, "owner-a", "1000", "1", "5000", "extra"));
            assertArity(() -> registry.run(Script.LOCK_RELEASE, four, "owner-a"));
            assertArity(() -> registry.run(Script.LOCK_RELEASE, four, "owner-a", "1001"));
            assertArity(() -> registry.run(Script.FAIR_LOCK_RELEASE, two, "owner-a", "1001"));
            // Four keys and five arguments: owner, token, next owner, lease, waiters left.
            assertArity(() -> registry.run(Script.LOCK_HANDOVER, new String[] {lock}, "owner-a", "1001", "owner-b", "1000", "0"));
            assertArity(() -> registry.run(Script.LOCK_HANDOVER, new String[] {lock, tokenKey, lock + ":queue"},
                    "owner-a", "1001", "owner-b", "1000", "0"));
            assertArity(() -> registry.run(Script.LOCK_HANDOVER, two, "owner-a", "1001", "owner-b", "1000"));
            assertArity(() -> registry.run(Script.LOCK_HANDOVER, two, "owner-a", "1001", "owner-b", "1000", "0", "extra"));
            assertArity(() -> registry.run(Script.LOCK_GIVE_BACK, two, "owner-a", "1001"));
            assertArity(() -> registry.run(Script.LOCK_GIVE_BACK, four, "owner-a"));
            assertArity(() -> registry.run(Script.LOCK_FORCE_UNLOCK, four, "unexpected"));
            assertArity(() -> registry.run(Script.LOCK_FORCE_UNLOCK, two));
            assertArity(() -> registry.run(Script.LOCK_RENEW, new String[0], "1000"));
            assertArity(() -> registry.run(Script.LOCK_RENEW, two, "1000", "owner-a"));
            assertArity(() -> registry.run(Script.LOCK_RENEW, new String[] {lock}, "1000"));
            assertArity(() -> registry.run(Script.LOCK_RENEW, new String[] {lock}, "1000", "owner-a"));
            assertArity(() -> registry.run(Script.FAIR_LOCK_ACQUIRE, four, "owner-a", "1000"));
            assertArity(() -> registry.run(Script.FAIR_LOCK_ACQUIRE, two, "owner-a", "1000", "1000"));
            assertArity(() -> registry.run(Script.FAIR_LOCK_LEAVE, four));
            assertArity(() -> registry.run(Script.FAIR_LOCK_LEAVE, two, "owner-a"));
            // Batched, two keys per item: an odd key count, or one argument per key instead of per item.
            assertArity(() -> registry.run(Script.FAIR_LOCK_RENEW_PLACE, new String[] {lock}, "1000", "owner-a"));
            assertArity(() -> registry.run(Script.FAIR_LOCK_RENEW_PLACE, new String[] {lock, tokenKey, lock},
                    "1000", "owner-a", "owner-b"));
            assertArity(() -> registry.run(Script.FAIR_LOCK_RENEW_PLACE, four,
                    "1000", "owner-a", "owner-b", "owner-c", "owner-d"));
            assertArity(() -> registry.run(Script.FAIR_LOCK_RENEW_PLACE, new String[0], "1000"));
            // The semaphore and latch scripts.
            String[] one = {lock};
            String[] three = {lock, tokenKey, lock + ":queue"};
            String[] five = {lock, tokenKey, lock + ":queue", lock + ":places", lock + ":wake"};
            String[] six = {lock, tokenKey, lock + ":queue", lock + ":places", lock + ":wake", lock + ":x"};
            String[] seven = {lock, tokenKey, lock + ":queue", lock + ":places", lock + ":wake", lock + ":x",
                lock + ":y"};
            String[] eight = {lock, tokenKey, lock + ":queue", lock + ":places", lock + ":wake", lock + ":x",
                lock + ":y", lock + ":z"};
            assertArity(() -> registry.run(Script.SEMAPHORE_SET, one));
            assertArity(() -> registry.run(Script.SEMAPHORE_SET, five, "3"));
            // Seven keys and one argument: one key too few or too many, or no argument.
            assertArity(() -> registry.run(Script.SEMAPHORE_ADD, six, "1"));
            assertArity(() -> registry.run(Script.SEMAPHORE_ADD, eight, "1"));
            assertArity(() -> registry.run(Script.SEMAPHORE_ADD, seven));
            // Seven keys (the line's, with the wake-up channel) and five arguments.
            assertArity(() -> registry.run(Script.SEMAPHORE_ACQUIRE, eight, "c1:1:1", "1", "1000", "1000", "wait"));
            assertArity(() -> registry.run(Script.SEMAPHORE_ACQUIRE, six, "c1:1:1", "1", "1000", "1000", "wait"));
            assertArity(() -> registry.run(Script.SEMAPHORE_ACQUIRE, seven, "c1:1:1", "1", "1000", "1000"));
            assertArity(() -> registry.run(Script.SEMAPHORE_TRY, three, "c1", "1"));
            assertArity(() -> registry.run(Script.SEMAPHORE_TRY, four, "c1", "1", "1000"));
            // Seven keys (the total first) and three arguments (the claimed grants, possibly "").
            assertArity(() -> registry.run(Script.SEMAPHORE_RELEASE, six, "c1:1:1=0"));
            assertArity(() -> registry.run(Script.SEMAPHORE_RELEASE, eight, "c1:1:1=0"));
            assertArity(() -> registry.run(Script.SEMAPHORE_RELEASE, seven, "c1:1:1=0", "c1:1:2=0"));
            assertArity(() -> registry.run(Script.SEMAPHORE_LEAVE, seven, "c1:1:1"));
            assertArity(() -> registry.run(Script.SEMAPHORE_LEAVE, four, "c1:1:1", "1000"));
            // Batched, three keys per item: a key count not a multiple of three.
            assertArity(() -> registry.run(Script.SEMAPHORE_RENEW_PLACE, four, "1000", "c1:1:1"));
            assertArity(() -> registry.run(Script.SEMAPHORE_RENEW_PLACE, three, "1000", "c1:1:1", "c1:1:2"));
            assertArity(() -> registry.run(Script.SEMAPHORE_AVAILABLE, three, "extra"));
            assertArity(() -> registry.run(Script.SEMAPHORE_AVAILABLE, two));
            assertArity(() -> registry.run(Script.LATCH_SET, one));
            assertArity(() -> registry.run(Script.LATCH_SET, two, "3"));
            assertArity(() -> registry.run(Script.LATCH_COUNT_DOWN, three));
            assertArity(() -> registry.run(Script.LATCH_COUNT_DOWN, two, "1"));
            assertArity(() -> registry.run(Script.LATCH_DELETE, four, "1"));
            assertArity(() -> registry.run(Script.LATCH_DELETE, three, "1", "extra"));
            // Batched, two keys per item, like fair-lock-renew-place.lua.
            assertArity(() -> registry.run(Script.SEMAPHORE_RENEW, three, "1000", "c1", "c1"));
            assertArity(() -> registry.run(Script.SEMAPHORE_RENEW, four, "1000", "c1"));
            assertArity(() -> registry.run(Script.SEMAPHORE_RENEW, two, "1000", "c1", "c2"));
            assertArity(() -> registry.run(Script.SEMAPHORE_RENEW, new String[0], "1000"));
            // The read-write lock scripts.
            assertArity(() -> registry.run(Script.RW_READ_ACQUIRE, six, "owner-a", "1000"));
            assertArity(() -> registry.run(Script.RW_READ_ACQUIRE, seven, "owner-a"));
            assertArity(() -> registry.run(Script.RW_READ_ACQUIRE, seven, "owner-a", "1000", "1000"));
            assertArity(() -> registry.run(Script.RW_READ_TRY, seven, "owner-a", "1000"));
            assertArity(() -> registry.run(Script.RW_READ_TRY, four, "owner-a"));
            assertArity(() -> registry.run(Script.RW_READ_RELEASE, five, "owner-a", "1001"));
            assertArity(() -> registry.run(Script.RW_READ_RELEASE, six, "owner-a"));
            assertArity(() -> registry.run(Script.RW_WRITE_ACQUIRE, six, "owner-a", "1000"));
            assertArity(() -> registry.run(Script.RW_WRITE_ACQUIRE, seven, "owner-a", "1000", "1000"));
            assertArity(() -> registry.run(Script.RW_WRITE_TRY, four, "owner-a", "1000"));
            assertArity(() -> registry.run(Script.RW_WRITE_TRY, three, "owner-a", "1000", "1000"));
            assertArity(() -> registry.run(Script.RW_WRITE_RELEASE, five, "owner-a"));
            assertArity(() -> registry.run(Script.RW_WRITE_RELEASE, four, "owner-a", "1001"));
            assertArity(() -> registry.run(Script.RW_WRITE_LEAVE, five));
            assertArity(() -> registry.run(Script.RW_WRITE_LEAVE, six, "owner-a"));
            assertArity(() -> registry.run(Script.RW_FORCE_UNLOCK, seven, "unexpected"));
            assertArity(() -> registry.run(Script.RW_FORCE_UNLOCK, six));
            // Batched, two keys and two arguments (owner, token) per item.
            assertArity(() -> registry.run(Script.RW_READ_RENEW, two, "1000", "owner-a"));
            assertArity(() -> registry.run(Script.RW_READ_RENEW, three, "1000", "owner-a", "1001"));
            assertArity(() -> registry.run(Script.RW_READ_RENEW, four, "1000", "owner-a", "1001"));
            assertArity(() -> registry.run(Script.RW_READ_RENEW, two, "owner-a", "1001"));
            assertArity(() -> registry.run(Script.RW_READ_RENEW, new String[0], "1000"));

            assertEquals("ping", lastCommand(id), "a rejected call must send nothing");
            assertEquals(0L, lua.redis.exists(seven));
        } finally {
            client.shutdown();
        }
    }

    @Test
    void run_batchedTwoKeysPerItem_acceptsAnyNumberOfItems() throws Exception {
        String queue = lock + ":queue";
        String places = lock + ":places";
        String[] one = {queue, places};
        String[] three = {queue, places, queue, places, queue, places};

        assertEquals(List.of(0L), lua.run(Script.FAIR_LOCK_RENEW_PLACE, one, "1000", "owner-a"));
        assertEquals(List.of(0L, 0L, 0L),
                lua.run(Script.FAIR_LOCK_RENEW_PLACE, three, "1000", "owner-a", "owner-b", "owner-c"));
        assertEquals(List.of(0L), lua.run(Script.SEMAPHORE_RENEW, one, "1000", "owner-a"));
        assertEquals(List.of(0L, 0L, 0L),
                lua.run(Script.SEMAPHORE_RENEW, three, "1000", "owner-a", "owner-b", "owner-c"));
        assertEquals(List.of(0L), lua.run(Script.RW_READ_RENEW, one, "1000", "owner-a", "1001"));
        assertEquals(List.of(0L, 0L, 0L), lua.run(Script.RW_READ_RENEW, three,
                "1000", "owner-a", "1001", "owner-b", "1002", "owner-c", "1003"));
    }

    private static void assertArity(Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(".lua"), () -> "the message should name the script: " + e.getMessage());
    }

    /** The {@code cmd=} of a client in {@code CLIENT LIST}: the last command it ran. */
    private static String lastCommand(long id) {
        String list = lua.redis.clientList();
        Matcher m = Pattern.compile("(?m)^id=" + id + " .*?\\bcmd=(\\S+)").matcher(list);
        assertTrue(m.find(), () -> "client " + id + " not in CLIENT LIST:\n" + list);
        return m.group(1);
    }
}
