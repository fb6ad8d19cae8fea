package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Keeps {@link Script} in step with the Lua files (STYLE R4, R5): one constant per file, headers
 * that declare the arity the constant claims, and no {@code KEYS[n]} / {@code ARGV[n]} below the
 * header. The header is the leading comment block plus the {@code local} lines right after it that
 * name the inputs, as in R4's example; anything after them is the body. The files checked are the
 * scripts as Redis runs them: the lua module's build assembles each from its source and the blocks
 * that several scripts share, which are written once ({@code lua/src/main/lua/shared/}) and keep
 * themselves the same in every script (that build fails on a copy that is not included). Needs no
 * Redis.
 */
class ScriptCatalogTest {

    /** {@code -- KEYS[1] lock ...}, {@code -- KEYS[i] lock i ...}, {@code -- KEYS[2i-1] queue i ...}. */
    private static final Pattern KEYS_LINE = Pattern.compile("^--\\s+KEYS\\[([^\\]]+)\\]\\s+\\S.*$");
    /** {@code -- ARGV[2] lease_ms ...}, {@code -- ARGV[i+1] owner i ...}, {@code -- ARGV[2i+1] token i ...}. */
    private static final Pattern ARGV_LINE = Pattern.compile("^--\\s+ARGV\\[([^\\]]+)\\]\\s+\\S.*$");
    private static final Pattern LITERAL_INDEX = Pattern.compile("(KEYS|ARGV)\\[\\d");
    /** One input, as a naming line reads it: {@code KEYS[1]}, {@code tonumber(ARGV[2])}. */
    private static final String INPUT = "(?:tonumber\\()?(?:KEYS|ARGV)\\[\\d+\\]\\)?";
    /** A line of the header that names inputs: {@code local lock, token_key = KEYS[1], KEYS[2]}. */
    private static final Pattern NAMING_LINE = Pattern.compile(
            "^local\\s+\\w+(?:\\s*,\\s*\\w+)*\\s*=\\s*" + INPUT + "(?:\\s*,\\s*" + INPUT + ")*\\s*$");
    private static final Pattern INPUT_REFERENCE = Pattern.compile("(KEYS|ARGV)\\[(\\d+)\\]");
    /** A command a script calls: {@code redis.call('HGET', ...)}, {@code redis.pcall('GET', ...)}. */
    private static final Pattern CALLED_COMMAND = Pattern.compile("redis\\.p?call\\(\\s*'([A-Za-z]+)'");
    /** A line the lua module's build replaces with a shared block: {@code -- include: serve-line}. */
    private static final Pattern INCLUDE_LIKE = Pattern.compile("^\\s*--\\s*include\\b.*$");

    /* --------------- files and constants --------------- */

    @Test
    void catalogue_everyLuaFile_hasExactlyOneConstant() throws IOException, URISyntaxException {
        Map<String, List<Script>> byFile = new TreeMap<>();
        for (Script script : Script.values()) {
            byFile.computeIfAbsent(script.file, f -> new ArrayList<>()).add(script);
        }
        for (String file : luaFiles()) {
            List<Script> constants = byFile.getOrDefault(file, List.of());
            assertEquals(1, constants.size(),
                    () -> file + " should have exactly one Script constant, has " + constants);
        }
    }

    @Test
    void catalogue_everyConstant_hasItsFile() throws IOException, URISyntaxException {
        TreeSet<String> files = luaFiles();
        for (Script script : Script.values()) {
            assertTrue(files.contains(script.file),
                    () -> script + " names " + script.file + ", which is not in "
                            + Script.RESOURCE_FOLDER + " (files there: " + files + ")");
        }
    }

    /**
     * The watchdog's renewals (the batched scripts) are sent with their text: a tick is in flight
     * while holders release, so a renewal sent again after NOSCRIPT would run after a release
     * (semantics.md, "Scripts sent again after NOSCRIPT").
     */
    @ParameterizedTest
    @EnumSource(Script.class)
    void catalogue_everyRenewal_isSentWithItsText(Script script) {
        if (script.batched()) {
            assertEquals(Script.Sending.WITH_TEXT, script.sending, script.file);
        }
    }

