package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.ScoredValue;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code semaphore-leave.lua} against a real server, on semaphore queues written by hand. */
@Tag("redis")
class SemaphoreLeaveLuaTest extends LuaTestBase {

    private SemaphoreFixture sem;
    /** A place end no test reaches, read from the server's clock. */
    private long placeEnd;

    @BeforeEach
    void names() {
        sem = new SemaphoreFixture(lua, base);
        placeEnd = lua.farEnd();
    }

    private long leave(String waiter) throws Exception {
        return lua.<Long>run(Script.SEMAPHORE_LEAVE, new String[] {sem.queue, sem.places, sem.wakeups}, waiter);
    }

    /* --------------- leaving --------------- */

    @Test
    void leave_queuedWaiter_removesItFromQueueAndPlacesAndReturnsOne() throws Exception {
        sem.queued(placeEnd, "c1:1", "c2:1", "c3:1");

        assertEquals(1L, leave("c2:1"));

        assertEquals(List.of("c1:1", "c3:1"), sem.queueOrder());
        assertEquals(List.of(ScoredValue.just(placeEnd, "c1:1"), ScoredValue.just(placeEnd, "c3:1")),
                sem.placeEnds());
    }

    @Test
    void leave_onlyWaiter_theQueueVanishes() throws Exception {
        sem.queued(placeEnd, "c1:1");

        assertEquals(1L, leave("c1:1"));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places));
    }

    @Test
    void leave_waiterNotQueued_returnsZeroAndChangesNothing() throws Exception {
        sem.queued(placeEnd, "c1:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(0L, leave("c9:1")));

        assertEquals(List.of("c1:1"), sem.queueOrder());
        assertEquals(List.of(ScoredValue.just(placeEnd, "c1:1")), sem.placeEnds());
    }

    @Test
    void leave_emptyQueue_returnsZeroAndCreatesNothing() throws Exception {
        assertEquals(0L, leave("c1:1"));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places));
    }

    /* --------------- wake-ups --------------- */

    @Test
    void leave_firstWaiter_wakesTheNextFirstByName() throws Exception {
        sem.queued(placeEnd, "c1:1", "c2:1", "c3:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c1:1")), "c2:1");

        assertEquals(List.of("c2:1", "c3:1"), sem.queueOrder());
    }

    @Test
    void leave_firstWaiterWithAnExpiredNext_purgesItAndWakesTheFirstLiveWaiter() throws Exception {
        sem.queued(placeEnd, "c1:1", "dead:1", "c3:1");
        lua.redis.zadd(sem.places, 0, "dead:1");   // stopped renewing long ago

        // Had the dead waiter been published, its message would come first.
        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c1:1")), "c3:1");

        assertEquals(List.of("c3:1"), sem.queueOrder());
        assertEquals(List.of("c3:1"), lua.redis.zrange(sem.places, 0, -1));
    }

    @Test
    void leave_notFirst_publishesNothing() throws Exception {
        sem.queued(placeEnd, "c1:1", "c2:1", "c3:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c2:1")));

        assertEquals(List.of("c1:1", "c3:1"), sem.queueOrder());
    }

    @Test
    void leave_lastWaiter_publishesNothing() throws Exception {
        sem.queued(placeEnd, "c1:1");

        lua.assertPublishes(sem.wakeups, () -> assertEquals(1L, leave("c1:1")));

        assertEquals(0L, lua.redis.exists(sem.queue, sem.places));
    }
}
