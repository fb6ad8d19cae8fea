package dev.synchronizers.redis.script;

import static dev.synchronizers.redis.script.LuaHarness.LONG_LEASE_MS;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

/**
 * The keys of one read-write lock, named as {@code LockKeys.readWrite} names them (under a base
 * unique to the test), and hand-made state for the {@code Rw*LuaTest} classes: write holds, read
 * holds and queued writers written with plain commands, so that only the script under test runs.
 *
 * <p>A writer woken by name hears its name on its client's channel ({@link #channelOf}: the
 * wake-up channel, {@code ':'}, the writer up to its first {@code ':'}); every waiting reader
 * hears {@code 'released'} on the shared wake-up channel.
 */
final class RwFixture extends QueueFixture {

    final String write;
    final String token;
    final String readers;
    final String rtokens;
    final String rwait;

    /** The keys under {@code base}, which is also the write hold's key (the {@code lock} of {@link AcquireLuaContract}). */
    RwFixture(LuaHarness lua, String base) {
        super(lua, base);
        write = base;
        token = write + ":token";
        readers = write + ":readers";
        rtokens = write + ":rtokens";
        rwait = write + ":rwait";
    }

    /** Every key, for EXISTS. */
    String[] all() {
        return new String[] {write, token, readers, rtokens, queue, places, rwait};
    }

    /** A write hold of {@code owner} with {@code token}, living {@code ttlMs}. */
    void writeHold(String owner, long tokenValue, long ttlMs) {
        lua.redis.hset(write, owner, Long.toString(tokenValue));
        lua.redis.pexpire(write, ttlMs);
    }

    /** A read hold of {@code owner} whose lease ends at {@code leaseEndMs} (server time); the keys live long. */
    void readHold(String owner, long tokenValue, long leaseEndMs) {
        readHold(owner, tokenValue, leaseEndMs, LONG_LEASE_MS);
    }

    /** A read hold of {@code owner} whose lease ends at {@code leaseEndMs} (server time); keys live {@code ttlMs}. */
    void readHold(String owner, long tokenValue, long leaseEndMs, long ttlMs) {
        lua.redis.zadd(readers, leaseEndMs, owner);
        lua.redis.hset(rtokens, owner, Long.toString(tokenValue));
        lua.redis.pexpire(readers, ttlMs);
        lua.redis.pexpire(rtokens, ttlMs);
    }

    /** Queues a writer at {@code order} whose place ends at {@code placeEndMs} (server time); the keys live long. */
    @Override
    void queued(String owner, long order, long placeEndMs) {
        super.queued(owner, order, placeEndMs);
        lua.redis.pexpire(queue, LONG_LEASE_MS);
        lua.redis.pexpire(places, LONG_LEASE_MS);
    }

    /** Marks, as a refused reader would, that a reader waits. */
    void readerWaits() {
        lua.redis.set(rwait, "1");
        lua.redis.pexpire(rwait, LONG_LEASE_MS);
    }

    /**
     * Runs {@code action} and asserts that it woke {@code writer} by name on its client's channel
     * alone: nothing on the shared channel, nothing else on that client's channel, nothing on the
     * channels of the clients of {@code others}.
     */
    void assertWakesWriter(LuaHarness.Action action, String writer, String... others) throws Exception {
        lua.assertTellsClients(wakeups, action, List.of(), List.of(writer), others);
    }

    /**
     * Runs {@code action} and asserts that it woke every reader, {@code 'released'} once on the
     * shared channel, and told the clients of {@code writers} nothing on their channels.
     */
    void assertWakesReaders(LuaHarness.Action action, String... writers) throws Exception {
        lua.assertTellsClients(wakeups, action, List.of("released"), List.of(), writers);
    }

    List<String> readerNames() {
        return lua.redis.zrange(readers, 0, -1);
    }

    /**
     * Asserts that a returned wait is what is left at the script's {@code TIME} of something that
     * ends at {@code endMs}, the script having run between server times {@code beforeMs} and
     * {@code afterMs}.
     */
    static void assertWaitUntil(long wait, long endMs, long beforeMs, long afterMs) {
        assertTrue(wait > 0 && wait >= endMs - afterMs && wait <= endMs - beforeMs,
                () -> "wait " + wait + " is not what is left until " + endMs + " (script ran within ["
                        + beforeMs + ", " + afterMs + "])");
    }
}
