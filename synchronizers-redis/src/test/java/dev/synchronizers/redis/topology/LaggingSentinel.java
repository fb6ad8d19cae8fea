package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.testkit.RedisSentinels;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.sentinel.api.sync.RedisSentinelCommands;
import java.net.InetSocketAddress;

/**
 * Makes one real sentinel of a {@link RedisSentinels} set lag behind: it hears a configuration the
 * others have gone past, as a hello, and announces the switch to it; for the Sentinel tests of a
 * lagging sentinel ({@code SentinelTest}, {@code SentinelStaleSwitchTest}).
 */
public final class LaggingSentinel {

    private LaggingSentinel() {
    }

    /**
     * Makes {@code sentinel} forget what it knows of the master (it monitors {@code current} again,
     * at configuration epoch 0) and then hear late, as a hello from {@code peer}, the previous
     * configuration: it switches to {@code previous} and announces {@code +switch-master} from
     * {@code current} to {@code previous}. A real hello reaching it between the two would make it
     * catch up first; then it is made to forget again. Its settings are those of the set again
     * afterwards.
     */
    static void announceTheOlderConfiguration(RedisSentinelCommands<String, String> sentinel, RedisServer peer,
            RedisServer current, RedisServer previous, long previousEpoch) {
        try {
            for (int attempt = 1; ; attempt++) {
                sentinel.remove(RedisSentinels.MASTER_NAME);
                sentinel.monitor(RedisSentinels.MASTER_NAME, current.host(), current.port(), 2);
                hello(sentinel, peer, previous, previousEpoch);
                int named = ((InetSocketAddress) sentinel.getMasterAddrByName(RedisSentinels.MASTER_NAME)).getPort();
                if (named == previous.port()) {
                    return;
                }
                assertTrue(attempt < 5, "the sentinel kept catching up before the older configuration reached it");
            }
        } finally {
            sentinel.set(RedisSentinels.MASTER_NAME, "down-after-milliseconds", "1000");
            sentinel.set(RedisSentinels.MASTER_NAME, "failover-timeout", "3000");
            sentinel.set(RedisSentinels.MASTER_NAME, "parallel-syncs", "2");
        }
    }

    /**
     * Delivers to {@code sentinel} the hello {@code from} would publish if it named {@code master}
     * with {@code epoch}: {@code ip,port,runid,current-epoch,name,master-ip,master-port,config-epoch}.
     * A sentinel processes a hello published to it as one heard on a server's hello channel.
     */
    static void hello(RedisSentinelCommands<String, String> sentinel, RedisServer from, RedisServer master,
            long epoch) {
        String runId = infoField(from.info("server"), "run_id");
        String hello = String.join(",", from.host(), Integer.toString(from.port()), runId, Long.toString(epoch),
                RedisSentinels.MASTER_NAME, master.host(), Integer.toString(master.port()), Long.toString(epoch));
        sentinel.dispatch(CommandType.PUBLISH, new IntegerOutput<>(StringCodec.UTF8),
                new CommandArgs<>(StringCodec.UTF8).addKey("__sentinel__:hello").addValue(hello));
    }

    /** The configuration epoch {@code sentinel} knows the master with. */
    static long configEpoch(RedisSentinelCommands<String, String> sentinel) {
        return Long.parseLong(sentinel.master(RedisSentinels.MASTER_NAME).get("config-epoch"));
    }

    /** The value of {@code field} in an {@code INFO} reply. */
    static String infoField(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        throw new IllegalStateException("no " + field + " in " + info);
    }
}