    /**
     * The scripts marked safe to repeat are exactly those the watchdog's follow-ups send again until
     * Redis answers, each because a second run ends in the state one run would (DESIGN.md, "Unknown
     * outcomes"). A script added to this set needs its Lua header to show why.
     */
    @Test
    void catalogue_safeToRepeat_isExactlyTheFollowUps() {
        Set<Script> expected = EnumSet.of(
                Script.LOCK_RELEASE,        // token-checked: a second run finds that hold gone
                Script.FAIR_LOCK_RELEASE,   // token-checked: a second run finds that hold gone, serves no one again
                Script.RW_READ_RELEASE,     // token-checked: a second run finds that read hold gone
                Script.RW_WRITE_RELEASE,    // token-checked: a second run finds that write hold gone
                Script.LOCK_GIVE_BACK,      // by owner, sent only while the owner neither holds nor acquires: ends it once
                Script.COND_LEAVE,          // by a waiter unique to one wait: a second run finds it nowhere
                Script.FAIR_LOCK_LEAVE,     // by owner, as the give-back: a second run finds no place and no hold
                Script.RW_WRITE_LEAVE,      // by owner, as the give-back: a second run finds no place
                Script.SEMAPHORE_LEAVE,     // idempotent by its header: the given-up mark makes later runs change nothing
                Script.SEMAPHORE_RELEASE);  // sets what each grant keeps rather than subtracting: releases once
        Set<Script> marked = EnumSet.noneOf(Script.class);
        for (Script script : Script.values()) {
            if (script.safeToRepeat) {
                marked.add(script);
            }
        }
        assertEquals(expected, marked);
    }

    /* --------------- headers --------------- */

    @ParameterizedTest
    @EnumSource(Script.class)
    void header_firstLine_namesTheFile(Script script) {
        String first = lines(script).get(0);
        assertTrue(first.startsWith("-- " + script.file + ": ") && first.length() > script.file.length() + 5,
                () -> script.file + ": first line should be '-- " + script.file + ": <what it does>', is '"
                        + first + "'");
    }

    @ParameterizedTest
    @EnumSource(Script.class)
    void header_keysLines_matchTheConstant(Script script) {
        List<String> indexes = headerIndexes(script, KEYS_LINE);
        if (script.batched()) {
            // Item i's keys are KEYS[k*i-(k-1)] .. KEYS[k*i]: 'i' for one key per item, '2i-1', '2i' for two.
            int k = script.keysPerItem;
            List<String> perItem = perItemIndexes(k, 1 - k);
            assertEquals(perItem, indexes, () -> script.file + ": a batched script with " + k
                    + " keys per item should declare the KEYS lines " + perItem);
        } else {
            assertFalse(indexes.contains("i"),
                    () -> script.file + ": header declares KEYS[i] but " + script + " is not Script.BATCHED");
            assertEquals(numbered(script.keys), indexes,
                    () -> script.file + ": header KEYS lines should be KEYS[1.." + script.keys + "] to match "
                            + script + ".keys");
        }
    }

    @ParameterizedTest
    @EnumSource(Script.class)
    void header_argvLines_matchTheConstant(Script script) {
        List<String> indexes = headerIndexes(script, ARGV_LINE);
        List<String> fixed = new ArrayList<>();
        List<String> perKey = new ArrayList<>();
        for (String index : indexes) {
            (index.chars().allMatch(Character::isDigit) ? fixed : perKey).add(index);
        }
        assertEquals(numbered(script.args), fixed,
                () -> script.file + ": header's fixed ARGV lines should be ARGV[1.." + script.args
                        + "] to match " + script + ".args");
        if (script.batched()) {
            // Item i's arguments follow the fixed ones: ARGV[m*i+(args-m+1)] .. ARGV[m*i+args], e.g.
            // 'i+1' for one argument per item after one fixed, '2i', '2i+1' for two.
            int m = script.argsPerItem;
            List<String> perItem = perItemIndexes(m, script.args - m + 1);
            assertEquals(perItem, perKey, () -> script.file + ": a batched script with " + script.args
                    + " fixed and " + m + " per-item arguments should declare the ARGV lines " + perItem
                    + " after the fixed ones");
        } else {
            assertEquals(List.of(), perKey,
                    () -> script.file + ": header declares per-key ARGV lines but " + script
                            + " is not Script.BATCHED");
        }
    }

