package dev.synchronizers.jmh;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.LockHandle;
import dev.synchronizers.redis.RedisSynchronizers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Many pending async acquisitions of one name from one thread: each invocation issues {@link #K}
 * acquisitions of one lock, one after another without waiting, from the benchmark thread; each
 * acquisition's completion releases what it got, without blocking; the invocation then waits until
 * all {@code K} acquisitions and releases are done. The score is acquisitions (acquire + release)
 * per second, and the {@code REDIS-STATS} lines count per acquisition.
 *
 * <ul>
 *   <li>Ours ({@code SYNCHRONIZERS}, {@code SYNCHRONIZERS_FAIR}): {@code acquireAsync()}, then
 *       {@code thenCompose(LockHandle::releaseAsync)}.</li>
 *   <li>Redisson ({@code REDISSON}, {@code REDISSON_FAIR}): {@code RLock.lockAsync(threadId)}, then
 *       {@code thenCompose(v -> unlockAsync(threadId))}, each acquisition with a thread id of its
 *       own (Redisson's owner is the client id and that thread id; the same id twice would re-enter).</li>
 * </ul>
 *
 * <p>Same {@code K}, same kind of {@code redis-server} (each trial starts its own on loopback), one
 * client each, the lease of {@link LockImpl#DEFAULT_LEASE} for both. There is no {@code *Latency}
 * twin: an invocation is a batch of {@code K}, not one operation.
 *
 * <pre>java -jar jmh/target/benchmarks.jar LockAsyncBenchmark -p impl=SYNCHRONIZERS,REDISSON</pre>
 */
public class LockAsyncBenchmark extends RedisBenchmark {

    /** Acquisitions pending at once, issued by the benchmark thread per invocation. */
    static final int K = 64;
    /** How long one invocation may take before the benchmark gives up, rather than hang. */
    static final long BATCH_TIMEOUT_SECONDS = 120;

    @Param({"SYNCHRONIZERS", "SYNCHRONIZERS_FAIR", "REDISSON", "REDISSON_FAIR"})
    public String impl;

    private Batch batch;

    @Override
    protected String implName() {
        return impl;
    }

    @Setup(Level.Trial)
    public void start() {
        startRedis();
        String name = "bench-async";
        batch = switch (impl) {
            case "SYNCHRONIZERS", "SYNCHRONIZERS_FAIR" -> {
                RedisSynchronizers client = closeAtEnd(LockImpl.target(RedisSynchronizers.builder(), target())
                        .lease(LockImpl.DEFAULT_LEASE).build());
                DistributedLock lock = impl.equals("SYNCHRONIZERS") ? client.lock(name) : client.fairLock(name);
                yield () -> lock.acquireAsync().thenCompose(LockHandle::releaseAsync).toCompletableFuture();
            }
            case "REDISSON", "REDISSON_FAIR" -> {
                RedissonClient client = LockImpl.redisson(target(), LockImpl.DEFAULT_LEASE);
                closeAtEnd(client::shutdown);
                RLock lock = impl.equals("REDISSON") ? client.getLock(name) : client.getFairLock(name);
                // Thread ids of their own, far from the JVM's, one per acquisition.
                AtomicLong threadIds = new AtomicLong(1L << 40);
                yield () -> {
                    long threadId = threadIds.incrementAndGet();
                    return lock.lockAsync(threadId).thenCompose(v -> lock.unlockAsync(threadId)).toCompletableFuture();
                };
            }
            default -> throw new IllegalArgumentException("unknown impl " + impl);
        };
    }

    @TearDown(Level.Trial)
    public void stop() {
        stopRedis();
    }

    /** One async acquisition that releases on completion. */
    private interface Batch {
        CompletableFuture<Void> acquireThenRelease();
    }

    /** {@code K} async acquisitions issued at once, each released on completion; waits for all. */
    @Benchmark
    @OperationsPerInvocation(K)
    public void acquireAsyncRelease() throws InterruptedException, ExecutionException, TimeoutException {
        CompletableFuture<?>[] all = new CompletableFuture<?>[K];
        for (int i = 0; i < K; i++) {
            all[i] = batch.acquireThenRelease();
        }
        CompletableFuture.allOf(all).get(BATCH_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        operations.addAndGet(K);
    }
}
