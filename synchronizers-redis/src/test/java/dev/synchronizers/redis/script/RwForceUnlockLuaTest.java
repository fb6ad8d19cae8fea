package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.synchronizers.redis.script.LuaHarness.Subscription;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.ScoredValue;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code rw-force-unlock.lua} against a real server, on holds and queues written by hand: it
 * deletes the write hold, the readers and their tokens, then wakes the first waiting writer by
 * name or, with none and a reader waiting, every reader; with nothing held it does nothing.
 */
@Tag("redis")
class RwForceUnlockLuaTest {

    private static final long LEASE_MS = 60_000;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static LuaHarness lua;

    private RwFixture rw;

    @BeforeAll
    static void connect() {
        lua = LuaHarness.connect(redis.server().uri());
    }

    @AfterAll
    static void disconnect() {
        if (lua != null) {
            lua.close();
        }
    }

    @BeforeEach
    void names(TestInfo test) {
        rw = new RwFixture(lua, test);
    }

    private long forceUnlock() throws Exception {
        return lua.<Long>run(Script.RW_FORCE_UNLOCK,
                new String[] {rw.write, rw.readers, rw.rtokens, rw.queue, rw.places, rw.rwait, rw.wakeups});
    }

    /* --------------- what is released --------------- */

    @Test
    void forceUnlock_writeHold_deletesItAndPublishesNothing() throws Exception {
        rw.writeHold("writer-0", 1001, LEASE_MS);
        lua.redis.set(rw.token, "1001");
        try (Subscription subscription = lua.subscribe(rw.wakeups)) {

            assertEquals(1L, forceUnlock());

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(rw.write));
        assertEquals("1001", lua.redis.get(rw.token), "the token key is kept: tokens only grow");
    }

    @Test
    void forceUnlock_readers_deletesEveryReadHold() throws Exception {
        long end = rw.farEnd();
        rw.readHold("reader-1", 1001, end);
        rw.readHold("reader-2", 1002, end);

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(rw.readers, rw.rtokens));
    }

    @Test
    void forceUnlock_writerWithItsOwnReadHold_deletesBoth() throws Exception {
        rw.writeHold("owner-a", 1001, LEASE_MS);
        rw.readHold("owner-a", 1002, rw.farEnd());

        assertEquals(1L, forceUnlock());

        assertEquals(0L, lua.redis.exists(rw.write, rw.readers, rw.rtokens));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void forceUnlock_writersQueued_wakesTheFirstByNameAndKeepsTheQueueAndRwait() throws Exception {
        long end = rw.farEnd();
        rw.writeHold("writer-0", 1001, LEASE_MS);
        rw.queued("writer-1", 1, end);
        rw.queued("writer-2", 2, end);
        rw.readerWaits();
        try (Subscription subscription = lua.subscribe(rw.wakeups)) {

            assertEquals(1L, forceUnlock());

            assertEquals("writer-1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("writer-1", "writer-2"), rw.queueOrder());
        assertEquals(List.of(ScoredValue.just(end, "writer-1"), ScoredValue.just(end, "writer-2")),
                lua.redis.zrangeWithScores(rw.places, 0, -1));
        assertEquals("1", lua.redis.get(rw.rwait), "the readers still wait behind writer-1");
    }

    @Test
    void forceUnlock_firstWriterDead_skipsItAndWakesTheFirstLiveOne() throws Exception {
        long end = rw.farEnd();
        rw.writeHold("writer-0", 1001, LEASE_MS);
        rw.queued("dead", 1, 0);
        rw.queued("live", 2, end);
        try (Subscription subscription = lua.subscribe(rw.wakeups)) {

            assertEquals(1L, forceUnlock());

            assertEquals("live", subscription.next(), "the dead writer is skipped, not woken");
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("live"), rw.queueOrder(), "and purged");
    }

    @Test
    void forceUnlock_readersHeldWriterQueued_wakesTheWriter() throws Exception {
        long end = rw.farEnd();
        rw.readHold("reader-1", 1001, end);
        rw.queued("writer-1", 1, end);
        try (Subscription subscription = lua.subscribe(rw.wakeups)) {

            assertEquals(1L, forceUnlock());

            assertEquals("writer-1", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
    }

    @Test
    void forceUnlock_readerWaitsNoWriter_deletesRwaitAndWakesEveryReader() throws Exception {
        rw.writeHold("writer-0", 1001, LEASE_MS);
        rw.readerWaits();
        try (Subscription subscription = lua.subscribe(rw.wakeups)) {

            assertEquals(1L, forceUnlock());

            assertEquals("released", subscription.next());
            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    /* --------------- nothing held --------------- */

    @Test
    void forceUnlock_nothingHeld_returnsZeroAndPublishesNothing() throws Exception {
        try (Subscription subscription = lua.subscribe(rw.wakeups)) {

            assertEquals(0L, forceUnlock());

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(0L, lua.redis.exists(rw.all()));
    }

    @Test
    void forceUnlock_nothingHeldButWaiters_returnsZeroAndLeavesThemAlone() throws Exception {
        long end = rw.farEnd();
        rw.queued("writer-1", 1, end);
        rw.readerWaits();
        try (Subscription subscription = lua.subscribe(rw.wakeups)) {

            assertEquals(0L, forceUnlock());

            subscription.assertNothingMore(lua.redis);
        }
        assertEquals(List.of("writer-1"), rw.queueOrder());
        assertEquals("1", lua.redis.get(rw.rwait));
    }
}