    @ParameterizedTest
    @EnumSource(Script.class)
    void header_namingLines_nameEachNumberedInputOnce(Script script) {
        List<String> lines = lines(script);
        List<String> named = new ArrayList<>();
        for (String line : lines.subList(commentLength(lines), headerLength(lines))) {
            Matcher m = INPUT_REFERENCE.matcher(line);
            while (m.find()) {
                named.add(m.group(1) + "[" + m.group(2) + "]");
            }
        }
        List<String> expected = new ArrayList<>();
        if (!script.batched()) {
            numbered(script.keys).forEach(i -> expected.add("KEYS[" + i + "]"));
        }
        numbered(script.args).forEach(i -> expected.add("ARGV[" + i + "]"));
        assertEquals(expected, named, () -> script.file
                + ": the 'local ... = KEYS[n], ARGV[n]' lines after the comments should name each input once, in order");
    }

    /* --------------- body --------------- */

    @ParameterizedTest
    @EnumSource(Script.class)
    void body_belowHeader_hasNoLiteralKeysOrArgvIndex(Script script) {
        List<String> lines = lines(script);
        int body = headerLength(lines);
        assertTrue(body < lines.size(), () -> script.file + " has a header and no code");
        for (int i = body; i < lines.size(); i++) {
            String line = lines.get(i);
            int lineNumber = i + 1;
            assertFalse(LITERAL_INDEX.matcher(line).find(),
                    () -> script.file + ":" + lineNumber + " uses KEYS[n]/ARGV[n] below the header: " + line);
        }
    }

    /**
     * A script that reads the server's clock must switch to effects replication before it writes,
     * or Redis 6.2 with {@code lua-replicate-commands no} refuses its first write after TIME.
     */
    @ParameterizedTest
    @EnumSource(Script.class)
    void body_callingTime_switchesToEffectsReplicationFirst(Script script) {
        List<String> lines = lines(script);
        int time = -1;
        int replicate = -1;
        for (int i = headerLength(lines); i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (time < 0 && line.contains("redis.call('TIME')")) {
                time = i;
            }
            if (replicate < 0 && line.equals("redis.replicate_commands()")) {
                replicate = i;
            }
        }
        if (time >= 0) {
            int timeLine = time + 1;
            int replicateLine = replicate;
            assertTrue(replicateLine >= 0 && replicateLine < time,
                    () -> script.file + ":" + timeLine + " calls TIME without redis.replicate_commands() before it");
        }
    }

    /**
     * A snapshot script ({@code *-snapshot.lua}) is read-only: it calls no command that writes,
     * not even the purges of expired entries that other scripts make, so that taking a snapshot
     * never changes what it pictures. Every command it calls is on a list of read commands.
     */
    @ParameterizedTest
    @EnumSource(Script.class)
    void body_snapshotScript_callsOnlyReadCommands(Script script) {
        if (!script.file.endsWith("-snapshot.lua")) {
            return;
        }
        java.util.Set<String> reads = java.util.Set.of("TIME", "EXISTS", "GET", "PTTL", "HGET", "HGETALL", "HEXISTS",
                "HLEN", "ZCARD", "ZCOUNT", "ZRANGE", "ZRANGEBYSCORE", "ZSCORE");
        List<String> lines = lines(script);
        List<String> called = new ArrayList<>();
        for (int i = headerLength(lines); i < lines.size(); i++) {
            Matcher m = CALLED_COMMAND.matcher(lines.get(i));
            while (m.find()) {
                called.add(m.group(1).toUpperCase(java.util.Locale.ROOT));
            }
        }
        assertFalse(called.isEmpty(), () -> script.file + " calls no command");
        assertTrue(reads.containsAll(called), () -> script.file + " calls commands outside the read-only list "
                + reads + ": " + called);
        assertFalse(String.join("\n", lines).matches("(?s).*redis\\.p?call\\(\\s*[^'\\s].*"),
                () -> script.file + " names a command other than by a literal: it cannot be checked");
    }

