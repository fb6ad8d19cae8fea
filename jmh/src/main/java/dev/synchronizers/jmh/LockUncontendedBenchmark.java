package dev.synchronizers.jmh;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Uncontended {@code lock()} + {@code unlock()} of one name by one thread: two script calls, two
 * round trips to a local {@code redis-server} that the benchmark starts itself (or
 * {@code REDIS_URL}).
 *
 * <pre>./mvnw -q -pl jmh -am package -DskipTests &amp;&amp; java -jar jmh/target/benchmarks.jar LockUncontendedBenchmark -rf json</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class LockUncontendedBenchmark {

    private RedisServer server;
    private RedisSynchronizers synchronizers;
    private DistributedLock lock;

    @Setup(Level.Trial)
    public void start() {
        server = RedisServers.start();
        synchronizers = RedisSynchronizers.create(server.uri());
        lock = synchronizers.lock("bench-uncontended");
    }

    @TearDown(Level.Trial)
    public void stop() {
        synchronizers.close();
        server.close();
    }

    /** One lock and one unlock. */
    @Benchmark
    public void lockUnlock() {
        lock.lock();
        lock.unlock();
    }
}
