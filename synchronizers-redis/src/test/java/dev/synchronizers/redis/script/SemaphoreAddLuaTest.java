package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-add.lua} against a real server: the total grows and shrinks but never below
 * zero, and only growth wakes waiters, by name: as many from the front of the queue as permits are
 * free (the new total less {@code :sum}), at most 64, in queue order.
 */
@Tag("redis")
class SemaphoreAddLuaTest extends LuaTestBase {

    private SemaphoreFixture sem;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
    }

    /** Queues the waiters in the given order. */
    private void queued(String... waiters) {
        for (int i = 0; i < waiters.length; i++) {
            lua.redis.zadd(sem.queue, i + 1, waiters[i]);
        }
    }

    /** Books permits for a client, as an acquire would (no lease: add.lua reads only {@code :sum}). */
    private void hold(String client, long permits) {
        lua.redis.hincrby(sem.holds, client, permits);
        lua.redis.hincrby(sem.holds, ":sum", permits);
    }

    private List<Object> add(long delta) throws Exception {
        return lua.run(Script.SEMAPHORE_ADD, new String[] {sem.total, sem.holds, sem.queue, sem.wakeups},
                Long.toString(delta));
    }

    /* --------------- the total --------------- */

    @Test
    void add_positive_growsTheTotalWhichKeepsNoTtl() throws Exception {
        lua.redis.set(sem.total, "3");

        assertEquals(List.of(1L, 5L), add(2));

        assertEquals("5", lua.redis.get(sem.total));
        assertEquals(-1L, lua.redis.pttl(sem.total), "the total persists until deleted");
    }

    @Test
    void add_negative_shrinksTheTotal() throws Exception {
        lua.redis.set(sem.total, "5");

        assertEquals(List.of(1L, 3L), add(-2));

        assertEquals("3", lua.redis.get(sem.total));
        assertEquals(-1L, lua.redis.pttl(sem.total));
    }

    @Test
    void add_shrinkToExactlyZero_isAllowed() throws Exception {
        lua.redis.set(sem.total, "2");

        assertEquals(List.of(1L, 0L), add(-2));

        assertEquals("0", lua.redis.get(sem.total));
    }

    @Test
    void add_shrinkBelowZero_returnsZeroAndTheTotalAndChangesNothing() throws Exception {
        lua.redis.set(sem.total, "2");
        queued("c1:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(0L, 2L), add(-3)));

        assertEquals("2", lua.redis.get(sem.total));
        assertEquals(List.of("c1:1"), sem.queueOrder());
    }

    @Test
    void add_absentTotal_growsFromZero() throws Exception {
        assertEquals(List.of(1L, 4L), add(4));

        assertEquals("4", lua.redis.get(sem.total));
    }

    @Test
    void add_shrinkAbsentTotal_isRefusedAndCreatesNothing() throws Exception {
        assertEquals(List.of(0L, 0L), add(-1));

        assertEquals(0L, lua.redis.exists(sem.total, sem.holds, sem.queue));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void add_twoWithFourWaitersAndTwoFree_wakesTheFirstTwoInOrder() throws Exception {
        lua.redis.set(sem.total, "3");
        hold("holder", 3);
        queued("c1:1", "c2:7", "c3:4", "c4:2");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 5L), add(2)), "c1:1", "c2:7");

        assertEquals(List.of("c1:1", "c2:7", "c3:4", "c4:2"), sem.queueOrder(),
                "the queue is not touched");
        assertEquals("3", lua.redis.hget(sem.holds, ":sum"), "the holdings are not touched");
    }

    @Test
    void add_growthWithNoHolder_wakesAsManyAsTheNewTotal() throws Exception {
        lua.redis.set(sem.total, "1");
        queued("c1:1", "c2:7", "c3:4", "c4:2");

        // An absent holds hash counts as nothing held.
        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 3L), add(2)), "c1:1", "c2:7", "c3:4");

        assertEquals(0L, lua.redis.exists(sem.holds), "no holds hash is created");
    }

    @Test
    void add_growthThatLeavesExactlyNothingFree_publishesNothing() throws Exception {
        // 4 held of a total shrunk to 2: growing by 2 makes 4 of 4.
        lua.redis.set(sem.total, "2");
        hold("holder", 4);
        queued("c1:1", "c2:1", "c3:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 4L), add(2)));
    }

    @Test
    void add_growthThatLeavesMoreHeldThanTheTotal_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "1");
        hold("holder", 5);
        queued("c1:1", "c2:1", "c3:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 2L), add(1)));
    }

    @Test
    void add_seventyWaitersAndAHundredFree_wakesTheFirstSixtyFourInOrder() throws Exception {
        String[] names = SemaphoreFixture.waiters(70);
        queued(names);

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 100L), add(100)), Arrays.copyOf(names, 64));
    }

    @Test
    void add_growthWithEmptyQueue_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 2L), add(1)));

        assertEquals(0L, lua.redis.exists(sem.queue), "no queue is created");
    }

    @Test
    void add_shrinkWithQueuedWaiters_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "4");
        queued("c1:1", "c2:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 3L), add(-1)));

        assertEquals(List.of("c1:1", "c2:1"), sem.queueOrder());
    }

    @Test
    void add_zeroWithQueuedWaiters_publishesNothing() throws Exception {
        lua.redis.set(sem.total, "4");
        queued("c1:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(List.of(1L, 4L), add(0)));

        assertEquals("4", lua.redis.get(sem.total));
    }
}
