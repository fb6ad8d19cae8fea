import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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

/**
 * Assembles the Redis scripts from their parts, at build time: Redis has no include, so a block
 * that several scripts need is written once, in {@code src/main/lua/shared/<name>.lua}, and each
 * script that needs it says so on a line of its own, {@code -- include: <name>}. Every script of
 * {@code src/main/lua/scripts/} is written to the output folder with each include line replaced by
 *
 * <pre>
 * -- shared: &lt;name&gt;
 * &lt;the text of shared/&lt;name&gt;.lua&gt;
 * -- end shared
 * </pre>
 *
 * so the jar holds one complete file per script, and a reader of a script run by Redis sees where
 * each block came from. The output is a function of the input bytes alone (reproducible builds).
 *
 * <p>Fails the build (exit status 1, the reasons on standard error) when
 * <ul>
 * <li>an include names no part, or a script includes one part twice;</li>
 * <li>a script carries a block of its own between {@code -- shared:} and {@code -- end shared}
 *     markers, or a line that looks like a marker but is not exactly an include line (misspelt,
 *     indented): a block several scripts share lives in {@code shared/} only;</li>
 * <li>a script carries, not included, the whole text of a part, or defines a top-level
 *     {@code local function} that a part defines: a pasted copy;</li>
 * <li>a part is included by fewer than two scripts (misnamed, or no longer shared: write it back
 *     into its script), is empty, does not end with a line break, or has a marker line itself
 *     (parts do not nest);</li>
 * <li>a file has a carriage return or is not UTF-8.</li>
 * </ul>
 *
 * <p>Run by the lua module's build (exec-maven-plugin, phase generate-resources) with the JDK that
 * runs Maven, as a single-file program: it needs nothing but the JDK and is not part of the jar.
 *
 * <pre>java AssembleScripts.java &lt;scripts folder&gt; &lt;shared folder&gt; &lt;output folder&gt;</pre>
 */
public final class AssembleScripts {

    /** The line that includes a part: {@code -- include: grant-next}. */
    private static final Pattern INCLUDE = Pattern.compile("^-- include: ([a-z0-9]+(?:-[a-z0-9]+)*)$");
    /** Any line that looks like an include or a block marker, so that a misspelt one is caught, not copied. */
    private static final Pattern MARKER_LIKE =
            Pattern.compile("^\\s*--\\s*(?:include\\b|shared\\b|end\\s+shared\\b).*$");
    /** A part's file name: lower case and hyphens, as the include line writes it. */
    private static final Pattern PART_FILE = Pattern.compile("^([a-z0-9]+(?:-[a-z0-9]+)*)\\.lua$");
    /** A function a part defines at its top level: {@code local function grant_next(}. */
    private static final Pattern TOP_FUNCTION = Pattern.compile("^local function ([A-Za-z_][A-Za-z0-9_]*)\\s*\\(");

