package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.fixture.RedisState;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.junit.jupiter.api.TestInfo;

/**
 * What the {@code *LuaTest} classes share: one client on the fixture's server, plain commands to
 * set up and inspect keys, a {@link ScriptRegistry} to run the scripts, and key names unique to
 * each test.
 */
final class LuaHarness implements AutoCloseable {

    /**
     * How long to wait for a reply or a message before calling the test broken. It only ends a
     * hung test; no test passes or fails on how long something took.
     */
    static final long PATIENCE_SECONDS = 30;

    /** A lease no test outlives, so a key set with it cannot expire during the test. */
    static final long LONG_LEASE_MS = 600_000;

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    final RedisCommands<String, String> redis;
    final ScriptRegistry scripts;

    private LuaHarness(String uri) {
        client = RedisClient.create(uri);
        connection = client.connect(StringCodec.UTF8);
        redis = connection.sync();
        scripts = new ScriptRegistry(connection.async());
    }

    static LuaHarness connect(String uri) {
        return new LuaHarness(uri);
    }

    /**
     * Returns a key-name base unique to this test method and run, with the test in a hash tag as
     * {@code LockKeys} does, e.g. {@code test:lock:{LockReleaseLuaTest.release_x:1f2e3d4c}}.
     */
    static String uniqueName(TestInfo test) {
        String method = test.getTestMethod().map(Method::getName).orElse("test");
        String clazz = test.getTestClass().map(Class::getSimpleName).orElse("Test");
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        return "test:lock:{" + clazz + "." + method + ":" + suffix + "}";
    }

    /** Runs a script and waits for its reply. */
    <T> T run(Script script, String[] keys, String... args)
            throws InterruptedException, ExecutionException, TimeoutException {
        return scripts.<T>run(script, keys, args).toCompletableFuture().get(PATIENCE_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * Runs a batched script: its keys are {@code keysOfItem} of each item in turn, its arguments
     * {@code leaseMs} followed by {@code itemArgs}.
     */
    <T> T runBatch(Script script, String[] items, Function<String, String[]> keysOfItem, long leaseMs,
            String... itemArgs) throws InterruptedException, ExecutionException, TimeoutException {
        List<String> keys = new ArrayList<>();
        for (String item : items) {
            keys.addAll(List.of(keysOfItem.apply(item)));
        }
        String[] args = new String[itemArgs.length + 1];
        args[0] = Long.toString(leaseMs);
        System.arraycopy(itemArgs, 0, args, 1, itemArgs.length);
        return run(script, keys.toArray(String[]::new), args);
    }

    /** Runs a script that must fail, and returns the client's exception. */
    Throwable failure(Script script, String[] keys, String... args) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> run(script, keys, args),
                () -> script.file + " should have failed");
        return e.getCause();
    }

    /** Returns the server's clock in microseconds, as the scripts read it (TIME). */
    long serverMicros() {
        List<String> time = redis.time();
        return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
    }

    /** Returns the server's clock in milliseconds, as the scripts compute it from TIME (rounded down). */
    long serverMillis() {
        return serverMicros() / 1_000;
    }

    /** A lease or place end no test reaches: the server's time now plus {@link #LONG_LEASE_MS}. */
    long farEnd() {
        return serverMillis() + LONG_LEASE_MS;
    }

    /**
     * Asserts that a key's time to live is what setting it to {@code ttlMs} at a server time no
     * earlier than {@code sinceMs} leaves now: at most {@code ttlMs}, and at least {@code ttlMs}
     * less the server time that has passed since {@code sinceMs} (read after the PTTL). The bounds
     * come from the server's clock, not from a guessed slack.
     */
    void assertTtlSetSince(String key, long ttlMs, long sinceMs) {
        long pttl = redis.pttl(key);
        long elapsed = serverMillis() - sinceMs;
        assertTrue(pttl >= ttlMs - elapsed && pttl <= ttlMs,
                () -> key + " PTTL " + pttl + ", expected " + ttlMs + " less at most " + elapsed + " ms");
    }

    /**
     * Asserts that a key has a time to live of at most {@code ttlMs}: it was neither removed, nor
     * made persistent, nor given a longer one.
     */
    void assertTtlAtMost(String key, long ttlMs) {
        long pttl = redis.pttl(key);
        assertTrue(pttl > 0 && pttl <= ttlMs, () -> key + " PTTL " + pttl + ", expected within (0, " + ttlMs + "]");
    }

    /** Asserts that a zset member's score, a lease or place end, lies in {@code [fromMs, toMs]}. */
    void assertEndWithin(String zset, String member, long fromMs, long toMs) {
        Double end = redis.zscore(zset, member);
        assertTrue(end != null && end >= fromMs && end <= toMs,
                () -> member + " in " + zset + " ends at " + end + ", expected within [" + fromMs + ", " + toMs + "]");
    }

    /** What a test does while subscribed, e.g. run a script and check its reply. */
    @FunctionalInterface
    interface Action {
        void run() throws Exception;
    }

