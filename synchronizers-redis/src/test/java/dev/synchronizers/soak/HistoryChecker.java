package dev.synchronizers.soak;

import dev.synchronizers.soak.History.Event;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides, from the workers' histories and the {@link Witness}'s records, whether the soak saw a
 * violation of the synchronizers' guarantees.
 *
 * <p>A hold is <em>covered</em> when its owner was told it lost it: the lost-hold listener named
 * it (a lock or read/write hold by name, kind and fencing token; a semaphore's permits by name
 * and acquiring thread, or by name alone where the report names no thread, for every hold whose
 * acquire came before the report and whose last release came after it), or its release threw
 * {@link dev.synchronizers.LostHoldException}. A hold whose release got no reply is not covered:
 * its owner was told nothing about the hold itself.
 *
 * <p>Violations (each text begins with its kind and a colon):
 * <ul>
 *   <li>an overlap record in which the holds that are not covered weigh more than the limit (two
 *       live lock holders; a writer with anyone; more semaphore permits than the total);</li>
 *   <li>a fenced write refused (its token not above the last one accepted) for a hold that is not
 *       covered;</li>
 *   <li>an operation that ended past its bound, or was still running past it;</li>
 *   <li>an operation in a JVM that was not killed and that never ended;</li>
 *   <li>an exception that no fault explains ({@code ERR}).</li>
 * </ul>
 * A hold of a JVM that the nemesis killed before the hold ended can never be shown covered; an
 * overlap or refusal that only such a hold could explain is counted as <em>inconclusive</em>, not
 * as a violation, and listed.
 *
 * <p>Noted, not violations: semaphore permits whose loss only their release revealed, with no
 * report to the listener.
 */
final class HistoryChecker {

    /**
     * The outcome: counts for the summary line, and every violation with its evidence. {@code
     * cachedTakes} counts acquisitions a caching worker took from its client's cache, {@code
     * localRetakes} those of them that were local re-takes (no round trip).
     */
    record Verdict(int operations, int acquisitions, int cachedTakes, int localRetakes, int listenerSignals, int lostAtRelease,
            int unreportedSemaphoreLosses, int overlaps, int coveredOverlaps, int refusals, int fencedOut, int hung,
            List<String> violations, List<String> inconclusive, List<String> notes) {
    }

    private enum Coverage { COVERED, NOT_COVERED, UNKNOWN }

    /** One acquisition, pieced together from its events. */
    private static final class Hold {
        String jvm;
        long threadId;
        String op;
        String name;
        long token = -1;
        long acquiredSeq = -1;
        long lastReleaseSeq = -1;
        boolean lostAtRelease;
        boolean ended;
    }

    private record Signal(String jvm, long seq, String name, String kind, long threadId, long token) {
    }

    private final Map<String, Hold> holds = new HashMap<>();
    private final List<Signal> signals = new ArrayList<>();
    private final Set<String> killed;
    private final List<String> violations = new ArrayList<>();
    private final List<String> inconclusive = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    private HistoryChecker(Set<String> killed) {
        this.killed = killed;
    }

    /**
     * Checks the soak.
     *
     * @param histories every worker JVM's events, by JVM id
     * @param killed the JVMs the nemesis killed
     * @param overlaps the {@link Witness#OVERLAPS} records
     * @param refusals the {@link Witness#REFUSALS} records
     */
    static Verdict check(Map<String, List<Event>> histories, Set<String> killed, List<String> overlaps,
            List<String> refusals) {
        return new HistoryChecker(killed).run(histories, overlaps, refusals);
    }

