package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code semaphore-set.lua} against a real server: the total is set once and persists, and setting
 * it above 0 wakes the waiters that asked before it was set (they wait out of line, marked
 * {@code :over}) with {@code released}.
 */
@Tag("redis")
class SemaphoreSetLuaTest extends LuaTestBase {

    private SemaphoreFixture sem;
    private String total;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
        total = sem.total;
    }

    private long set(long permits) throws Exception {
        return lua.<Long>run(Script.SEMAPHORE_SET, new String[] {sem.total, sem.holds, sem.wakeups},
                Long.toString(permits));
    }

    /** A waiter asks for {@code permits} before the total is set, and waits out of line. */
    private void askedBeforeTheTotal(String waiter, long permits) throws Exception {
        assertEquals(List.of(-1L, 0L), lua.run(Script.SEMAPHORE_ACQUIRE, sem.keys(), waiter, Long.toString(permits),
                "60000", "60000", "wait"));
    }

    @Test
    void set_absentTotal_setsItWithoutTtlAndReturnsOne() throws Exception {
        assertEquals(1L, set(5));

        assertEquals("5", lua.redis.get(total));
        assertEquals(-1L, lua.redis.pttl(total), "the total persists until deleted");
    }

    @Test
    void set_totalAlreadySet_returnsZeroAndKeepsIt() throws Exception {
        lua.redis.set(total, "3");

        assertEquals(0L, set(5));

        assertEquals("3", lua.redis.get(total));
        assertEquals(-1L, lua.redis.pttl(total));
    }

    @Test
    void set_secondCall_isRefused() throws Exception {
        assertEquals(1L, set(2));

        assertEquals(0L, set(7));

        assertEquals("2", lua.redis.get(total));
    }

    @Test
    void set_zero_isSetAndCountsAsSet() throws Exception {
        assertEquals(1L, set(0));
        assertEquals("0", lua.redis.get(total));

        assertEquals(0L, set(4), "a total of zero is set all the same");

        assertEquals("0", lua.redis.get(total));
    }

    /* --------------- waiters that came before the total --------------- */

    /**
     * Waiters of two clients (two of c1, one of c2) wait out of line for a total: setting it wakes
     * each client once, on its own channel, and nothing goes to the semaphore's shared channel.
     */
    @Test
    void set_aboveZeroWhileWaitersOfTwoClientsAskedBeforeIt_publishesReleasedOnceToEachClient() throws Exception {
        askedBeforeTheTotal("c1:1:1", 1);
        askedBeforeTheTotal("c1:2:1", 1);
        askedBeforeTheTotal("c2:1:1", 1);

        sem.assertReleasedTo(() -> assertEquals(1L, set(1)), "c1:1:1", "c2:1:1");
    }

    @Test
    void set_aboveZeroWhileAWaiterAskedBeforeIt_publishesReleasedAndEndsTheMark() throws Exception {
        askedBeforeTheTotal("c1:1:1", 1);

        sem.assertReleasedTo(() -> assertEquals(1L, set(1)), "c1:1:1");

        assertFalse(lua.redis.hexists(sem.holds, ":over"), "the woken waiter marks it again if it must");
    }

    @Test
    void set_aboveZeroWithNobodyWaiting_publishesNothing() throws Exception {
        sem.assertPublishes(() -> assertEquals(1L, set(3)));
    }

    @Test
    void set_zeroOrBelowWhileAWaiterAskedBeforeIt_publishesNothingAndKeepsTheMark() throws Exception {
        askedBeforeTheTotal("c1:1:1", 1);

        sem.assertPublishes(() -> assertEquals(1L, set(-2)));

        assertEquals(Boolean.TRUE, lua.redis.hexists(sem.holds, ":over"));
    }

    @Test
    void set_alreadySetWhileAWaiterAsksAboveIt_publishesNothing() throws Exception {
        lua.redis.set(total, "1");
        assertEquals(List.of(-1L, 1L), lua.run(Script.SEMAPHORE_ACQUIRE, sem.keys(), "c1:1:1", "2",
                "60000", "60000", "wait"));

        sem.assertPublishes(() -> assertEquals(0L, set(5)));

        assertEquals("1", lua.redis.get(total));
    }
}
