package dev.synchronizers.jmh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The summary of a fleet run ({@code jmh/bench.sh fleet}): for every benchmark, implementation and
 * number of client instances, JMH's score from its JSON results and, from the run's log, the means
 * over the measured iterations of the {@code REDIS-STATS} line (script calls, commands, socket
 * reads and Redis CPU microseconds per operation) and of the {@code SHARES} line (Jain's index),
 * with the lowest {@code minShare} of those iterations. Prints the table and writes it as
 * tab-separated values, the input of {@link FleetChart}.
 *
 * <pre>java -cp jmh/target/benchmarks.jar dev.synchronizers.jmh.FleetReport jmh/results/fleet.tsv jmh/results/fleet-c*.json jmh/results/fleet-c*.log</pre>
 *
 * <p>Only results with a {@code clients} parameter count; a {@code .json} argument is read as JMH
 * JSON, any other as a log. Like {@link BenchChart} it reads JSON with patterns rather than a
 * JSON library.
 */
public final class FleetReport {

    /** The columns of the TSV file, in order; {@link FleetChart} reads them by name. */
    static final List<String> COLUMNS = List.of("benchmark", "impl", "clients", "threads", "opsPerSec", "opsPerSecError",
            "scriptCallsPerOp", "commandsPerOp", "readsPerOp", "redisCpuUsPerOp", "jain", "minShare", "iterations");

    private static final Pattern BENCHMARK = Pattern.compile("\"benchmark\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern THREADS = Pattern.compile("\"threads\"\\s*:\\s*(\\d+)");
    private static final Pattern PARAMS = Pattern.compile("\"params\"\\s*:\\s*\\{([^}]*)}");
    private static final Pattern PARAM = Pattern.compile("\"([^\"]+)\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern SCORE = Pattern.compile(
            "\"primaryMetric\"\\s*:\\s*\\{\\s*\"score\"\\s*:\\s*([0-9.eE+-]+|\"NaN\")\\s*,\\s*\"scoreError\"\\s*:\\s*([0-9.eE+-]+|\"NaN\")");
    private static final Pattern LINE = Pattern.compile("(REDIS-STATS|SHARES) (.*\\(measurement\\).*)");

    private FleetReport() {
    }

    /** One row: a benchmark method, an implementation, a number of client instances. */
    static final class Row {
        final String benchmark;
        final String impl;
        final int clients;
        int threads;
        double score = Double.NaN;
        double error = Double.NaN;
        final Map<String, List<Double>> stats = new HashMap<>();
        double minShare = Double.NaN;

        Row(String benchmark, String impl, int clients) {
            this.benchmark = benchmark;
            this.impl = impl;
            this.clients = clients;
        }

        double mean(String stat) {
            List<Double> values = stats.getOrDefault(stat, List.of());
            return values.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        }

        int iterations() {
            return stats.getOrDefault("jain", List.of()).size();
        }
    }

    /**
     * Writes the TSV and prints the table.
     *
     * @param args the TSV file to write, then the JMH JSON files and logs of the run
     * @throws IOException if a file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: FleetReport <fleet.tsv> <result.json|run.log>...");
            System.exit(2);
        }
        Map<String, Row> rows = new TreeMap<>();
        for (int i = 1; i < args.length; i++) {
            String text = Files.readString(Path.of(args[i]));
            if (args[i].endsWith(".json")) {
                readJson(text, rows);
            } else {
                readLog(text, rows);
            }
        }
        List<Row> sorted = new ArrayList<>(rows.values());
        sorted.sort((a, b) -> a.benchmark.equals(b.benchmark)
                ? a.impl.equals(b.impl) ? Integer.compare(a.clients, b.clients) : a.impl.compareTo(b.impl)
                : a.benchmark.compareTo(b.benchmark));
        Files.writeString(Path.of(args[0]), tsv(sorted));
        System.out.print(table(sorted));
        System.out.println("wrote " + args[0] + " (" + sorted.size() + " rows)");
    }

    private static String key(String benchmark, String impl, int clients) {
        return benchmark + " " + impl + " " + clients;
    }

    /** Reads JMH's JSON: benchmark, threads, the impl and clients parameters, score and its error. */
    static void readJson(String json, Map<String, Row> rows) {
        // Split per result object so that a match cannot run from one result into the next.
        for (String result : json.split("\"jmhVersion\"")) {
            Matcher benchmark = BENCHMARK.matcher(result);
            Matcher params = PARAMS.matcher(result);
            Matcher score = SCORE.matcher(result);
            Matcher threads = THREADS.matcher(result);
            if (!benchmark.find() || !params.find() || !score.find() || !threads.find()) {
                continue;
            }
            Map<String, String> values = new LinkedHashMap<>();
            Matcher param = PARAM.matcher(params.group(1));
            while (param.find()) {
                values.put(param.group(1), param.group(2));
            }
            if (!values.containsKey("clients") || !values.containsKey("impl")) {
                continue;
            }
            String name = benchmark.group(1).substring(benchmark.group(1).lastIndexOf('.',
                    benchmark.group(1).lastIndexOf('.') - 1) + 1);
            int clients = Integer.parseInt(values.get("clients"));
            Row row = rows.computeIfAbsent(key(name, values.get("impl"), clients),
                    k -> new Row(name, values.get("impl"), clients));
            row.threads = Integer.parseInt(threads.group(1));
            row.score = number(score.group(1));
            row.error = number(score.group(2));
        }
    }

    /** Reads the measured iterations' {@code REDIS-STATS} and {@code SHARES} lines that name their clients. */
    static void readLog(String log, Map<String, Row> rows) {
        for (String line : log.split("\r?\n")) {
            Matcher m = LINE.matcher(line);
            if (!m.find()) {
                continue;
            }
            Map<String, String> fields = new HashMap<>();
            for (String token : m.group(2).split(" ")) {
                int eq = token.indexOf('=');
                if (eq > 0) {
                    fields.put(token.substring(0, eq), token.substring(eq + 1));
                }
            }
            if (!fields.containsKey("clients") || !fields.containsKey("bench") || fields.containsKey("node")) {
                continue;
            }
            int clients = Integer.parseInt(fields.get("clients"));
            Row row = rows.computeIfAbsent(key(fields.get("bench"), fields.get("impl"), clients),
                    k -> new Row(fields.get("bench"), fields.get("impl"), clients));
            row.threads = Integer.parseInt(fields.get("threads"));
            List<String> stats = m.group(1).equals("SHARES") ? List.of("jain")
                    : List.of("scriptCalls/op", "commands/op", "reads/op", "redisCpuUs/op");
            for (String stat : stats) {
                if (fields.containsKey(stat)) {
                    row.stats.computeIfAbsent(stat, s -> new ArrayList<>()).add(number(fields.get(stat)));
                }
            }
            if (fields.containsKey("minShare")) {
                double share = number(fields.get("minShare"));
                row.minShare = Double.isNaN(row.minShare) ? share : Math.min(row.minShare, share);
            }
        }
    }

    private static double number(String text) {
        return text.contains("NaN") ? Double.NaN : Double.parseDouble(text);
    }

    static String tsv(List<Row> rows) {
        StringBuilder out = new StringBuilder(String.join("\t", COLUMNS)).append('\n');
        for (Row r : rows) {
            out.append(String.join("\t", r.benchmark, r.impl, Integer.toString(r.clients), Integer.toString(r.threads),
                    format("%.1f", r.score), format("%.1f", r.error), format("%.3f", r.mean("scriptCalls/op")),
                    format("%.3f", r.mean("commands/op")), format("%.3f", r.mean("reads/op")),
                    format("%.1f", r.mean("redisCpuUs/op")), format("%.4f", r.mean("jain")), format("%.3f", r.minShare),
                    Integer.toString(r.iterations()))).append('\n');
        }
        return out.toString();
    }

    static String table(List<Row> rows) {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "%-45s %-20s %7s %10s %8s %15s %14s %6s %8s%n",
                "benchmark", "impl", "clients", "ops/s", "±", "scriptCalls/op", "redisCpuUs/op", "jain", "minShare"));
        for (Row r : rows) {
            out.append(String.format(Locale.ROOT, "%-45s %-20s %7d %10.0f %8.0f %15.2f %14.1f %6.3f %8.3f%n",
                    r.benchmark, r.impl, r.clients, r.score, r.error, r.mean("scriptCalls/op"), r.mean("redisCpuUs/op"),
                    r.mean("jain"), r.minShare));
        }
        return out.toString();
    }

    private static String format(String pattern, double value) {
        return Double.isNaN(value) ? "NaN" : String.format(Locale.ROOT, pattern, value);
    }
}
