package dev.synchronizers.redis;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.Script;
import io.lettuce.core.KeyValue;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The countdown latch behind {@link dev.synchronizers.Synchronizers#countDownLatch(String)}.
 *
 * <p>The count is one Redis string that exists only while it is above zero: a latch at zero leaves
 * no key behind. A latch still counting down has no holder to lease it, so its key persists (no
 * TTL) until it reaches zero or {@link #delete()} is called. Reaching zero publishes one message
 * that wakes every waiter of every client. A waiter subscribes, then checks the count, so it cannot
 * miss the message; after a reconnect it is woken to check again, and in any case it re-checks at
 * least once per client lease.
 */
final class RedisCountDownLatch implements DistributedCountDownLatch {

    /** How long the epoch of a crossing outlives it: far longer than any waiter takes to look again. */
    private static final String EPOCH_KEEP_MILLIS = Long.toString(TimeUnit.DAYS.toMillis(1));

    private final String name;
    private final LatchKeys keys;
    private final Machinery machinery;
    private final Acquirer acquirer;
    private final SynchronizerMeters meters;

    RedisCountDownLatch(String name, Machinery machinery) {
        this.name = name;
        this.keys = LatchKeys.of(machinery.keyPrefix, name);
        this.machinery = machinery;
        this.meters = machinery.metrics.synchronizer("latch", name);
        this.acquirer = new Acquirer(machinery.wakeups, keys.wakeups(), machinery.leaseMillis, false,
                machinery::checkOpen, meters);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean trySetCount(long count) {
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0: " + count);
        }
        machinery.checkOpen();
        if (count == 0) {
            // Setting zero asks for a latch that is open: true if it is, false if still counting.
            return getCount() == 0;
        }
        return machinery.<Long>await(machinery.scripts.run(Script.LATCH_SET, new String[] {keys.latch()},
                Long.toString(count)), "set the count of latch '" + name + "'") == 1L;
    }

    @Override
    public void countDown() {
        machinery.checkOpen();
        machinery.<Long>await(machinery.scripts.run(Script.LATCH_COUNT_DOWN, keys.all(), EPOCH_KEEP_MILLIS),
                "count down latch '" + name + "'");
    }

    @Override
    public long getCount() {
        machinery.checkOpen();
        String count = machinery.await(machinery.redis.get(keys.latch()), "read latch '" + name + "'");
        return count == null ? 0 : Long.parseLong(count);
    }

    @Override
    public boolean delete() {
        machinery.checkOpen();
        return machinery.<Long>await(machinery.scripts.run(Script.LATCH_DELETE, keys.all(), EPOCH_KEEP_MILLIS),
                "delete latch '" + name + "'") == 1L;
    }

    @Override
    public void await() throws InterruptedException {
        awaitZero(Acquirer.FOREVER);
    }

    @Override
    public boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return awaitZero(unit.toNanos(timeout));
    }

    /** Waits, and reports the wait to the metrics. */
    private boolean awaitZero(long timeoutNanos) throws InterruptedException {
        machinery.checkOpen();
        return meters.timed(() -> waitForZero(timeoutNanos));
    }

    private boolean waitForZero(long timeoutNanos) throws InterruptedException {
        String waiter = machinery.currentOwner();
        // "Acquired" is "the count reached zero since the wait began": zero now, or an epoch (the
        // time of the last crossing) later than the one the first try saw, so that a latch armed
        // again before this waiter looked still lets it go, as CountDownLatch's await would. A
        // count above zero has no lease to wait for, so the waiter sleeps until the release
        // message, a reconnect, or the re-check interval.
        long[] startEpoch = {-1};
        return acquirer.acquire(new Acquirer.Step() {
            @Override
            public Attempt attempt(boolean subscribed) {
                long sent = System.nanoTime();
                List<KeyValue<String, String>> read = machinery.await(machinery.redis.mget(keys.latch(), keys.epoch()),
                        "read latch '" + name + "'");
                long epoch = read.get(1).hasValue() ? Long.parseLong(read.get(1).getValue()) : 0;
                if (startEpoch[0] < 0) {
                    startEpoch[0] = epoch;
                }
                boolean zero = !read.get(0).hasValue() || Long.parseLong(read.get(0).getValue()) <= 0;
                return zero || epoch > startEpoch[0] ? new Attempt(true, -1, 0, sent) : new Attempt(false, -1, -1, sent);
            }

            @Override
            public boolean firstTryRegisters() {
                // Reaching zero always publishes: a count read while the channel was live is as
                // good as one read after subscribing.
                return true;
            }
        }, waiter, timeoutNanos, true).acquired();
    }

    /** Shows the name; makes no network call. */
    @Override
    public String toString() {
        return "RedisCountDownLatch[" + name + "]";
    }
}
