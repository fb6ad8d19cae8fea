package dev.synchronizers.redis.topology;

import io.lettuce.core.RedisURI;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Asking a sentinel for the master it names and the configuration epoch it is the master of, as
 * one pair taken at one moment ({@link #askFor}). Used by {@code SentinelTopology} when it starts
 * and by the sentinel watch's {@code SentinelEar}s afterwards. Stateless.
 */
final class SentinelQuery {

    /** The epoch of a {@link Named} master that its sentinel is failing over to right now. */
    static final long UNKNOWN_EPOCH = -1;

    /**
     * The master as one sentinel names it, and the configuration epoch it is the master of;
     * {@link #UNKNOWN_EPOCH} while that sentinel is failing the master over.
     */
    record Named(String host, int port, long epoch) {
    }

    private SentinelQuery() {
    }

    /** A sentinel's URI as given, bounded by the command timeout. */
    static RedisURI sentinelUri(RedisURI sentinel, Duration timeout) {
        return RedisURI.builder(sentinel).withTimeout(timeout).build();
    }

    /**
     * Asks a sentinel, in one round trip, for the master and the configuration epoch it is the
     * master of, as one pair taken at one moment. {@code SENTINEL MASTER} changes the master's
     * address and the epoch together (a sentinel adopts a newer configuration from its peers in one
     * step, and ends its own failover in one), except while the sentinel itself fails the master
     * over: it then adopts the new epoch when the promoted replica reports itself master, before it
     * moves the address. So outside a failover of its own the answer is that reply's address and
     * epoch; during one, it is the promoted replica's address as {@code SENTINEL
     * GET-MASTER-ADDR-BY-NAME} names it (as Lettuce asks) with the epoch unknown ({@link
     * #UNKNOWN_EPOCH}). Two separate answers, one of each command, cannot be paired: they may
     * straddle the promotion and pair the old master's address with the new epoch, and a client
     * that recorded that pair would take the true switch that follows for a stale one.
     */
    static CompletableFuture<Named> askFor(StatefulRedisSentinelConnection<String, String> connection,
            String masterId) {
        CompletableFuture<SocketAddress> address = connection.async().getMasterAddrByName(masterId).toCompletableFuture();
        CompletableFuture<Map<String, String>> master = connection.async().master(masterId).toCompletableFuture();
        return address.thenCombine(master, (named, state) -> {
            String flags = state.getOrDefault("flags", "");
            String ip = state.get("ip");
            String port = state.get("port");
            String epoch = state.get("config-epoch");
            if (!flags.contains("failover_in_progress") && ip != null && port != null && epoch != null) {
                return new Named(ip, Integer.parseInt(port), Long.parseLong(epoch));
            }
            if (!(named instanceof InetSocketAddress at)) {
                throw new IllegalStateException("the sentinel names no master " + masterId + ": " + named);
            }
            return new Named(at.getHostString(), at.getPort(), UNKNOWN_EPOCH);
        });
    }
}