    private Verdict run(Map<String, List<Event>> histories, List<String> overlaps, List<String> refusals) {
        int operations = 0;
        int acquisitions = 0;
        int cachedTakes = 0;
        int localRetakes = 0;
        int lostAtRelease = 0;
        Set<String> hung = new HashSet<>();
        for (Map.Entry<String, List<Event>> history : histories.entrySet()) {
            String jvm = history.getKey();
            for (Event event : history.getValue()) {
                switch (event.type()) {
                    case "OP" -> {
                        operations++;
                        Hold hold = new Hold();
                        hold.jvm = jvm;
                        hold.op = event.field(2);
                        hold.name = event.field(3);
                        hold.threadId = event.longField(6);
                        holds.put(event.field(0), hold);
                    }
                    case "ACQ" -> {
                        acquisitions++;
                        Hold hold = holds.get(event.field(0));
                        hold.token = event.longField(1);
                        hold.acquiredSeq = event.seq();
                        if (event.fields().size() > 3) {
                            cachedTakes++;
                            localRetakes += event.field(3).equals("retake") ? 1 : 0;
                        }
                    }
                    case "REL" -> {
                        Hold hold = holds.get(event.field(0));
                        hold.lastReleaseSeq = event.seq();
                        if (event.field(1).startsWith("lost:")) {
                            hold.lostAtRelease = true;
                            lostAtRelease++;
                        }
                    }
                    case "LOST" -> signals.add(new Signal(jvm, event.seq(), event.field(0), event.field(1),
                            event.longField(2), event.longField(3)));
                    case "END" -> {
                        holds.get(event.field(0)).ended = true;
                        if (event.longField(1) > event.longField(2)) {
                            hung.add(event.field(0));
                            violations.add("operation past its bound: " + describe(event.field(0)) + " took "
                                    + event.field(1) + " ms, bound " + event.field(2) + " ms");
                        }
                    }
                    case "HUNG" -> {
                        if (hung.add(event.field(0))) {
                            violations.add("operation still running past its bound: " + describe(event.field(0))
                                    + " after " + event.field(1) + " ms, bound " + event.field(2) + " ms");
                        }
                    }
                    case "ERR" -> {
                        holds.get(event.field(0)).ended = true;
                        violations.add("unexpected exception: " + describe(event.field(0)) + ": " + event.field(1));
                    }
                    default -> {
                        // START, NOACQ, LATCH, DONE: counted through their operation
                    }
                }
            }
        }
        holds.forEach((id, hold) -> {
            if (!hold.ended && !killed.contains(hold.jvm) && !hung.contains(id)) {
                violations.add("operation never ended (its JVM was not killed): " + describe(id));
            }
        });
        int covered = 0;
        for (String record : overlaps) {
            if (checkOverlap(record)) {
                covered++;
            }
        }
        int fencedOut = 0;
        for (String record : refusals) {
            if (checkRefusal(record)) {
                fencedOut++;
            }
        }
        int unreported = 0;
        for (Map.Entry<String, Hold> entry : holds.entrySet()) {
            Hold hold = entry.getValue();
            if (hold.lostAtRelease && isSemaphore(hold) && !reported(hold)) {
                unreported++;
                notes.add("semaphore permits found lost only by their release, never reported to the listener: "
                        + describe(entry.getKey()));
            }
        }
        return new Verdict(operations, acquisitions, cachedTakes, localRetakes, signals.size(), lostAtRelease, unreported, overlaps.size(),
                covered, refusals.size(), fencedOut, hung.size(), List.copyOf(violations), List.copyOf(inconclusive),
                List.copyOf(notes));
    }

    /** Returns whether the overlap is explained by lost-hold signals; records it otherwise. */
    private boolean checkOverlap(String record) {
        String[] parts = record.split(" ");
        int limit = Integer.parseInt(parts[2]);
        int uncovered = 0;
        int unknown = 0;
        StringBuilder who = new StringBuilder();
        for (String member : parts[5].split(",")) {
            int equals = member.lastIndexOf('=');
            String id = member.substring(0, equals);
            int weight = Integer.parseInt(member.substring(equals + 1));
            Coverage coverage = coverage(id);
            if (coverage == Coverage.NOT_COVERED) {
                uncovered += weight;
            } else if (coverage == Coverage.UNKNOWN) {
                unknown += weight;
            }
            who.append("\n      ").append(describe(id)).append(" weight ").append(weight).append(": ").append(coverage);
        }
        if (uncovered + unknown <= limit) {
            return true;
        }
        String text = "overlap: " + parts[1] + " at witness time " + parts[0] + " (limit " + limit + ", inside "
                + parts[3] + ", entrant " + parts[4] + "):" + who;
        if (uncovered <= limit) {
            inconclusive.add(text);
        } else {
            violations.add(text);
        }
        return false;
    }

    /** Returns whether the refused write was a lost holder's; records it otherwise. */
    private boolean checkRefusal(String record) {
        String[] parts = record.split(" ");
        Coverage coverage = coverage(parts[2]);
        if (coverage == Coverage.COVERED) {
            return true;
        }
        String text = "fenced write refused: " + parts[1] + " at witness time " + parts[0] + ": "
                + describe(parts[2]) + " token " + parts[3] + " (" + parts[4] + ", " + parts[5] + "), highest accepted "
                + parts[6] + ", last exclusive " + parts[7] + ": " + coverage;
        if (coverage == Coverage.UNKNOWN) {
            inconclusive.add(text);
        } else {
            violations.add(text);
        }
        return false;
    }

    private Coverage coverage(String id) {
        Hold hold = holds.get(id);
        if (hold == null) {
            return Coverage.NOT_COVERED;
        }
        if (hold.lostAtRelease || reported(hold)) {
            return Coverage.COVERED;
        }
        return killed.contains(hold.jvm) && hold.lastReleaseSeq < 0 ? Coverage.UNKNOWN : Coverage.NOT_COVERED;
    }

    /** Whether the lost-hold listener was told of this hold. */
    private boolean reported(Hold hold) {
        for (Signal signal : signals) {
            if (!signal.jvm().equals(hold.jvm) || !signal.name().equals(hold.name)) {
                continue;
            }
            boolean matches = isSemaphore(hold)
                    ? signal.kind().equals("semaphore") && signal.seq() > hold.acquiredSeq
                            && (signal.threadId() == -1 || signal.threadId() == hold.threadId)
                            && (hold.lastReleaseSeq < 0 || signal.seq() < hold.lastReleaseSeq)
                    : signal.kind().equals(hold.op) && signal.token() == hold.token;
            if (matches) {
                return true;
            }
        }
        return false;
    }

    private static boolean isSemaphore(Hold hold) {
        return hold.op.startsWith("semaphore");
    }

    private String describe(String id) {
        Hold hold = holds.get(id);
        if (hold == null) {
            return id + " (no history)";
        }
        return id + " [" + hold.op + " " + hold.name + (hold.token >= 0 ? " token " + hold.token : "")
                + (killed.contains(hold.jvm) ? ", JVM killed" : "") + "]";
    }
}
