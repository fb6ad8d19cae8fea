package dev.synchronizers.soak;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.soak.History.Event;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The verdict of a soak run, shared by {@link FaultSoakTest} and {@link RedlockSoakTest}. */
final class SoakReport {

    private SoakReport() {
    }

    /** Where worker JVM {@code jvm} of a run writes its history. */
    static Path historyFile(Path dir, String jvm) {
        return dir.resolve("history-" + jvm + ".log");
    }

    /**
     * Reads the histories of JVMs {@code w1..w<jvms>} in {@code dir}, judges them with the witness's
     * records, writes {@code summary.txt}, prints its summary line (beginning with {@code label})
     * and fails on any violation.
     */
    static void judge(String label, Path dir, int jvms, Witness witness, Set<String> killed,
            Map<String, Integer> faults, List<String> finalViolations, long seconds, long seed) throws IOException {
        Map<String, List<Event>> histories = new TreeMap<>();
        for (int i = 1; i <= jvms; i++) {
            String jvm = "w" + i;
            histories.put(jvm, History.read(jvm, historyFile(dir, jvm)));
        }
        List<String> overlaps = witness.records(Witness.OVERLAPS);
        List<String> refusals = witness.records(Witness.REFUSALS);
        Files.write(dir.resolve("overlaps.txt"), overlaps, StandardCharsets.UTF_8);
        Files.write(dir.resolve("refusals.txt"), refusals, StandardCharsets.UTF_8);
        HistoryChecker.Verdict verdict = HistoryChecker.check(histories, killed, overlaps, refusals);
        List<String> violations = new ArrayList<>(verdict.violations());
        violations.addAll(finalViolations);
        int faultCount = faults.values().stream().mapToInt(Integer::intValue).sum();
        StringBuilder faultList = new StringBuilder();
        faults.forEach((kind, count) -> faultList.append(faultList.length() == 0 ? "" : ", ").append(kind)
                .append(' ').append(count));
        String line = label + ": " + seconds + " s, seed " + seed + ": ops=" + verdict.operations()
                + " (acquired " + verdict.acquisitions() + (verdict.cachedTakes() == 0 ? ""
                        : ", " + verdict.cachedTakes() + " from a cache, " + verdict.localRetakes() + " of them local re-takes")
                + "), faults=" + faultCount + " (" + faultList + ")"
                + ", lost-hold signals=" + verdict.listenerSignals() + " (+" + verdict.lostAtRelease()
                + " at release, " + verdict.unreportedSemaphoreLosses() + " of them semaphore releases never reported"
                + " to the listener), overlaps=" + verdict.overlaps() + " (covered " + verdict.coveredOverlaps()
                + "), fenced out=" + verdict.fencedOut() + " of " + verdict.refusals() + " refused"
                + ", inconclusive=" + verdict.inconclusive().size() + ", violations=" + violations.size();
        // Counted and shown by kind (what a violation's text says before its first colon), a few of each.
        Map<String, Integer> kinds = new TreeMap<>();
        StringBuilder examples = new StringBuilder();
        for (String violation : violations) {
            if (kinds.merge(violation.substring(0, Math.max(0, violation.indexOf(':'))), 1, Integer::sum) <= 3) {
                examples.append("  violation: ").append(violation).append('\n');
            }
        }
        StringBuilder summary = new StringBuilder(line).append(kinds.isEmpty() ? "" : " " + kinds).append('\n')
                .append(examples);
        verdict.inconclusive().stream().limit(5).forEach(each -> summary.append("  inconclusive: ").append(each).append('\n'));
        verdict.notes().stream().limit(3).forEach(note -> summary.append("  note: ").append(note).append('\n'));
        summary.append("  histories in ").append(dir.toAbsolutePath()).append('\n');
        Files.writeString(dir.resolve("summary.txt"), summary, StandardCharsets.UTF_8);
        System.out.print(summary);
        System.out.flush();
        assertTrue(violations.isEmpty(), summary.toString());
    }
}