    /* --------------- assembly --------------- */

    /**
     * The scripts on the classpath are the assembled ones: no include line is left in them, each
     * replaced by the block it names (lua/src/build/AssembleScripts.java). A script loaded from
     * its source instead would run without the functions and locals of its shared blocks.
     */
    @ParameterizedTest
    @EnumSource(Script.class)
    void assembled_noIncludeLineIsLeft(Script script) {
        List<String> lines = lines(script);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int lineNumber = i + 1;
            assertFalse(INCLUDE_LIKE.matcher(line).matches(), () -> script.file + ":" + lineNumber
                    + " is an include line: the script on the classpath was not assembled: " + line);
        }
    }

    /* --------------- helpers --------------- */

    private static List<String> lines(Script script) {
        List<String> lines = ScriptRegistry.text(script).lines().toList();
        assertFalse(lines.isEmpty(), () -> script.file + " is empty");
        return lines;
    }

    /** The number of leading comment lines: the contract. */
    private static int commentLength(List<String> lines) {
        int n = 0;
        while (n < lines.size() && lines.get(n).startsWith("--")) {
            n++;
        }
        return n;
    }

    /**
     * The number of lines of the header: the leading comments and the {@code local} lines right
     * after them that name the inputs (STYLE R4: the header "names its inputs once").
     */
    private static int headerLength(List<String> lines) {
        int n = commentLength(lines);
        while (n < lines.size() && NAMING_LINE.matcher(lines.get(n)).matches()) {
            n++;
        }
        return n;
    }

    /** The indexes of the header lines the pattern matches, in file order. */
    private static List<String> headerIndexes(Script script, Pattern pattern) {
        List<String> lines = lines(script);
        List<String> indexes = new ArrayList<>();
        for (String line : lines.subList(0, commentLength(lines))) {
            Matcher m = pattern.matcher(line);
            if (m.matches()) {
                indexes.add(m.group(1).replace(" ", ""));
            }
        }
        return indexes;
    }

    /**
     * The indexes, as a header writes them, of an item's {@code count} inputs when the first is
     * {@code count*i + firstOffset}: {@code perItemIndexes(2, -1)} is {@code [2i-1, 2i]},
     * {@code perItemIndexes(1, 1)} is {@code [i+1]}.
     */
    private static List<String> perItemIndexes(int count, int firstOffset) {
        List<String> indexes = new ArrayList<>();
        for (int j = 0; j < count; j++) {
            int offset = firstOffset + j;
            indexes.add((count == 1 ? "i" : count + "i")
                    + (offset > 0 ? "+" + offset : offset < 0 ? Integer.toString(offset) : ""));
        }
        return indexes;
    }

    private static List<String> numbered(int count) {
        List<String> indexes = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            indexes.add(Integer.toString(i));
        }
        return indexes;
    }

    /** The names of the {@code .lua} files in the resource folder, from a directory or a jar. */
    private static TreeSet<String> luaFiles() throws IOException, URISyntaxException {
        URL folder = Script.class.getClassLoader().getResource(Script.RESOURCE_FOLDER);
        assertNotNull(folder, () -> Script.RESOURCE_FOLDER + " is not on the test classpath");
        TreeSet<String> files = new TreeSet<>();
        switch (folder.getProtocol()) {
            case "file" -> {
                try (Stream<Path> entries = Files.list(Path.of(folder.toURI()))) {
                    entries.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".lua")).forEach(files::add);
                }
            }
            case "jar" -> {
                URLConnection connection = folder.openConnection();
                connection.setUseCaches(false);   // our own JarFile, which we may close
                try (JarFile jar = ((JarURLConnection) connection).getJarFile()) {
                    String prefix = ((JarURLConnection) connection).getEntryName();
                    for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                        String name = e.nextElement().getName();
                        if (name.startsWith(prefix) && name.endsWith(".lua")
                                && name.indexOf('/', prefix.length()) < 0) {
                            files.add(name.substring(prefix.length()));
                        }
                    }
                }
            }
            default -> fail("cannot list " + folder + ": neither a directory nor a jar");
        }
        assertFalse(files.isEmpty(), () -> "no .lua file in " + folder);
        return files;
    }
}