    private AssembleScripts() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: java AssembleScripts.java <scripts folder> <shared folder> <output folder>");
            System.exit(2);
        }
        List<String> failures = new ArrayList<>();
        Map<String, String> assembled = assemble(Path.of(args[0]), Path.of(args[1]), failures);
        if (!failures.isEmpty()) {
            System.err.println("AssembleScripts: the Lua scripts were not assembled:");
            failures.forEach(f -> System.err.println("  " + f));
            System.exit(1);
        }
        write(assembled, Path.of(args[2]));
    }

    /** The assembled text of every script, by file name; what is wrong goes to {@code failures}. */
    static Map<String, String> assemble(Path scriptsFolder, Path sharedFolder, List<String> failures) {
        Map<String, String> parts = new TreeMap<>();
        for (Path file : luaFiles(sharedFolder)) {
            String fileName = file.getFileName().toString();
            Matcher name = PART_FILE.matcher(fileName);
            String where = "shared/" + fileName;
            if (!name.matches()) {
                failures.add(where + ": a part's name is lower case with hyphens, as '-- include: <name>' writes it");
                continue;
            }
            String text = read(file, where, failures);
            if (text == null) {
                continue;
            }
            if (text.isEmpty() || !text.endsWith("\n")) {
                failures.add(where + ": a part is not empty and ends with a line break");
            }
            List<String> lines = text.lines().toList();
            for (int i = 0; i < lines.size(); i++) {
                if (MARKER_LIKE.matcher(lines.get(i)).matches()) {
                    failures.add(where + ":" + (i + 1) + ": a part includes nothing and marks no block: "
                            + lines.get(i));
                }
            }
            parts.put(name.group(1), text);
        }
        Map<String, Set<String>> includedBy = new TreeMap<>();
        parts.keySet().forEach(p -> includedBy.put(p, new TreeSet<>()));
        Map<String, String> assembled = new TreeMap<>();
        List<Path> scripts = luaFiles(scriptsFolder);
        if (scripts.isEmpty()) {
            failures.add(scriptsFolder + ": no .lua script");
        }
        for (Path file : scripts) {
            String fileName = file.getFileName().toString();
            String text = read(file, fileName, failures);
            if (text == null) {
                continue;
            }
            StringBuilder out = new StringBuilder(text.length() * 2);
            Set<String> included = new TreeSet<>();
            String[] lines = text.split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                String line = lines[i];
                String where = fileName + ":" + (i + 1);
                Matcher include = INCLUDE.matcher(line);
                if (include.matches()) {
                    String part = include.group(1);
                    if (!parts.containsKey(part)) {
                        failures.add(where + ": includes '" + part + "', which is not in shared/ (parts: "
                                + parts.keySet() + ")");
                    } else if (!included.add(part)) {
                        failures.add(where + ": includes '" + part + "' a second time");
                    } else {
                        includedBy.get(part).add(fileName);
                        out.append("-- shared: ").append(part).append('\n')
                                .append(parts.get(part))
                                .append("-- end shared");
                    }
                } else if (MARKER_LIKE.matcher(line).matches()) {
                    failures.add(where + ": is neither '-- include: <name>' (at the start of the line,"
                            + " lower case, hyphens) nor code; a block that scripts share lives in"
                            + " shared/<name>.lua and is included: " + line);
                } else {
                    out.append(line);
                }
                if (i < lines.length - 1) {
                    out.append('\n');
                }
            }
            parts.forEach((part, partText) -> {
                if (text.contains(partText)) {
                    failures.add(fileName + ": carries a copy of shared/" + part + ".lua; include it instead");
                }
            });
            for (String function : topFunctions(text)) {
                parts.forEach((part, partText) -> {
                    if (topFunctions(partText).contains(function)) {
                        failures.add(fileName + ": defines local function " + function + ", as shared/" + part
                                + ".lua does; include the part instead of copying it");
                    }
                });
            }
            assembled.put(fileName, out.toString());
        }
        includedBy.forEach((part, files) -> {
            if (files.size() < 2) {
                failures.add("shared/" + part + ".lua: included by " + (files.isEmpty() ? "no script" : files)
                        + "; a part is shared by two scripts or more (a block one script uses belongs in it)");
            }
        });
        return assembled;
    }

    /**
     * Writes every script to {@code folder}, and deletes scripts no longer there. Each is written
     * afresh, changed or not, so that it is newer than any copy in target/classes, which the
     * resources step then replaces.
     */
    private static void write(Map<String, String> assembled, Path folder) throws IOException {
        Files.createDirectories(folder);
        for (Path old : luaFiles(folder)) {
            if (!assembled.containsKey(old.getFileName().toString())) {
                Files.delete(old);
            }
        }
        for (Map.Entry<String, String> script : assembled.entrySet()) {
            Path target = folder.resolve(script.getKey());
            Files.write(target, script.getValue().getBytes(StandardCharsets.UTF_8));
        }
    }

    private static Set<String> topFunctions(String text) {
        Set<String> names = new TreeSet<>();
        text.lines().forEach(line -> {
            Matcher m = TOP_FUNCTION.matcher(line);
            if (m.find()) {
                names.add(m.group(1));
            }
        });
        return names;
    }

    /** The file's text, or null (with the reason in failures) if it is not UTF-8 or has a carriage return. */
    private static String read(Path file, String where, List<String> failures) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            failures.add(where + ": cannot be read as UTF-8: " + e);
            return null;
        }
        if (text.indexOf('\r') >= 0) {
            failures.add(where + ": has a carriage return; the scripts end their lines with '\\n' alone");
            return null;
        }
        return text;
    }

    /** The {@code .lua} files directly in {@code folder}, by name; none if the folder does not exist. */
    private static List<Path> luaFiles(Path folder) {
        if (!Files.isDirectory(folder)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(folder)) {
            return entries.filter(p -> p.getFileName().toString().endsWith(".lua") && Files.isRegularFile(p))
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
