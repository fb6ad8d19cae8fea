package dev.synchronizers.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.synchronizers.Synchronizers;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```java} block of README.md and docs/*.md compiles, and the blocks marked
 * {@code <!-- snippet: runnable -->} run against a real {@code redis-server}.
 *
 * <p>A block is compiled as the body of a method, or, when it declares methods or classes (a
 * Spring {@code @Bean} method, a class), as the members of a class. Either way the class extends
 * {@link #READER}, which imports what the pages' readers have on their class path and declares the
 * names a snippet leaves to its reader ({@code order}, {@code payments}, {@code store}, ...), and
 * the blocks see {@code synchronizers}, a client of the test's server. A failure names the page and
 * the line of the page.
 *
 * <p>A runnable block is run as it is, except that {@code redis://127.0.0.1:6379} is replaced by
 * the test server's address; it must return normally, and every reader's action it names
 * ({@code ship(...)}, {@code payments.charge(...)}, ...) must have happened by the time it returns:
 * an example that starts work nobody waits for does not pass.
 *
 * <p>The only way out is a visible marker before the block, {@code <!-- snippet: not compiled: why -->},
 * which no page uses today.
 */
class DocSnippetsTest {

    private static final Path ROOT = Path.of("..");

    private static final String IMPORTS = """
            import dev.synchronizers.*;
            import dev.synchronizers.redis.*;
            import dev.synchronizers.test.*;
            import dev.synchronizers.shedlock.*;
            import dev.synchronizers.spring.integration.*;
            import io.lettuce.core.api.sync.RedisCommands;
            import io.micrometer.core.instrument.Meter;
            import io.micrometer.core.instrument.MeterRegistry;
            import io.micrometer.core.instrument.config.MeterFilter;
            import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
            import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
            import java.math.BigDecimal;
            import java.time.Duration;
            import java.util.*;
            import java.util.concurrent.*;
            import java.util.concurrent.locks.Condition;
            import net.javacrumbs.shedlock.core.LockProvider;
            import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
            import org.junit.jupiter.api.Test;
            import org.slf4j.Logger;
            import org.slf4j.LoggerFactory;
            import org.springframework.context.annotation.Bean;
            import org.springframework.integration.annotation.ServiceActivator;
            import org.springframework.scheduling.annotation.Scheduled;
            import static java.util.concurrent.TimeUnit.*;
            import static org.junit.jupiter.api.Assertions.*;
            """;

    /** What the pages leave to their reader. Each action records its name in {@code calls}. */
    private static final String READER = IMPORTS + """
            public abstract class Reader {
                private static final Set<String> CALLS = ConcurrentHashMap.newKeySet();

                public record Order(String id) { }
                public record Receipt(Order order, long fencingToken) { }
                public record Report() { }
                public record Request() { }
                public interface Payments { Receipt charge(Order order, long fencingToken); }
                public interface Alerts { void page(String message); }
                public static class Store {
                    public void write(Order order, long fencingToken) { CALLS.add("write"); }
                    public void write(Report report, long fencingToken) { CALLS.add("write"); }
                }
                public static class Partner {
                    public void call(Request request) { CALLS.add("call"); }
                    public void bulkCall(Request request) { CALLS.add("bulkCall"); }
                }
                /** The job of docs/testing.md's example: its body runs under lock("export").callLocked(...). */
                public static class NightlyExport {
                    public NightlyExport(Synchronizers synchronizers) { }
                    public void run() { }
                    public void awaitStarted() { }
                    public boolean committedAnything() { return false; }
                }

                public Synchronizers synchronizers;
                public DistributedLock lock;            // docs/getting-started.md: the lock of the section
                public DistributedSemaphore partnerApi; // docs/getting-started.md: the semaphore of the section
                public Redlock redlock;
                public SynchronizersLockRegistry registry;
                public MeterRegistry meterRegistry = new SimpleMeterRegistry();
                public Logger log = LoggerFactory.getLogger("snippet");
                public String orderId = "42";
                public Order order = new Order("42");
                public Payments payments = (order, token) -> { CALLS.add("charge"); return new Receipt(order, token); };
                public Alerts alerts = message -> CALLS.add("page");
                public Store store = new Store();
                public Partner partner = new Partner();
                public Request request = new Request();
                public Map<String, BigDecimal> priceList = Map.of("sku-1", BigDecimal.TEN);
                public String sku = "sku-1";
                public int workers = 1;

                public void ship(Order order, long fencingToken) { CALLS.add("ship"); }
                public CompletionStage<Void> process(Order order, long fencingToken) {
                    CALLS.add("process");
                    return CompletableFuture.completedFuture(null);
                }
                public Report buildReport() { return new Report(); }

                public static Set<String> calls() { return CALLS; }

                /** Connects the reader's names to a client, as the pages' earlier blocks do. */
                public void bind(Synchronizers client) {
                    synchronizers = client;
                    lock = client.lock("charge-" + orderId);
                    partnerApi = client.semaphore("partner-api");
                }
            }
            """;

    /** The reader's actions; a runnable block that names one must have done it when it returns. */
    private static final Pattern ACTION = Pattern.compile("\\b(charge|ship|write|call|bulkCall|page|process)\\(");

    private static final Pattern MARKER = Pattern.compile("<!--\\s*snippet:\\s*([^>]*?)\\s*-->");

    /** One ```java block of a page. */
    record Block(String page, int line, String code, boolean runnable, String className, boolean members) {

        /** The class the block is compiled in; the block starts on line {@link #codeOffset()} + 1. */
        String source(String uri) {
            String body = runnable && uri != null ? code.replace("redis://127.0.0.1:6379", uri) : code;
            if (unit()) {
                // A whole compilation unit (its own imports and class), in a package of its own.
                return "package " + className.toLowerCase(Locale.ROOT) + ";\n" + body;
            }
            return members
                    ? IMPORTS + "public class " + className + " extends Reader {\n" + body + "}\n"
                    : IMPORTS + "public class " + className + " extends Reader {\n"
                            + "public void snippet() throws Exception {\n" + body + "}\n}\n";
        }

        int codeOffset() {
            return unit() ? 1 : (int) IMPORTS.lines().count() + (members ? 1 : 2);
        }

        /** Whether the block is a whole compilation unit: it starts with its imports. */
        boolean unit() {
            return code.stripLeading().startsWith("import ");
        }

        String where() {
            return page + ":" + line;
        }
    }

    private static List<Block> blocks;
    private static List<String> compileErrors;
    @TempDir
    static Path classes;
    private static RedisServer server;

    @BeforeAll
    static void extractAndCompile() throws IOException {
        blocks = new ArrayList<>();
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        for (Path page : pages) {
            blocks.addAll(extract(ROOT.relativize(page).toString().replace('\\', '/'),
                    Files.readString(page, StandardCharsets.UTF_8)));
        }
        compileErrors = compile(null);
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    static List<Block> extract(String page, String text) {
        List<Block> found = new ArrayList<>();
        List<String> lines = text.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).strip().equals("```java")) {
                continue;
            }
            String marker = "";
            for (int m = i - 1; m >= 0 && m >= i - 2; m--) {
                Matcher matcher = MARKER.matcher(lines.get(m));
                if (matcher.find()) {
                    marker = matcher.group(1).toLowerCase(Locale.ROOT);
                    break;
                }
                if (!lines.get(m).isBlank()) {
                    break;
                }
            }
            int start = i + 1;
            StringBuilder code = new StringBuilder();
            for (i = start; i < lines.size() && !lines.get(i).strip().startsWith("```"); i++) {
                code.append(lines.get(i)).append('\n');
            }
            if (marker.startsWith("not compiled")) {
                continue;
            }
            if (!marker.isEmpty() && !marker.equals("runnable")) {
                throw new IllegalArgumentException(page + ":" + i + ": unknown snippet marker '" + marker
                        + "' (runnable, or not compiled: <why>)");
            }
            String body = code.toString();
            if (marker.equals("runnable") && declaresMembers(body)) {
                throw new IllegalArgumentException(page + ":" + (start + 1)
                        + ": a runnable block is statements; this one declares members");
            }
            found.add(new Block(page, start + 1, body, marker.equals("runnable"), "Snippet" + found.size()
                    + "_" + page.replaceAll("[^A-Za-z0-9]", "_"), declaresMembers(body)));
        }
        return found;
    }

    private static final Pattern TYPE_DECLARATION = Pattern.compile(
            "((public|protected|private|static|final|abstract|sealed)\\s+)*(class|interface|record|enum)\\s.*", Pattern.DOTALL);
    private static final Pattern METHOD_DECLARATION = Pattern.compile(
            "((public|protected|private|static|final|abstract|synchronized|default)\\s+)*(<[^>]*>\\s*)?"
                    + "(?!(else|return|new|throw|case)\\b)[\\w.]+(<.*>)?(\\[\\])*\\s+\\w+\\s*\\(.*\\)\\s*(throws\\s+[\\w.,\\s]+)?",
            Pattern.DOTALL);

    /**
     * Whether a block declares members (methods, fields with them, classes) rather than statements:
     * some text outside every bracket before a '{' is an annotation or a method or class header.
     */
    static boolean declaresMembers(String code) {
        String text = withoutCommentsAndLiterals(code);
        int depth = 0;
        StringBuilder segment = new StringBuilder();
        for (char c : text.toCharArray()) {
            if (depth == 0 && c == '{') {
                String header = segment.toString().strip();
                if (header.startsWith("@") || TYPE_DECLARATION.matcher(header).matches()
                        || METHOD_DECLARATION.matcher(header).matches()) {
                    return true;
                }
            }
            if (c == '{' || c == '(' || c == '[') {
                depth++;
            } else if (c == '}' || c == ')' || c == ']') {
                depth--;
            }
            if (depth == 0 && (c == ';' || c == '}' || c == '{')) {
                segment.setLength(0);
            } else if (depth == 0 || c == '(' && depth == 1) {
                segment.append(c);
            }
        }
        return text.strip().startsWith("@");
    }

    /** The code with comments removed and string and character literals emptied. */
    static String withoutCommentsAndLiterals(String code) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < code.length(); i++) {
            char c = code.charAt(i);
            if (c == '/' && i + 1 < code.length() && code.charAt(i + 1) == '/') {
                while (i < code.length() && code.charAt(i) != '\n') {
                    i++;
                }
                out.append('\n');
            } else if (c == '/' && i + 1 < code.length() && code.charAt(i + 1) == '*') {
                int end = code.indexOf("*/", i + 2);
                i = end < 0 ? code.length() : end + 1;
                out.append(' ');
            } else if (c == '"' || c == '\'') {
                out.append(c).append(c);
                for (i++; i < code.length() && code.charAt(i) != c; i++) {
                    if (code.charAt(i) == '\\') {
                        i++;
                    }
                }
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** Compiles every block (runnable ones against {@code uri} when not null); the errors, page and line first. */
    private static List<String> compile(String uri) {
        List<JavaFileObject> sources = new ArrayList<>();
        sources.add(source("Reader", READER));
        for (Block block : blocks) {
            sources.add(source(block.className(), block.source(uri)));
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        boolean ok = javac.getTask(null, null, diagnostics,
                List.of("-classpath", System.getProperty("java.class.path"), "-d", classes.toString(),
                        "-proc:none", "-Xlint:deprecation,removal"),
                null, sources).call();
        List<String> errors = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR && d.getKind() != Diagnostic.Kind.MANDATORY_WARNING
                    && d.getKind() != Diagnostic.Kind.WARNING) {
                continue;
            }
            String name = d.getSource() == null ? "" : d.getSource().getName();
            Block block = blocks.stream().filter(b -> name.endsWith("/" + b.className() + ".java")).findFirst().orElse(null);
            String where = block == null
                    ? name + ":" + d.getLineNumber()
                    : block.page() + ":" + (block.line() + d.getLineNumber() - block.codeOffset() - 1);
            errors.add(where + ": " + d.getKind().toString().toLowerCase(Locale.ROOT) + ": "
                    + String.join(" / ", d.getMessage(Locale.ROOT).lines().map(String::strip).toList())
                    + (block == null ? "" : " (compiled as " + (block.unit() ? "a compilation unit" : block.members() ? "class members" : "a method body") + ")"));
        }
        if (!ok && errors.isEmpty()) {
            errors.add("javac failed without a diagnostic");
        }
        return errors;
    }

    private static JavaFileObject source(String className, String code) {
        return new SimpleJavaFileObject(URI.create("string:///" + className + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return code;
            }
        };
    }

    @Test
    void everyJavaBlockOfTheReadmeAndTheDocsCompiles() {
        assertTrue(blocks.stream().anyMatch(b -> b.page().equals("README.md")), "README.md has a Java block");
        assertTrue(blocks.stream().anyMatch(b -> b.page().equals("docs/shedlock.md")), "docs/shedlock.md has Java blocks");
        if (!compileErrors.isEmpty()) {
            fail(compileErrors.size() + " problem(s) in the Java blocks of the docs:\n" + String.join("\n", compileErrors));
        }
        assertTrue(blocks.stream().anyMatch(Block::runnable), "some blocks are marked runnable");
    }

    @Test
    void blocksAreTakenAsTheirReaderReadsThem() {
        assertTrue(declaresMembers("@Bean\nLockProvider lockProvider(Synchronizers s) {\n return null;\n}\n"));
        assertTrue(declaresMembers("class SharedBuffer {\n}\n"));
        assertTrue(declaresMembers("DistributedLock lock = s.lock(\"a\");\n\nint price(String sku) {\n return 1;\n}\n"));
        assertFalse(declaresMembers("try (LockHandle h = lock.acquire()) {\n}\n"));
        assertFalse(declaresMembers("lock.lock();\ntry { x(); } finally { lock.unlock(); }\n"));
        assertFalse(declaresMembers("if (a) { b(); } else if (c) { d(); }\n"));
        assertFalse(declaresMembers("registry.config().meterFilter(new MeterFilter() {\n @Override\n void f() { }\n});\n"));
        assertFalse(declaresMembers("String s = \"redis://host\"; // {\nx.thenAccept(h -> { try (h) { y(); } });\n"));
        assertEquals(List.of("a"), extract("p.md", "<!-- snippet: runnable -->\n```java\na\n```\n").stream()
                .filter(Block::runnable).map(b -> b.code().strip()).toList());
    }

    @TestFactory
    Stream<DynamicTest> runnableBlocksRunAgainstARealServer() {
        assertTrue(compileErrors.isEmpty(), "the blocks compile (see everyJavaBlockOfTheReadmeAndTheDocsCompiles)");
        server = RedisServers.start();
        List<String> errors = compile(server.uri());
        assertTrue(errors.isEmpty(), String.join("\n", errors));
        return blocks.stream().filter(Block::runnable).map(block -> DynamicTest.dynamicTest(block.where(), () -> run(block)));
    }

    private static void run(Block block) throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                DocSnippetsTest.class.getClassLoader());
                RedisSynchronizers client = RedisSynchronizers.create(server.uri())) {
            Class<?> reader = loader.loadClass("Reader");
            @SuppressWarnings("unchecked")
            Set<String> calls = (Set<String>) reader.getMethod("calls").invoke(null);
            calls.clear();
            Object snippet = loader.loadClass(block.className()).getDeclaredConstructor().newInstance();
            reader.getMethod("bind", Synchronizers.class).invoke(snippet, client);
            Future<?> ran = thread.submit(() -> {
                try {
                    snippet.getClass().getMethod("snippet").invoke(snippet);
                } catch (InvocationTargetException e) {
                    throw new AssertionError(block.where() + " threw " + e.getCause(), e.getCause());
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
                return null;
            });
            try {
                ran.get(2, TimeUnit.MINUTES);   // a hang guard only
            } catch (ExecutionException e) {
                throw e.getCause() instanceof AssertionError a ? a : new AssertionError(block.where(), e.getCause());
            } catch (TimeoutException e) {
                ran.cancel(true);
                fail(block.where() + " did not return");
            }
            Set<String> named = new TreeSet<>();
            Matcher action = ACTION.matcher(withoutCommentsAndLiterals(block.code()));
            while (action.find()) {
                named.add(action.group(1));
            }
            Set<String> notDone = new TreeSet<>(named);
            notDone.removeAll(calls);
            assertTrue(notDone.isEmpty(), block.where() + ": returned before it did " + notDone
                    + " (done: " + new TreeSet<>(calls) + ")");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            thread.shutdownNow();
        }
    }
}
