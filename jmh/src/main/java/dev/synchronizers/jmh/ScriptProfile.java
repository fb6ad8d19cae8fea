package dev.synchronizers.jmh;

import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where a semaphore's script time goes in Redis: runs {@code acquire()} + {@code release()} from
 * several client instances (one thread each, 4 permits) against a throwaway {@code redis-server}
 * for a few seconds, then reads {@code INFO commandstats}, whose {@code usec} Redis 7 counts for
 * every command, those run inside a script included. Prints, per operation, each command's calls
 * and microseconds, and splits the script calls' time into the commands they ran and the rest (the
 * script's own Lua, argument handling, replication of its effects): what a leaner script could save.
 *
 * <pre>java -cp jmh/target/benchmarks.jar dev.synchronizers.jmh.ScriptProfile [impl] [clients] [seconds]</pre>
 *
 * <p>{@code impl} is a {@link SemaphoreImpl} ({@code SYNCHRONIZERS} by default); {@code clients}
 * 2 and {@code seconds} 10 by default. The times are the server's own accounting, so they leave out
 * the network and event-loop work that {@code redisCpuUs/op} of the benchmarks includes.
 */
public final class ScriptProfile {

    private ScriptProfile() {
    }

    /**
     * Runs the profile and prints it.
     *
     * @param args the implementation, the number of client instances and the seconds to run
     * @throws Exception if a client fails
     */
    public static void main(String[] args) throws Exception {
        SemaphoreImpl impl = SemaphoreImpl.valueOf(args.length > 0 ? args[0] : "SYNCHRONIZERS");
        int clients = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        long seconds = args.length > 2 ? Long.parseLong(args[2]) : 10;
        try (RedisServer server = RedisServers.start()) {
            List<BenchSemaphore> semaphores = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                semaphores.add(impl.open(server.uri(), "profile"));
            }
            semaphores.get(0).trySetPermits(4);
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicLong operations = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (BenchSemaphore semaphore : semaphores) {
                Thread thread = new Thread(() -> {
                    try {
                        while (running.get()) {
                            semaphore.acquire();
                            semaphore.release();
                            operations.incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                thread.start();
                threads.add(thread);
            }
            Thread.sleep(1000);   // warm-up: scripts loaded, keys in their steady state
            Map<String, long[]> before = parse(server.info("commandstats"));
            long start = operations.get();
            Thread.sleep(seconds * 1000);
            Map<String, long[]> after = parse(server.info("commandstats"));
            long ops = operations.get() - start;
            running.set(false);
            for (Thread thread : threads) {
                thread.join();
            }
            semaphores.forEach(BenchSemaphore::close);
            after.forEach((command, value) -> {
                long[] earlier = before.getOrDefault(command, new long[2]);
                value[0] -= earlier[0];
                value[1] -= earlier[1];
            });
            print(impl, clients, ops, after);
        }
    }

    /** command -> {calls, usec}, from {@code INFO commandstats}, without the bookkeeping commands. */
    private static Map<String, long[]> parse(String commandstats) {
        Map<String, long[]> byCommand = new TreeMap<>();
        for (String line : commandstats.split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String command = line.substring("cmdstat_".length(), line.indexOf(':'));
            if (RedisStats.IGNORED.contains(command.split("\\|")[0])) {
                continue;
            }
            long calls = 0;
            long usec = 0;
            for (String pair : line.substring(line.indexOf(':') + 1).split(",")) {
                if (pair.startsWith("calls=")) {
                    calls = Long.parseLong(pair.substring("calls=".length()));
                } else if (pair.startsWith("usec=")) {
                    usec = Long.parseLong(pair.substring("usec=".length()));
                }
            }
            byCommand.put(command, new long[] {calls, usec});
        }
        return byCommand;
    }

    private static void print(SemaphoreImpl impl, int clients, long ops, Map<String, long[]> byCommand) {
        long scripts = 0;
        long inner = 0;
        System.out.printf("ScriptProfile impl=%s clients=%d ops=%d%n", impl, clients, ops);
        System.out.printf("%-16s %10s %10s%n", "command", "calls/op", "usec/op");
        for (Map.Entry<String, long[]> entry : byCommand.entrySet()) {
            long[] value = entry.getValue();
            if (value[0] == 0) {
                continue;
            }
            System.out.printf("%-16s %10.2f %10.2f%n", entry.getKey(), (double) value[0] / ops, (double) value[1] / ops);
            if (entry.getKey().startsWith("eval") || entry.getKey().startsWith("fcall")) {
                scripts += value[1];
            } else {
                inner += value[1];
            }
        }
        System.out.printf("script calls' time per op: %.2f us, of which commands inside them (and any sent"
                + " outside, e.g. PUBLISH by the client) %.2f us, the rest (Lua, replication of effects) %.2f us%n",
                (double) scripts / ops, (double) inner / ops, (double) (scripts - inner) / ops);
    }
}