    /**
     * Runs {@code action} while subscribed to {@code channel}, then asserts that exactly
     * {@code messages} were published on the channel, in this order, and nothing more.
     */
    void assertPublishes(String channel, Action action, String... messages) throws Exception {
        try (Subscription subscription = subscribe(channel)) {
            action.run();
            for (int i = 0; i < messages.length; i++) {
                int index = i;
                assertEquals(messages[i], subscription.next(), () -> "message " + index + " on " + channel);
            }
            subscription.assertNothingMore(redis);
        }
    }

    /**
     * Runs {@code action} while subscribed to every channel of {@code expected}, each on a
     * connection of its own, then asserts that each channel got exactly its messages, in order,
     * and nothing more. A channel mapped to an empty list must get nothing.
     */
    void assertPublishes(Map<String, List<String>> expected, Action action) throws Exception {
        List<Subscription> subscriptions = new ArrayList<>();
        try {
            for (String channel : expected.keySet()) {
                subscriptions.add(subscribe(channel));
            }
            action.run();
            int i = 0;
            for (Map.Entry<String, List<String>> channel : expected.entrySet()) {
                Subscription subscription = subscriptions.get(i++);
                List<String> messages = channel.getValue();
                for (int m = 0; m < messages.size(); m++) {
                    int index = m;
                    assertEquals(messages.get(m), subscription.next(),
                            () -> "message " + index + " on " + channel.getKey());
                }
                subscription.assertNothingMore(redis);
            }
        } finally {
            subscriptions.forEach(Subscription::close);
        }
    }

    /**
     * The client of a waiter or an owner as the scripts read it: the part before its first
     * {@code ':'}, or the whole string if it has none.
     */
    static String clientOf(String waiter) {
        int colon = waiter.indexOf(':');
        return colon < 0 ? waiter : waiter.substring(0, colon);
    }

    /** The channel the client of {@code waiter} hears what names it on: {@code '<wakeups>:<client>'}. */
    static String clientChannel(String wakeups, String waiter) {
        return wakeups + ":" + clientOf(waiter);
    }

    /**
     * Runs {@code action} while subscribed to the shared channel {@code wakeups} and to the client
     * channel ({@link #clientChannel}) of every waiter that {@code toClients} names or
     * {@code quiet} lists, each on a connection of its own, then asserts that the shared channel
     * got exactly {@code onShared}, that each message of {@code toClients} (a waiter's name, or
     * {@code 'granted:<waiter>'}) went to the channel of the client of the waiter it names, in the
     * order given, and that nothing else went to any of these channels: a message naming one
     * waiter reaches that waiter's client alone.
     */
    void assertTellsClients(String wakeups, Action action, List<String> onShared, List<String> toClients,
            String... quiet) throws Exception {
        Map<String, List<String>> expected = new LinkedHashMap<>();
        expected.put(wakeups, onShared);
        for (String message : toClients) {
            String waiter = message.startsWith("granted:") ? message.substring("granted:".length()) : message;
            expected.computeIfAbsent(clientChannel(wakeups, waiter), channel -> new ArrayList<>()).add(message);
        }
        for (String waiter : quiet) {
            expected.putIfAbsent(clientChannel(wakeups, waiter), List.of());
        }
        assertPublishes(expected, action);
    }

    /**
     * Subscribes a new Pub/Sub connection to a channel and returns once the server has confirmed
     * the subscription. Every message on the channel lands in the returned subscription's queue.
     */
    Subscription subscribe(String channel) {
        return new Subscription(client.connectPubSub(StringCodec.UTF8), channel, RedisState.shardedPubSub(redis));
    }

    /** Messages of one channel, in the order the server sent them. */
    static final class Subscription implements AutoCloseable {

        private final StatefulRedisPubSubConnection<String, String> connection;
        private final BlockingQueue<String> messages = new LinkedBlockingQueue<>();
        private final String channel;

        /** Subscribes with SSUBSCRIBE if {@code sharded} (Redis 7 and later: the scripts SPUBLISH), else SUBSCRIBE. */
        private Subscription(StatefulRedisPubSubConnection<String, String> connection, String channel, boolean sharded) {
            this.connection = connection;
            this.channel = channel;
            connection.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String from, String message) {
                    if (from.equals(channel)) {
                        messages.add(message);
                    }
                }

                @Override
                public void smessage(String from, String message) {
                    message(from, message);
                }
            });
            if (sharded) {
                connection.sync().ssubscribe(channel);
            } else {
                connection.sync().subscribe(channel);
            }
        }

        /**
         * Returns the next message, waiting for it.
         *
         * @throws AssertionError if none arrives within {@link #PATIENCE_SECONDS}
         */
        String next() throws InterruptedException {
            String message = messages.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
            if (message == null) {
                throw new AssertionError("no message within " + PATIENCE_SECONDS + " s");
            }
            return message;
        }

        /**
         * Asserts that nothing more was published on the channel so far: publishes a sentinel
         * through {@code redis} and expects it as the next message. Pub/Sub keeps order, so
         * anything a script published before would come first.
         */
        void assertNothingMore(RedisCommands<String, String> redis) throws InterruptedException {
            RedisState.publish(redis, channel, "sentinel");
            assertEquals("sentinel", next(), "a message was published before the sentinel");
        }

        @Override
        public void close() {
            connection.close();
        }
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
