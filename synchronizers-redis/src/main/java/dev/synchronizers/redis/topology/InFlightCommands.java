package dev.synchronizers.redis.topology;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.api.StatefulConnection;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a connection fail the commands it has in flight when it drops, on every Lettuce line, so
 * that none of them is written again once it reconnects.
 *
 * <p>Under {@code REJECT_COMMANDS} with auto-reconnect, Lettuce 6.8 and later fail those commands
 * ("Connection disconnected") as the connection drops. Lettuce 6.6 keeps them, and writes them
 * again on the new connection, whatever the replay filter says: an acquire whose reply was lost
 * would run twice. On Lettuce 6.x this class resets the connection as it drops
 * ({@code StatefulConnection.reset()}, which Lettuce 7 removed): Lettuce tells the connection's
 * listeners after it set the commands in flight aside and before it schedules the reconnect, and
 * the reset cancels them (on 6.8 it finds none left). Their callers then see the same unknown
 * outcome ({@code SynchronizerUnavailableException}) as on later lines.
 *
 * <p>Used on the connections that carry the scripts; a Pub/Sub connection's subscriptions are
 * idempotent, and Lettuce subscribes them again after a reconnect anyway.
 */
final class InFlightCommands {

    private static final Logger log = LoggerFactory.getLogger(InFlightCommands.class);

    /** {@code StatefulConnection.reset()} where this Lettuce has it (6.x), else null. */
    private static final Method RESET = resetMethod();

    private InFlightCommands() {
    }

    /**
     * Makes {@code connection} fail its commands in flight when it drops, if this Lettuce does not
     * do so by itself; returns it.
     */
    static <C extends StatefulConnection<?, ?>> C failOnDisconnect(C connection) {
        if (RESET != null) {
            connection.addListener(new RedisConnectionStateListener() {
                @Override
                public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
                    try {
                        RESET.invoke(connection);
                    } catch (IllegalAccessException | InvocationTargetException | RuntimeException e) {
                        log.warn("cannot fail the commands in flight on a dropped connection; they may run twice: {}",
                                e.toString());
                    }
                }
            });
        }
        return connection;
    }

    private static Method resetMethod() {
        try {
            return StatefulConnection.class.getMethod("reset");
        } catch (NoSuchMethodException e) {
            return null;   // Lettuce 7: fails them by itself, as 6.8 does
        }
    }
}
