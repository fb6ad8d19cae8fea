package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What an acquire and a release of {@code semaphore-acquire.lua} and {@code semaphore-release.lua}
 * cost Redis, counted by the server ({@code INFO commandstats}, the script calls and the commands
 * they run) on a server of this class's own: in the steady state, where the hints in the holdings
 * say that no lease or place can have run out, nobody is in line and the TTLs reach far enough,
 * a pair reads the holdings once per script, books or drops the grant, and sets no TTL but that of
 * a key it creates afresh.
 */
@Tag("redis")
class SemaphoreCommandsLuaTest extends LuaTestBase {

    private static final long LEASE_MS = 60_000;

    private SemaphoreFixture sem;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
        lua.redis.set(sem.total, "4");
    }

    private void acquire(String waiter) throws Exception {
        assertEquals(1L, lua.<List<Object>>run(Script.SEMAPHORE_ACQUIRE, sem.keys(), waiter, "1",
                Long.toString(LEASE_MS), Long.toString(LEASE_MS), "wait").get(0), waiter + " acquires");
    }

    private void release(String grant) throws Exception {
        assertEquals(List.of(1L, ""), lua.run(Script.SEMAPHORE_RELEASE, sem.keys(), grant + "=0"));
    }

    /** Two clients' pairs, so that the scripts are loaded and the hints written. */
    private void warmUp() throws Exception {
        for (String waiter : List.of("c1:1:1", "c2:1:1", "c1:1:2", "c2:1:2")) {
            acquire(waiter);
            release(waiter);
        }
    }

    /** Calls per command since the stats were reset, without the INFO that reads them and the CONFIG RESETSTAT. */
    private static Map<String, Long> commands() {
        Map<String, Long> calls = new TreeMap<>();
        Matcher m = Pattern.compile("(?m)^cmdstat_([^:]+):calls=(\\d+)").matcher(lua.redis.info("commandstats"));
        while (m.find()) {
            if (!m.group(1).equals("info") && !m.group(1).startsWith("config")) {
                calls.put(m.group(1), Long.parseLong(m.group(2)));
            }
        }
        return calls;
    }

    private static long sum(Map<String, Long> calls) {
        return calls.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * With another grant held (a busy semaphore, nobody in line): the acquire is its script, TIME,
     * the HMGET of the holdings, the ZADD of the lease and the HSET of the holdings; the release its
     * script, TIME, the HMGET, the HDEL and ZREM of the grant and the HSET of ':sum'. Eleven.
     */
    @Test
    void acquireAndRelease_whileAnotherGrantIsHeld_isElevenCommandsAndReadsNoTtl() throws Exception {
        warmUp();
        acquire("c2:1:3");
        lua.redis.configResetstat();

        acquire("c1:1:3");
        release("c1:1:3");

        Map<String, Long> calls = commands();
        assertEquals(11, sum(calls), () -> "commands of the pair: " + calls);
        assertEquals(null, calls.get("pttl"), () -> "no TTL read: " + calls);
        assertEquals(null, calls.get("zrange"), () -> "no line read: " + calls);
    }

    /**
     * Nothing held before the acquire (the release before it ended the last grant, and Redis
     * dropped the empty leases): the holdings stay, hints and all, so the acquire purges nothing and
     * reads no TTL; it sets one on the leases it creates afresh, and on nothing else. Twelve.
     */
    @Test
    void acquireAndRelease_ofAnEmptySemaphore_setsTheTtlOfTheNewLeasesOnly() throws Exception {
        warmUp();
        assertEquals(1L, lua.redis.exists(sem.holds), "the holdings stay when nothing is held");
        assertEquals(0L, lua.redis.exists(sem.leases), "no lease left");
        lua.redis.configResetstat();

        acquire("c1:1:3");
        Map<String, Long> calls = commands();
        long leasesTtl = lua.redis.pttl(sem.leases);
        lua.redis.configResetstat();
        release("c1:1:3");

        commands().forEach((command, n) -> calls.merge(command, n, Long::sum));
        assertTrue(leasesTtl >= LEASE_MS, () -> "the new leases live as long as the lease at least: " + leasesTtl);
        assertEquals(null, calls.get("pttl"), () -> "no TTL read: " + calls);
        assertEquals(1L, calls.get("pexpire"), () -> "one TTL set, the new leases': " + calls);
        assertEquals(12, sum(calls), () -> "commands of the pair: " + calls);
    }
}
