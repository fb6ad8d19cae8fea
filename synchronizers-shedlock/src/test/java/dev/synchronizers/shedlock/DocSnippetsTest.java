package dev.synchronizers.shedlock;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java snippets of docs/shedlock.md compile: each is a class member, compiled inside a class
 * that imports what the page's readers have on their class path (Spring, ShedLock, this module)
 * and declares the names a snippet leaves to its reader ({@code store}, {@code buildReport()}).
 */
class DocSnippetsTest {

    private static final String IMPORTS = """
            import dev.synchronizers.Synchronizers;
            import dev.synchronizers.shedlock.SynchronizersLockProvider;
            import net.javacrumbs.shedlock.core.LockProvider;
            import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
            import org.springframework.context.annotation.Bean;
            import org.springframework.scheduling.annotation.Scheduled;
            """;

    /** What the snippets leave to the reader: a report and a store that checks fencing tokens. */
    private static final String READER_PROVIDES = """
                record Report() { }
                interface ReportStore { void write(Report report, long fencingToken); }
                ReportStore store;
                Report buildReport() { return new Report(); }
            """;

    @Test
    void shedlockPage_everyJavaSnippetCompiles(@TempDir Path out) throws IOException {
        String page = Files.readString(Path.of("..", "docs", "shedlock.md"), StandardCharsets.UTF_8);
        Matcher block = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(page);
        List<JavaFileObject> sources = new ArrayList<>();
        while (block.find()) {
            String name = "Snippet" + sources.size();
            String code = IMPORTS + "class " + name + " {\n" + READER_PROVIDES + block.group(1) + "}\n";
            sources.add(new SimpleJavaFileObject(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return code;
                }
            });
        }
        assertFalse(sources.isEmpty(), "docs/shedlock.md has Java snippets");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        boolean compiled = javac.getTask(errors, null, null,
                List.of("-classpath", System.getProperty("java.class.path"), "-d", out.toString(), "-proc:none"),
                null, sources).call();
        assertTrue(compiled, errors.toString());
    }
}
