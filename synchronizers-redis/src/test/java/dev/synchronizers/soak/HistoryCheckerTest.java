package dev.synchronizers.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.soak.History.Event;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The soak's judge on hand-made histories: what counts as covered, inconclusive and violated. */
class HistoryCheckerTest {

    /** Builds one JVM's history, numbering its events. */
    private static final class Events {
        private final String jvm;
        private final List<Event> events = new ArrayList<>();

        Events(String jvm) {
            this.jvm = jvm;
        }

        Events add(String type, Object... fields) {
            List<String> text = new ArrayList<>();
            for (Object field : fields) {
                text.add(String.valueOf(field));
            }
            events.add(new Event(jvm, events.size() + 1, 0, type, List.copyOf(text)));
            return this;
        }

        /** A whole lock operation: acquired with {@code token}, released with {@code outcome}. */
        Events hold(String hold, String kind, String name, long token, String outcome) {
            return add("OP", hold, "t", kind, name, 100, 5000, 1).add("ACQ", hold, token, 1)
                    .add("REL", hold, outcome).add("END", hold, 300, 5000);
        }
    }

    private static HistoryChecker.Verdict check(Set<String> killed, List<String> overlaps, List<String> refusals,
            Events... histories) {
        Map<String, List<Event>> all = new TreeMap<>();
        for (Events history : histories) {
            all.put(history.jvm, history.events);
        }
        return HistoryChecker.check(all, killed, overlaps, refusals);
    }

    private static String overlap(int limit, String... members) {
        return "1000 soak:inside:{lock:L0} " + limit + " " + members.length + " " + members[members.length - 1] + " "
                + String.join(",", members);
    }

    @Test
    void overlap_twoLiveHolds_isViolation() {
        Events a = new Events("w1").hold("w1.t0.1", "lock", "L0", 10, "ok");
        Events b = new Events("w2").hold("w2.t0.1", "lock", "L0", 11, "ok");
        HistoryChecker.Verdict verdict = check(Set.of(), List.of(overlap(1, "w1.t0.1=1", "w2.t0.1=1")), List.of(), a, b);
        assertEquals(1, verdict.violations().size(), verdict.violations().toString());
        assertEquals(2, verdict.operations());
    }

    @Test
    void cachedTakes_countedByWhereTheyCameFrom_andCoveredByTheirLocalToken() {
        Events a = new Events("w1")
                .add("OP", "w1.t0.1", "t", "lock", "L0", 100, 5000, 1).add("ACQ", "w1.t0.1", 100, 1, "cached")
                .add("REL", "w1.t0.1", "ok").add("END", "w1.t0.1", 30, 5000)
                .add("OP", "w1.t1.1", "t", "lock", "L0", 100, 5000, 2).add("ACQ", "w1.t1.1", 101, 1, "retake")
                .add("LOST", "L0", "lock", 2, 101, "GONE")
                .add("REL", "w1.t1.1", "ok").add("END", "w1.t1.1", 30, 5000);
        Events b = new Events("w2").hold("w2.t0.1", "lock", "L0", 200, "ok");
        HistoryChecker.Verdict verdict = check(Set.of(), List.of(overlap(1, "w1.t1.1=1", "w2.t0.1=1")), List.of(), a, b);
        assertTrue(verdict.violations().isEmpty(), verdict.violations().toString());
        assertEquals(3, verdict.acquisitions());
        assertEquals(2, verdict.cachedTakes());
        assertEquals(1, verdict.localRetakes());
    }

    @Test
    void overlap_oneHoldReportedLostByItsToken_isCovered() {
        Events a = new Events("w1").hold("w1.t0.1", "lock", "L0", 10, "unavailable")
                .add("LOST", "L0", "lock", 7, 10, "UNRENEWABLE");
        Events b = new Events("w2").hold("w2.t0.1", "lock", "L0", 11, "ok");
        HistoryChecker.Verdict verdict = check(Set.of(), List.of(overlap(1, "w1.t0.1=1", "w2.t0.1=1")), List.of(), a, b);
        assertTrue(verdict.violations().isEmpty(), verdict.violations().toString());
        assertEquals(1, verdict.coveredOverlaps());
    }

    @Test
    void overlap_lostSignalOfAnotherTokenOrKind_doesNotCover() {
        Events a = new Events("w1").hold("w1.t0.1", "lock", "L0", 10, "ok")
                .add("LOST", "L0", "lock", 7, 9, "GONE").add("LOST", "L0", "fair lock", 7, 10, "GONE");
        Events b = new Events("w2").hold("w2.t0.1", "lock", "L0", 11, "ok");
        assertEquals(1, check(Set.of(), List.of(overlap(1, "w1.t0.1=1", "w2.t0.1=1")), List.of(), a, b)
                .violations().size());
    }

    @Test
    void overlap_lostAtUnlock_isCovered() {
        Events a = new Events("w1").hold("w1.t0.1", "lock", "L0", 10, "lost:GONE");
        Events b = new Events("w2").hold("w2.t0.1", "lock", "L0", 11, "ok");
        assertTrue(check(Set.of(), List.of(overlap(1, "w1.t0.1=1", "w2.t0.1=1")), List.of(), a, b)
                .violations().isEmpty());
    }

