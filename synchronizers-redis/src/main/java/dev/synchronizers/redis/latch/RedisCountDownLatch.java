package dev.synchronizers.redis.latch;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.SynchronizerException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.AsyncLine;
import dev.synchronizers.redis.client.Attempt;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.Script;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
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
public final class RedisCountDownLatch implements DistributedCountDownLatch {

    /** How long the epoch of a crossing outlives it: far longer than any waiter takes to look again. */
    private static final String EPOCH_KEEP_MILLIS = Long.toString(TimeUnit.DAYS.toMillis(1));

    private final String name;
    private final LatchKeys keys;
    private final Machinery machinery;
    private final Acquirer acquirer;
    private final SynchronizerMeters meters;
    /** This client's pending awaitAsync() stages of this latch, waited for one at a time. */
    private final AsyncLine asyncLine;

    public RedisCountDownLatch(String name, Machinery machinery) {
        this.name = name;
        this.keys = LatchKeys.of(machinery.keyPrefix, name);
        this.machinery = machinery;
        this.meters = machinery.metrics.synchronizer("latch", name);
        this.acquirer = new Acquirer(machinery, keys.wakeups(), false, meters);
        this.asyncLine = new AsyncLine(machinery, "latch '" + name + "'");
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
        String what = "read latch '" + name + "'";
        return count(machinery.await(machinery.redis.get(keys.latch()), what), what);
    }

    /**
     * Reads a count or epoch as the latch's scripts write it: absent is zero.
     *
     * @throws SynchronizerException if the key holds a string that is not a whole number: a key
     *     of this name that is not the latch's
     */
    private static long count(String value, String what) {
        if (value == null) {
            return 0;
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new SynchronizerException(what + ": a key of this name holds a value that is not a latch's count;"
                    + " it was left untouched. Use another name or key prefix", e);
        }
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

    /**
     * {@inheritDoc}
     *
     * <p>Pending waits of this latch object are waited for one at a time, in order (the first to
     * complete lets every later one through at once): one thread of the client's waits, however
     * many are pending.
     */
    @Override
    public CompletionStage<Void> awaitAsync() {
        return asyncLine.<Void>submit(Acquirer.FOREVER, null, timeout -> {
            awaitZero(Acquirer.FOREVER);
            return null;
        }, nothing -> { });
    }

    @Override
    public boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return awaitZero(unit.toNanos(timeout));
    }

    /** Waits, and reports the wait to the metrics. */
    private boolean awaitZero(long timeoutNanos) throws InterruptedException {
        machinery.checkOpen();
        try {
            return meters.timed(() -> waitForZero(timeoutNanos));
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        }
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
                // Two GETs in one round trip, not MGET: MGET reads a key of another type as absent,
                // which would be a count at zero; GET fails with WRONGTYPE, as getCount() does. The
                // epoch is read first, so a crossing between the two reads shows in the count
                // (absent) or in the next try's epoch, never in neither.
                String what = "read latch '" + name + "'";
                CompletionStage<String> epochRead = machinery.redis.get(keys.epoch());
                CompletionStage<String> countRead = machinery.redis.get(keys.latch());
                long epoch = count(machinery.await(epochRead, what), what);
                long count = count(machinery.await(countRead, what), what);
                if (startEpoch[0] < 0) {
                    startEpoch[0] = epoch;
                }
                boolean zero = count <= 0;
                return zero || epoch > startEpoch[0] ? new Attempt(true, -1, 0, sent) : new Attempt(false, -1, -1, sent);
            }

            @Override
            public boolean firstTryRegisters() {
                // Reaching zero always publishes: a count read while the channel was live is as
                // good as one read after subscribing.
                return true;
            }
        }, null, waiter, timeoutNanos, true).acquired();
    }

    /** Shows the name; makes no network call. */
    @Override
    public String toString() {
        return "RedisCountDownLatch[" + name + "]";
    }
}
