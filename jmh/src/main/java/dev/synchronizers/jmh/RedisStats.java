package dev.synchronizers.jmh;

import dev.synchronizers.testkit.RedisServer;
import java.math.BigDecimal;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What a Redis server has done so far, from {@code INFO commandstats}, {@code INFO stats} and
 * {@code INFO cpu}; the difference of two snapshots divided by the benchmark operations in between
 * gives the cost of one operation in Redis work.
 *
 * <p>Redis 7 counts a command that a script runs with {@code redis.call} in its own {@code
 * cmdstat_} line as well as the script call itself, so {@link #commands()} includes the commands
 * inside scripts, and {@link #scriptCalls()} counts the top-level script calls alone.
 *
 * @param scriptCalls top-level {@code EVAL}, {@code EVALSHA}, their {@code _RO} forms and {@code FCALL}s
 * @param commands every command, including those run inside scripts, except the bookkeeping
 *     commands in {@link #IGNORED} (the snapshots' own {@code INFO}, client set-up, health checks)
 * @param reads {@code total_reads_processed}: socket reads, roughly the number of client round trips
 * @param cpuMicros {@code used_cpu_sys} + {@code used_cpu_user} in microseconds: the CPU time the
 *     {@code redis-server} process has used (all its threads), including the snapshots' own {@code INFO}s
 * @param calls the calls of each counted command, e.g. {@code "set"} or {@code "script|load"}
 */
record RedisStats(long scriptCalls, long commands, long reads, long cpuMicros, Map<String, Long> calls) {

    /**
     * Commands that no synchronizer sends; their subcommands ({@code client|setname}) too. {@code
     * PUBSUB} is the latch benchmark's own probe for a subscribed waiter.
     */
    static final Set<String> IGNORED = Set.of("info", "config", "client", "hello", "ping", "pubsub");
    private static final Set<String> SCRIPT_CALLS =
            Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro");

    /** Takes a snapshot over three fresh connections of the testkit. */
    static RedisStats of(RedisServer server) {
        return parse(server.info("commandstats"), server.info("stats"), server.info("cpu"));
    }

    /**
     * Reads a snapshot from the replies of {@code INFO commandstats}, {@code INFO stats} and {@code
     * INFO cpu}; an empty {@code stats} or {@code cpu} gives {@code reads} or {@code cpuMicros} 0,
     * for a probe that wants the commands alone.
     */
    static RedisStats parse(String commandstats, String stats, String cpu) {
        long scriptCalls = 0;
        long commands = 0;
        Map<String, Long> calls = new TreeMap<>();
        for (String line : commandstats.split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            int colon = line.indexOf(':');
            String command = line.substring("cmdstat_".length(), colon);
            int bar = command.indexOf('|');
            String base = bar < 0 ? command : command.substring(0, bar);
            if (IGNORED.contains(base)) {
                continue;
            }
            long count = field(line.substring(colon + 1), "calls");
            calls.put(command, count);
            commands += count;
            if (SCRIPT_CALLS.contains(base)) {
                scriptCalls += count;
            }
        }
        long reads = 0;
        for (String line : stats.split("\r?\n")) {
            if (line.startsWith("total_reads_processed:")) {
                reads = Long.parseLong(line.substring("total_reads_processed:".length()).trim());
            }
        }
        long cpuMicros = 0;
        for (String line : cpu.split("\r?\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                // Seconds with six decimals, e.g. "used_cpu_user:1.234567".
                cpuMicros += new BigDecimal(line.substring(line.indexOf(':') + 1).trim()).movePointRight(6).longValue();
            }
        }
        return new RedisStats(scriptCalls, commands, reads, cpuMicros, Map.copyOf(calls));
    }

    /**
     * Returns the line that the benchmarks print per iteration: {@code REDIS-STATS impl=... ops=...
     * scriptCalls/op=... commands/op=... reads/op=... redisCpuUs/op=...} and then where it comes
     * from; {@code redisCpuUs/op} is the microseconds of {@code redis-server} CPU time (user and
     * system) per operation.
     *
     * @param ownReads socket reads caused by the benchmark's own probe commands, not by the
     *     implementation under test: one per probe command, subtracted from {@code reads}
     */
    String perOperation(RedisStats before, String impl, long ops, long ownReads, String where) {
        return String.format(Locale.ROOT,
                "REDIS-STATS impl=%s ops=%d scriptCalls/op=%.2f commands/op=%.2f reads/op=%.2f redisCpuUs/op=%.1f %s",
                impl, ops, ratio(scriptCalls - before.scriptCalls, ops), ratio(commands - before.commands, ops),
                ratio(reads - before.reads - ownReads, ops), ratio(cpuMicros - before.cpuMicros, ops), where);
    }

    /**
     * Returns the per-operation breakdown by command, most frequent first, for the line {@code
     * REDIS-COMMANDS impl=... evalsha/op=... set/op=... ...}: which commands make up {@code commands/op}.
     */
    String breakdown(RedisStats before, String impl, long ops) {
        return "REDIS-COMMANDS impl=" + impl + " " + calls.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.calls.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                .map(e -> String.format(Locale.ROOT, "%s/op=%.2f", e.getKey(), ratio(e.getValue(), ops)))
                .collect(Collectors.joining(" "));
    }

    private static double ratio(long count, long ops) {
        return ops == 0 ? Double.NaN : (double) count / ops;
    }

    /** Reads {@code name=value} from {@code calls=3,usec=10,...}. */
    private static long field(String fields, String name) {
        for (String pair : fields.split(",")) {
            if (pair.startsWith(name + "=")) {
                return Long.parseLong(pair.substring(name.length() + 1));
            }
        }
        return 0;
    }
}
