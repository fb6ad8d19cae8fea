package dev.synchronizers.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The module's layout by subject holds as the code changes: read from the import lines of
 * {@code src/main/java}, the root package (the public entry points) is imported by no sub-package,
 * the sub-packages depend on each other in one direction only (no cycle), no two files import each
 * other, and no class is much over the size a reader takes in at once. A failure names the files.
 */
class LayeringTest {

    private static final String ROOT = "dev.synchronizers.redis";
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?(" + Pattern.quote(ROOT)
            + "(?:\\.[a-z]\\w*)*)\\.([A-Z]\\w*)[\\w.]*;", Pattern.MULTILINE);
    /** About 550 lines, as the layout asks; a little over is tolerated, a room twice that is not. */
    private static final int MAX_LINES = 650;

    /** Each main file (package.Class) with the module's classes it imports (package.Class). */
    private static final Map<String, Set<String>> IMPORTS = new TreeMap<>();
    private static final Map<String, Integer> LINES = new TreeMap<>();

    @BeforeAll
    static void read() throws IOException {
        Path main = Path.of("src/main/java", ROOT.split("\\."));
        try (Stream<Path> files = Files.walk(main)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String name = file.getFileName().toString().replace(".java", "");
                if (name.equals("package-info")) {
                    continue;
                }
                String text = Files.readString(file);
                Matcher pkg = PACKAGE.matcher(text);
                assertTrue(pkg.find(), file + " has a package line");
                Set<String> imported = new TreeSet<>();
                Matcher m = IMPORT.matcher(text);
                while (m.find()) {
                    imported.add(m.group(1) + "." + m.group(2));
                }
                IMPORTS.put(pkg.group(1) + "." + name, imported);
                LINES.put(pkg.group(1) + "." + name, (int) text.lines().count());
            }
        }
        assertTrue(IMPORTS.size() > 50, "read the module's main sources: " + IMPORTS.size());
    }

    private static String packageOf(String type) {
        return type.substring(0, type.lastIndexOf('.'));
    }

    @Test
    void noSubPackageImportsTheEntryPoints() {
        List<String> upward = new ArrayList<>();
        IMPORTS.forEach((file, imported) -> {
            for (String target : imported) {
                if (!packageOf(file).equals(ROOT) && packageOf(target).equals(ROOT)) {
                    upward.add(file + " -> " + target);
                }
            }
        });
        assertEquals(List.of(), upward, "imports from an internal package up to the entry points");
    }

    @Test
    void noTwoFilesImportEachOther() {
        List<String> twoWay = new ArrayList<>();
        IMPORTS.forEach((file, imported) -> {
            for (String target : imported) {
                if (file.compareTo(target) < 0 && IMPORTS.getOrDefault(target, Set.of()).contains(file)) {
                    twoWay.add(file + " <-> " + target);
                }
            }
        });
        assertEquals(List.of(), twoWay, "files that import each other");
    }

    @Test
    void thePackagesDependOnEachOtherOneWayOnly() {
        Map<String, Set<String>> edges = new TreeMap<>();
        IMPORTS.forEach((file, imported) -> {
            for (String target : imported) {
                if (!packageOf(file).equals(packageOf(target))) {
                    edges.computeIfAbsent(packageOf(file), k -> new TreeSet<>()).add(packageOf(target));
                }
            }
        });
        for (String from : edges.keySet()) {
            List<String> cycle = cycleFrom(from, from, edges, new ArrayList<>(List.of(from)), new TreeSet<>());
            assertEquals(List.of(), cycle, "a cycle between packages: " + String.join(" -> ", cycle));
        }
    }

    private static List<String> cycleFrom(String start, String at, Map<String, Set<String>> edges, List<String> path,
            Set<String> seen) {
        for (String next : edges.getOrDefault(at, Set.of())) {
            if (next.equals(start)) {
                List<String> cycle = new ArrayList<>(path);
                cycle.add(next);
                return cycle;
            }
            if (seen.add(next)) {
                path.add(next);
                List<String> found = cycleFrom(start, next, edges, path, seen);
                if (!found.isEmpty()) {
                    return found;
                }
                path.remove(path.size() - 1);
            }
        }
        return List.of();
    }

    @Test
    void noClassIsMuchOverTheSizeOfOneReading() {
        List<String> large = LINES.entrySet().stream().filter(e -> e.getValue() > MAX_LINES)
                .map(e -> e.getKey() + " (" + e.getValue() + " lines)").toList();
        assertEquals(List.of(), large, "classes over " + MAX_LINES + " lines");
    }
}