    @Test
    void overlap_semaphoreSignalWhileHeld_covers_butNotBeforeTheAcquire() {
        Events covered = new Events("w1")
                .add("OP", "w1.t0.1", "t", "semaphore tryAcquire(n) 1", "S0", 0, 5000, 1).add("ACQ", "w1.t0.1", -1, 1)
                .add("LOST", "S0", "semaphore", -1, -1, "UNRENEWABLE")
                .add("REL", "w1.t0.1", "ok").add("END", "w1.t0.1", 10, 5000);
        Events early = new Events("w3").add("LOST", "S0", "semaphore", -1, -1, "UNRENEWABLE")
                .add("OP", "w3.t0.1", "t", "semaphore tryAcquire(n) 1", "S0", 0, 5000, 1).add("ACQ", "w3.t0.1", -1, 1)
                .add("REL", "w3.t0.1", "ok").add("END", "w3.t0.1", 10, 5000);
        Events live = new Events("w2")
                .add("OP", "w2.t0.1", "t", "semaphore tryAcquire(n) 1", "S0", 0, 5000, 1).add("ACQ", "w2.t0.1", -1, 1)
                .add("REL", "w2.t0.1", "ok").add("END", "w2.t0.1", 10, 5000);
        assertTrue(check(Set.of(), List.of(overlap(1, "w1.t0.1=1", "w2.t0.1=1")), List.of(), covered, live, early)
                .violations().isEmpty());
        assertEquals(1, check(Set.of(), List.of(overlap(1, "w3.t0.1=1", "w2.t0.1=1")), List.of(), covered, live, early)
                .violations().size());
    }

    @Test
    void overlap_semaphoreSignalNamingAnotherThread_doesNotCover() {
        Events other = new Events("w1")
                .add("OP", "w1.t0.1", "t", "semaphore tryAcquire(n) 1", "S0", 0, 5000, 1).add("ACQ", "w1.t0.1", -1, 1)
                .add("LOST", "S0", "semaphore", 2, -1, "GONE")
                .add("REL", "w1.t0.1", "ok").add("END", "w1.t0.1", 10, 5000);
        Events live = new Events("w2")
                .add("OP", "w2.t0.1", "t", "semaphore tryAcquire(n) 1", "S0", 0, 5000, 1).add("ACQ", "w2.t0.1", -1, 1)
                .add("REL", "w2.t0.1", "ok").add("END", "w2.t0.1", 10, 5000);
        assertEquals(1, check(Set.of(), List.of(overlap(1, "w1.t0.1=1", "w2.t0.1=1")), List.of(), other, live)
                .violations().size());
    }

    @Test
    void overlap_withAHoldOfAKilledJvmStillRunning_isInconclusive() {
        Events dead = new Events("w1").add("OP", "w1.t0.1", "t", "lock", "L0", 0, 5000, 1).add("ACQ", "w1.t0.1", 10, 1);
        Events b = new Events("w2").hold("w2.t0.1", "lock", "L0", 11, "ok");
        HistoryChecker.Verdict verdict = check(Set.of("w1"), List.of(overlap(1, "w1.t0.1=1", "w2.t0.1=1")), List.of(),
                dead, b);
        assertTrue(verdict.violations().isEmpty(), verdict.violations().toString());
        assertEquals(1, verdict.inconclusive().size());
    }

    @Test
    void refusal_ofALiveHold_isViolation_ofALostHold_isFencedOut() {
        Events a = new Events("w1").hold("w1.t0.1", "lock", "L0", 10, "lost:GONE");
        Events b = new Events("w2").hold("w2.t0.1", "lock", "L0", 9, "ok");
        String lost = "1000 soak:fence:{lock:L0} w1.t0.1 10 x exit 11 11";
        String live = "1000 soak:fence:{lock:L0} w2.t0.1 9 x enter 10 10";
        HistoryChecker.Verdict verdict = check(Set.of(), List.of(), List.of(lost, live), a, b);
        assertEquals(1, verdict.fencedOut());
        assertEquals(1, verdict.violations().size(), verdict.violations().toString());
        assertTrue(verdict.violations().get(0).contains("w2.t0.1"));
    }

    @Test
    void operation_pastItsBoundOrNeverEnded_isViolation_unlessItsJvmWasKilled() {
        Events slow = new Events("w1").add("OP", "w1.t0.1", "t", "lock", "L0", 0, 5000, 1)
                .add("NOACQ", "w1.t0.1", "timeout").add("END", "w1.t0.1", 5001, 5000)
                .add("OP", "w1.t0.2", "t", "lock", "L0", 0, 5000, 1);
        Events dead = new Events("w2").add("OP", "w2.t0.1", "t", "lock", "L0", 0, 5000, 1);
        HistoryChecker.Verdict verdict = check(Set.of("w2"), List.of(), List.of(), slow, dead);
        assertEquals(2, verdict.violations().size(), verdict.violations().toString());
        assertEquals(1, verdict.hung());
    }
}
