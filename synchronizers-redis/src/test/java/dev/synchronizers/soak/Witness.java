package dev.synchronizers.soak;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The soak's referee: a second Redis server, never stalled and never behind the fault proxy,
 * that sees every critical section and every fenced write, so that overlaps are caught without
 * comparing clocks of different JVMs.
 *
 * <p>A worker that acquired something {@link #enter}s its critical section before doing its work
 * and {@link #exit}s it before releasing. The server keeps, per synchronizer, who is inside with
 * what weight (1 for a lock or a read hold; the limit for a write hold; the permits for a
 * semaphore); an entrant that brings the sum above the limit appends an overlap record naming
 * everyone inside. Whether that overlap is a violation is decided later, from the histories:
 * it is allowed only if lost-hold signals cover the excess (see {@link HistoryChecker}).
 *
 * <p>Fenced writes model the store a fencing token protects: a write under an exclusive hold is
 * accepted only with a token above every token accepted before for that name, a write under a read
 * hold only above the last exclusive one; a refused write is recorded. Every record carries this
 * server's own {@code TIME}, one clock for all JVMs.
 *
 * <p>Thread-safe: one Lettuce connection, shared.
 */
final class Witness implements AutoCloseable {

    /** Where overlap records go: {@code <millis> <inside key> <limit> <sum> <entrant> <member>=<weight>,...}. */
    static final String OVERLAPS = "soak:overlaps";
    /**
     * Where refused fenced writes go:
     * {@code <millis> <fence key> <member> <token> <x|s> <enter|exit> <highest accepted> <last exclusive>}.
     */
    static final String REFUSALS = "soak:refusals";
    private static final String STOP = "soak:stop";

    private static final String ENTER = """
            local inside, overlaps = KEYS[1], KEYS[2]
            local member, weight, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
            redis.call('HSET', inside, member, weight)
            local all = redis.call('HGETALL', inside)
            local sum, members = 0, {}
            for i = 1, #all, 2 do
              sum = sum + tonumber(all[i + 1])
              members[#members + 1] = all[i] .. '=' .. all[i + 1]
            end
            if sum > limit then
              local now = redis.call('TIME')
              local millis = string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
              redis.call('RPUSH', overlaps, table.concat({millis, inside, ARGV[3], string.format('%d', sum),
                  member, table.concat(members, ',')}, ' '))
            end
            return sum
            """;

    private static final String FENCE = """
            local fence, refusals = KEYS[1], KEYS[2]
            local token_text, mode, phase, member = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
            local token = tonumber(token_text)
            local any_text = redis.call('HGET', fence, 'any') or '0'
            local write_text = redis.call('HGET', fence, 'write') or '0'
            local any, write = tonumber(any_text), tonumber(write_text)
            local ok
            if mode == 'x' then
              if phase == 'enter' then ok = token > any else ok = token >= any end
              if ok then redis.call('HSET', fence, 'any', token_text, 'write', token_text) end
            else
              ok = token > write
              if ok and token > any then redis.call('HSET', fence, 'any', token_text) end
            end
            if ok then return 1 end
            local now = redis.call('TIME')
            local millis = string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
            redis.call('RPUSH', refusals, table.concat({millis, fence, member, token_text, mode, phase,
                any_text, write_text}, ' '))
            return 0
            """;

    private static final String FORGET = """
            local removed = 0
            for _, inside in ipairs(KEYS) do
              for _, member in ipairs(redis.call('HKEYS', inside)) do
                if string.sub(member, 1, #ARGV[1]) == ARGV[1] then
                  redis.call('HDEL', inside, member)
                  removed = removed + 1
                end
              end
            end
            return removed
            """;

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;

    private Witness(RedisClient client, StatefulRedisConnection<String, String> connection) {
        this.client = client;
        this.connection = connection;
        this.redis = connection.sync();
    }

    /** Connects to the referee server at {@code uri}, as the client named {@code clientName}. */
    static Witness connect(String uri, String clientName) {
        RedisURI parsed = RedisURI.create(uri);
        parsed.setTimeout(Duration.ofSeconds(10));
        parsed.setClientName(clientName);
        RedisClient client = RedisClient.create(parsed);
        try {
            return new Witness(client, client.connect(StringCodec.UTF8));
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    /** The key that counts who is inside the critical sections of one synchronizer. */
    static String insideKey(String synchronizer) {
        return "soak:inside:{" + synchronizer + "}";
    }

    /** The key of the fenced store of one lock (both halves of a read-write lock share one). */
    static String fenceKey(String synchronizer) {
        return "soak:fence:{" + synchronizer + "}";
    }

    /** Records {@code member} inside with {@code weight}; returns the weight now inside. */
    long enter(String insideKey, String member, int weight, int limit) {
        return redis.eval(ENTER, ScriptOutputType.INTEGER, new String[] {insideKey, OVERLAPS}, member,
                Integer.toString(weight), Integer.toString(limit));
    }

    /** Records that {@code member} left. */
    void exit(String insideKey, String member) {
        redis.hdel(insideKey, member);
    }

    /**
     * Writes to the fenced store of {@code fenceKey} under {@code token}; returns whether the
     * store accepted it.
     *
     * @param exclusive whether the hold excludes everyone (a lock or a write hold)
     * @param phase {@code "enter"} or {@code "exit"}: at the start or the end of the work
     */
    boolean fence(String fenceKey, long token, boolean exclusive, String phase, String member) {
        long accepted = redis.eval(FENCE, ScriptOutputType.INTEGER, new String[] {fenceKey, REFUSALS},
                Long.toString(token), exclusive ? "x" : "s", phase, member);
        return accepted == 1L;
    }

    /**
     * Removes every member whose id starts with {@code prefix} from {@code insideKeys}: a killed
     * JVM is inside nothing. Returns how many were removed.
     */
    long forget(String prefix, List<String> insideKeys) {
        return redis.eval(FORGET, ScriptOutputType.INTEGER, insideKeys.toArray(new String[0]), prefix);
    }

    /**
     * Waits until the server has closed the connection of the client named {@code clientName}:
     * everything a killed worker had sent has run by then, so nothing of it can follow a
     * {@link #forget}.
     *
     * @throws IllegalStateException if it is still connected after ten seconds
     */
    void awaitDisconnected(String clientName) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (redis.clientList().lines().anyMatch(line -> line.contains(" name=" + clientName + " "))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(clientName + " is still connected to the witness 10 s after its JVM died");
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }

    /** Returns this server's clock, in milliseconds since the epoch. */
    long millis() {
        List<String> time = redis.time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }

    /** Tells every worker to stop after its current operation. */
    void requestStop() {
        redis.set(STOP, "1");
    }

    /** Returns whether the workers were told to stop. */
    boolean stopRequested() {
        return redis.exists(STOP) == 1L;
    }

    /** Returns every record of {@code list} ({@link #OVERLAPS} or {@link #REFUSALS}). */
    List<String> records(String list) {
        return redis.lrange(list, 0, -1);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
