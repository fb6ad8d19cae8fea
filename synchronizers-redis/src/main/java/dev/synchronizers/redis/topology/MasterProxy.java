package dev.synchronizers.redis.topology;

import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.Supplier;

/**
 * Asynchronous commands that follow the master: each command goes, when it is sent, over the
 * connection a supplier picks of whichever master is current then, so a {@link SentinelTopology}
 * hands out one commands object that stays valid across switches. The commands of one thread keep
 * their order except across a switch, whose replies are not trusted anyway
 * ({@link SentinelTopology#repliesTrusted}).
 *
 * <p>Thread-safe, as the supplier and Lettuce's connections are; runs on the caller's thread.
 * Costs a reflective call and one call of the supplier per command, no round trip of its own;
 * {@code equals}, {@code hashCode} and {@code toString} are answered locally (identity, and the
 * description given).
 */
final class MasterProxy {

    private MasterProxy() {
    }

    /**
     * Returns commands that go over the connection {@code connection} supplies when each is sent.
     *
     * @param connection supplies the connection of the current master; called once per command
     * @param description what {@code toString()} answers
     * @return the commands
     */
    @SuppressWarnings("unchecked")
    static RedisClusterAsyncCommands<String, String> of(Supplier<StatefulRedisConnection<String, String>> connection,
            String description) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return objectMethod(proxy, method, args, description);
            }
            try {
                return method.invoke(connection.get().async(), args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (RedisClusterAsyncCommands<String, String>) Proxy.newProxyInstance(
                RedisClusterAsyncCommands.class.getClassLoader(), new Class<?>[] {RedisClusterAsyncCommands.class},
                handler);
    }

    private static Object objectMethod(Object proxy, Method method, Object[] args, String description) {
        return switch (method.getName()) {
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            default -> description;
        };
    }
}
