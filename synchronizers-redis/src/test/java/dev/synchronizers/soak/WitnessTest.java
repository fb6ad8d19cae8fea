package dev.synchronizers.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.fixture.Opened;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The soak's referee scripts against a real server: overlap records, the fenced store, forgetting. */
@Tag("redis")
class WitnessTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened = new Opened();
    private Witness witness;

    @BeforeEach
    void connect() {
        RedisCommands<String, String> commands = opened.commands(redis.server().uri());
        List<String> leftovers = commands.keys("soak:*");
        if (!leftovers.isEmpty()) {
            commands.del(leftovers.toArray(new String[0]));
        }
        witness = opened.add(Witness.connect(redis.server().uri(), "soak-test"));
    }

    @AfterEach
    void closeAll() throws Exception {
        opened.closeAll();
    }

    @Test
    void enter_withinTheLimit_recordsNothing_aboveIt_recordsEveryoneInside() {
        String inside = Witness.insideKey("semaphore:S");
        assertEquals(1, witness.enter(inside, "w1.t0.1", 1, 2));
        assertEquals(2, witness.enter(inside, "w2.t0.1", 1, 2));
        assertTrue(witness.records(Witness.OVERLAPS).isEmpty());
        assertEquals(4, witness.enter(inside, "w3.t0.1", 2, 2));
        List<String> records = witness.records(Witness.OVERLAPS);
        assertEquals(1, records.size());
        String[] parts = records.get(0).split(" ");
        assertEquals(List.of(inside, "2", "4", "w3.t0.1"), List.of(parts[1], parts[2], parts[3], parts[4]));
        assertEquals(3, parts[5].split(",").length, records.get(0));
        witness.exit(inside, "w3.t0.1");
        assertEquals(3, witness.enter(inside, "w4.t0.1", 1, 2));
    }

    @Test
    void fence_exclusive_acceptsOnlyAboveEveryAcceptedToken_andRecordsRefusals() {
        String fence = Witness.fenceKey("lock:L");
        assertTrue(witness.fence(fence, 1_700_000_000_000_001L, true, "enter", "w1.t0.1"));
        assertTrue(witness.fence(fence, 1_700_000_000_000_001L, true, "exit", "w1.t0.1"));
        assertTrue(witness.fence(fence, 1_700_000_000_000_002L, true, "enter", "w2.t0.1"));
        assertFalse(witness.fence(fence, 1_700_000_000_000_001L, true, "exit", "w1.t0.1"));
        assertFalse(witness.fence(fence, 1_700_000_000_000_002L, true, "enter", "w3.t0.1"));
        List<String> refusals = witness.records(Witness.REFUSALS);
        assertEquals(2, refusals.size());
        assertTrue(refusals.get(0).endsWith(" w1.t0.1 1700000000000001 x exit 1700000000000002 1700000000000002"),
                refusals.get(0));
    }

    @Test
    void fence_shared_acceptsReadersInAnyOrder_butNotBelowTheLastWrite() {
        String fence = Witness.fenceKey("rw:RW");
        assertTrue(witness.fence(fence, 10, false, "enter", "w1.t0.1"));
        assertTrue(witness.fence(fence, 12, false, "enter", "w1.t1.1"));
        assertTrue(witness.fence(fence, 10, false, "exit", "w1.t0.1"));
        assertFalse(witness.fence(fence, 11, true, "enter", "w2.t0.1"), "a write must be above every read");
        assertTrue(witness.fence(fence, 13, true, "enter", "w2.t0.2"));
        assertFalse(witness.fence(fence, 12, false, "exit", "w1.t1.1"), "a read below the last write");
    }

    @Test
    void forget_removesOnlyTheMembersOfOneJvm() {
        String first = Witness.insideKey("lock:A");
        String second = Witness.insideKey("rw:B");
        witness.enter(first, "w1.t0.1", 1, 1);
        witness.enter(second, "w1.t1.1", 1, 1000);
        witness.enter(second, "w11.t0.1", 1, 1000);
        assertEquals(2, witness.forget("w1.", List.of(first, second)));
        assertEquals(2, witness.enter(second, "w2.t0.1", 1, 1000));
    }
}
