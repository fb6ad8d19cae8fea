package dev.synchronizers.redis.topology;

import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Asynchronous commands that follow the master: each command goes, when it is sent, over the
 * connection picked of whichever master is current then, so a {@link SentinelTopology} hands out
 * one commands object that stays valid across switches. The commands of one thread keep their
 * order except across a switch, whose replies are not trusted anyway
 * ({@link SentinelTopology#repliesTrusted}). A command that fails is told, with the master it was
 * sent to, to the failure callback (the caller gets the failure as it would without the proxy).
 *
 * <p>Thread-safe, as the suppliers, the callback and Lettuce's connections are; runs on the
 * caller's thread, the callback on the thread that completes the reply (a Lettuce I/O thread).
 * Costs a reflective call, one call of each supplier and one dependent stage per command, no
 * round trip of its own; {@code equals}, {@code hashCode} and {@code toString} are answered
 * locally (identity, and the description given).
 */
final class MasterProxy {

    private MasterProxy() {
    }

    /**
     * Returns commands that go over the connection {@code connection} picks of the master
     * {@code master} supplies when each is sent.
     *
     * @param master supplies the current master; called once per command
     * @param connection picks the connection of that master to send over
     * @param description what {@code toString()} answers
     * @param failed told of every command that fails, with the master it was sent to; must be
     *     quick and must not block
     * @return the commands
     */
    @SuppressWarnings("unchecked")
    static RedisClusterAsyncCommands<String, String> of(Supplier<MasterConnections> master,
            Function<MasterConnections, StatefulRedisConnection<String, String>> connection, String description,
            BiConsumer<MasterConnections, Throwable> failed) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return objectMethod(proxy, method, args, description);
            }
            MasterConnections to = master.get();
            Object result;
            try {
                result = method.invoke(connection.apply(to).async(), args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (result instanceof CompletionStage<?> reply) {
                reply.whenComplete((ignored, failure) -> {
                    if (failure != null) {
                        failed.accept(to, failure);
                    }
                });
            }
            return result;
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
