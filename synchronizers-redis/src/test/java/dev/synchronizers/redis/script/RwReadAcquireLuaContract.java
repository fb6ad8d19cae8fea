package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisCommandExecutionException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What {@code rw-read-acquire.lua} and {@code rw-read-try.lua} have in common, run against each by
 * {@link RwReadAcquireLuaTest} and {@link RwReadTryLuaTest}: the read hold they write (a lease end
 * in the readers zset, by the server's clock, and a token in the rtokens hash), readers sharing,
 * the refusal while another owner writes, the writer's own read (downgrade), and the fencing-token
 * rule of {@code lock-acquire.lua}. They differ in waiting writers (the acquire waits behind them,
 * the try barges) and in whether a refusal records a waiting reader ({@link #recordsWaitingReader}).
 *
 * <p>{@link AcquireLuaContract} does not fit these scripts: it expects the hold in the lock's hash
 * and another owner's hold to refuse, while a read hold lives in the readers zset and rtokens hash
 * and another reader shares. Its token and WRONGTYPE tests are repeated here on the read hold.
 */
abstract class RwReadAcquireLuaContract extends LuaTestBase {

    /** A read lease shorter than {@link LuaHarness#LONG_LEASE_MS}, so a reset would show. */
    static final long READ_LEASE_MS = 60_000;
    /** The lease of a write hold written by hand. */
    static final long WRITE_LEASE_MS = 60_000;

    RwFixture rw;

    /** The script under test. */
    final Script script;

    /** Whether a refused attempt sets {@code rwait}. */
    final boolean recordsWaitingReader;

    RwReadAcquireLuaContract(Script script, boolean recordsWaitingReader) {
        this.script = script;
        this.recordsWaitingReader = recordsWaitingReader;
    }

    /** The script's keys. */
    abstract String[] keys();

    @BeforeEach
    void names() {
        rw = new RwFixture(lua, base);
    }

    List<Object> read(String owner, long leaseMs) throws Exception {
        return lua.run(script, keys(), owner, Long.toString(leaseMs));
    }

    /** Reads, checks that it succeeded, and returns the token. */
    long acquired(String owner, long leaseMs) throws Exception {
        List<Object> reply = read(owner, leaseMs);
        assertEquals(1L, reply.get(0), () -> script.file + " should acquire, replied " + reply);
        return (Long) reply.get(1);
    }

    /* --------------- free lock --------------- */

    @Test
    void read_freeLock_returnsTokenAndWritesTheReadHoldInServerTime() throws Exception {
        var redis = lua.redis;

        long before = lua.serverMillis();
        List<Object> reply = read("owner-a", READ_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(2, reply.size(), () -> "reply " + reply);
        assertEquals(1L, reply.get(0), () -> "reply " + reply);
        long token = (Long) reply.get(1);
        assertTrue(token > 0, () -> "token " + token);
        assertEquals(List.of("owner-a"), rw.readerNames());
        lua.assertEndWithin(rw.readers, "owner-a", before + READ_LEASE_MS, after + READ_LEASE_MS);
        assertEquals(Map.of("owner-a", Long.toString(token)), redis.hgetall(rw.rtokens));
        lua.assertTtlSetSince(rw.readers, READ_LEASE_MS, before);
        lua.assertTtlSetSince(rw.rtokens, READ_LEASE_MS, before);
        assertEquals(Long.toString(token), redis.get(rw.token), "the token key records the token issued");
        long tokenPttl = redis.pttl(rw.token);
        assertTrue(tokenPttl > 0 && tokenPttl <= 1_000, () -> "token key PTTL " + tokenPttl);
        assertEquals(0L, redis.exists(rw.write, rw.queue, rw.places, rw.rwait), "nothing else is written");
    }

    /* --------------- readers share --------------- */

    @Test
    void read_twoOwners_bothHoldTheirOwnLeaseAndToken() throws Exception {
        var redis = lua.redis;

        long before = lua.serverMillis();
        long tokenA = acquired("owner-a", READ_LEASE_MS);
        long tokenB = acquired("owner-b", LONG_LEASE_MS);
        long after = lua.serverMillis();

        assertTrue(tokenB > tokenA, () -> "token " + tokenB + " after " + tokenA);
        assertEquals(List.of("owner-a", "owner-b"), rw.readerNames());
        lua.assertEndWithin(rw.readers, "owner-a", before + READ_LEASE_MS, after + READ_LEASE_MS);
        lua.assertEndWithin(rw.readers, "owner-b", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals(Map.of("owner-a", Long.toString(tokenA), "owner-b", Long.toString(tokenB)),
                redis.hgetall(rw.rtokens));
        // The keys outlive the longest lease.
        lua.assertTtlSetSince(rw.readers, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(rw.rtokens, LONG_LEASE_MS, before);
        assertEquals(0L, redis.exists(rw.write, rw.rwait));
    }

    @Test
    void read_shorterLeaseLater_doesNotShortenTheKeys() throws Exception {
        long before = lua.serverMillis();
        acquired("owner-a", LONG_LEASE_MS);

        acquired("owner-b", READ_LEASE_MS);

        lua.assertTtlSetSince(rw.readers, LONG_LEASE_MS, before);
        lua.assertTtlSetSince(rw.rtokens, LONG_LEASE_MS, before);
    }

    @Test
    void read_sameOwnerAgain_returnsNewLargerTokenAndMovesItsLease() throws Exception {
        long first = acquired("owner-a", READ_LEASE_MS);

        long before = lua.serverMillis();
        long second = acquired("owner-a", LONG_LEASE_MS);
        long after = lua.serverMillis();

        assertTrue(second > first, () -> "second token " + second + " should exceed " + first);
        assertEquals(Map.of("owner-a", Long.toString(second)), lua.redis.hgetall(rw.rtokens));
        assertEquals(List.of("owner-a"), rw.readerNames());
        lua.assertEndWithin(rw.readers, "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
    }

    /* --------------- another owner writes --------------- */

    @Test
    void read_anotherOwnerWrites_returnsItsPttlAndWritesNoReadHold() throws Exception {
        var redis = lua.redis;
        rw.writeHold("writer", 1001, WRITE_LEASE_MS);

        // A longer lease than the write hold's: a PTTL above WRITE_LEASE_MS would be the reader's.
        long before = lua.serverMillis();
        List<Object> reply = read("owner-a", LONG_LEASE_MS);

        assertEquals(0L, reply.get(0), () -> "reply " + reply);
        long pttl = (Long) reply.get(1);
        assertTrue(pttl > 0 && pttl <= WRITE_LEASE_MS, () -> "returned pttl " + pttl);
        assertEquals(Map.of("writer", "1001"), redis.hgetall(rw.write), "the write hold is unchanged");
        long writePttl = redis.pttl(rw.write);
        assertTrue(writePttl > 0 && writePttl <= WRITE_LEASE_MS, () -> "write PTTL " + writePttl);
        assertEquals(0L, redis.exists(rw.readers, rw.rtokens, rw.token), "no read hold, no token");
        if (recordsWaitingReader) {
            assertEquals("1", redis.get(rw.rwait), "a refused reader records that a reader waits");
            lua.assertTtlSetSince(rw.rwait, LONG_LEASE_MS, before);
        } else {
            assertEquals(0L, redis.exists(rw.rwait), "a refused try records no waiting reader");
        }
    }

    @Test
    void read_writeHeldWithoutTtl_returnsMinusOne() throws Exception {
        lua.redis.hset(rw.write, "writer", "7");

        assertEquals(List.of(0L, -1L), read("owner-a", READ_LEASE_MS));

        assertEquals(-1L, lua.redis.pttl(rw.write), "the write hold's missing TTL is left as it is");
        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens, rw.token));
    }

    @Test
    void read_anotherWriterAndOtherReaders_existingReadersAreKept() throws Exception {
        // A reader left from before the writer took over (its lease not yet over).
        long end = lua.farEnd();
        rw.readHold("reader-old", 1000, end);
        rw.writeHold("writer", 1001, WRITE_LEASE_MS);

        assertEquals(0L, read("owner-a", READ_LEASE_MS).get(0));

        assertEquals(List.of("reader-old"), rw.readerNames());
        assertEquals(Map.of("reader-old", "1000"), lua.redis.hgetall(rw.rtokens));
    }

    /* --------------- downgrade --------------- */

    @Test
    void read_theWriterItself_readsAndKeepsItsWriteHold() throws Exception {
        var redis = lua.redis;
        rw.writeHold("owner-a", 1001, WRITE_LEASE_MS);

        long before = lua.serverMillis();
        List<Object> reply = read("owner-a", LONG_LEASE_MS);
        long after = lua.serverMillis();

        assertEquals(1L, reply.get(0), () -> "the writer may read (downgrade), replied " + reply);
        long token = (Long) reply.get(1);
        assertEquals(Map.of("owner-a", Long.toString(token)), redis.hgetall(rw.rtokens));
        lua.assertEndWithin(rw.readers, "owner-a", before + LONG_LEASE_MS, after + LONG_LEASE_MS);
        assertEquals(Map.of("owner-a", "1001"), redis.hgetall(rw.write), "the write hold is unchanged");
        long writePttl = redis.pttl(rw.write);
        assertTrue(writePttl > 0 && writePttl <= WRITE_LEASE_MS, () -> "write PTTL " + writePttl + " was reset");
        assertEquals(0L, redis.exists(rw.rwait));
    }

    /* --------------- fencing tokens --------------- */

    @Test
    void read_manyOwners_tokensStrictlyIncrease() throws Exception {
        long last = 0;
        for (int i = 0; i < 200; i++) {
            long token = acquired("owner-" + i, READ_LEASE_MS);
            long previous = last;
            int cycle = i;
            assertTrue(token > previous, () -> "cycle " + cycle + ": token " + token + " after " + previous);
            last = token;
        }
        assertEquals(200L, lua.redis.zcard(rw.readers), "200 readers share the lock");
    }

    @Test
    void read_tokenKeyAheadOfClock_issuesTheNextToken() throws Exception {
        var redis = lua.redis;
        long ahead = lua.serverMicros() + 1_000_000_000L;
        redis.set(rw.token, Long.toString(ahead));

        long token = acquired("owner-a", READ_LEASE_MS);

        assertEquals(ahead + 1, token);
        assertEquals(Long.toString(ahead + 1), redis.hget(rw.rtokens, "owner-a"));
        assertEquals(Long.toString(ahead + 1), redis.get(rw.token));
        long tokenPttl = redis.pttl(rw.token);
        assertTrue(tokenPttl > 1_000 && tokenPttl <= 1_001_000, () -> "token key PTTL " + tokenPttl);
        assertEquals(ahead + 2, acquired("owner-b", READ_LEASE_MS));
    }

    /* --------------- wrong type --------------- */

    @Test
    void read_writeKeyIsString_failsWithWrongTypeAndWritesNothing() {
        var redis = lua.redis;
        redis.set(rw.write, "not a hash");

        Throwable failure = lua.failure(script, keys(), "owner-a", Long.toString(READ_LEASE_MS));

        assertTrue(failure instanceof RedisCommandExecutionException, () -> "failure " + failure);
        assertTrue(String.valueOf(failure.getMessage()).contains("WRONGTYPE"), () -> "failure " + failure);
        assertEquals("not a hash", redis.get(rw.write));
        assertEquals(-1L, redis.pttl(rw.write), "the string gets no TTL");
        assertEquals(0L, redis.exists(rw.token, rw.readers, rw.rtokens, rw.rwait), "no token, no read hold");
    }
}
