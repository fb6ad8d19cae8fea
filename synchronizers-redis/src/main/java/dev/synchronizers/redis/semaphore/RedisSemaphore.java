package dev.synchronizers.redis.semaphore;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.SemaphoreSnapshot;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.client.Acquirer;
import dev.synchronizers.redis.client.AsyncLine;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.client.Owner;
import dev.synchronizers.redis.client.QueuePlace;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.SemaphoreAddReply;
import dev.synchronizers.redis.script.SemaphorePicture;
import dev.synchronizers.redis.semaphore.Grants.Grant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The counting semaphore behind {@link dev.synchronizers.Synchronizers#semaphore(String)}.
 *
 * <p>Permits are owned by the client (this {@code RedisSynchronizers}), not by a thread: any thread
 * of the client may release what any other acquired, and the client cannot release more than it
 * holds. Redis counts permits per <em>grant</em>, one per acquisition (named after the acquiring
 * attempt, {@code <client-id>:<thread-id>:<sequence>}), never pooled per client: each grant is
 * leased and renewed by the watchdog under its own name, and a release names the grants it ends.
 * So nothing done for one acquisition can renew, re-lease or release another's permits. A client
 * that dies returns its permits when their leases run out: every acquire, try and count purges
 * expired grants first.
 *
 * <p>A release takes permits from the calling thread's own grants first, then from the other
 * threads' grants of this client. A grant the watchdog reports lost (its lease ran out, or it
 * could not be renewed in time) is given up in Redis for good and stays in this client's books as
 * lost: the release that reaches it throws {@link LostHoldException} instead of consuming a live
 * grant, so a thread whose permit was lost cannot release another thread's permit. Lost grants are
 * reached before live ones of the same thread, and before other threads' live ones.
 *
 * <p>A {@link PermitHandle} owns one grant of its own, marked as the handle's in this client's
 * books: a release by the semaphore never takes from it nor counts it, and the handle's release
 * names only it (the grant, kept to 0). Its lease is the client's, like every grant's, so it
 * outlives the thread that acquired it. A handle's grant reported lost leaves the books at once:
 * the handle remembers it, and its release throws {@link LostHoldException}.
 *
 * <p>Waiters queue in Redis in arrival order, each with a leased place (see {@link QueuePlace}),
 * and are served first come, first served: a waiter asking for more permits than are free blocks
 * the waiters behind it, so {@code acquire(5)} is not starved by a stream of {@code acquire(1)}.
 * The line is served in Redis: every script that frees permits or changes the line (release,
 * growth, a waiter leaving, an acquire that purges a dead client) gives the free permits to the
 * waiters at its front as their grants and names each in a {@code granted:} message, on the waiter's
 * client's own channel ({@link SemaphoreKeys#clientWakeups}), so one grant wakes one client. A waiter that
 * reads its name has its permits without another round trip. A waiter that gives up races
 * nothing: leaving gives back a grant it has not claimed, atomically. A lost message costs time,
 * not permits: the waiter's next try claims the grant. {@code tryAcquire()} without a timeout
 * barges, as {@link java.util.concurrent.Semaphore#tryAcquire()} does even on a fair semaphore.
 * A waiter asking for more than the total waits out of line (it blocks nobody), woken by a growth
 * of the total ({@code released} from semaphore-add.lua, or semaphore-set.lua setting it above 0, on
 * the channel of each client the mark in Redis lists)
 * or after a lease at most, as {@code Semaphore} waits for permits it may never get; a handle's
 * acquisition waits the same way. A queued waiter that a shrink of the total left asking for more
 * than it leaves the line when it is first, so that it holds up nobody behind it, even dead.
 *
 * <p>Redis work: in the steady state a queued acquire is 7 commands and a release that serves the
 * next waiter 13, scripts included, and an acquire + release with nobody in line about 11; the
 * scripts keep in the holdings the counters and time bounds they would otherwise recompute (see
 * semaphore-acquire.lua and docs/benchmarks.md). A grant, and any wake-up for one waiter, goes to
 * the channel of that waiter's client alone ({@code <wakeups>:<client-id>}), so a release costs
 * one delivery however many clients wait.
 *
 * <p>Unknown outcomes: an acquiring call whose reply does not come in time may have run, or may
 * still run. Its caller gets {@link SynchronizerUnavailableException}, and the acquisition is given
 * up in Redis (semaphore-leave.lua: out of the line, its grant given back, and a mark that makes a
 * late run of the call change nothing), retried until Redis answers or a lease has passed. A
 * release whose reply does not come is booked here at once and retried; it sets what each grant
 * keeps rather than subtracting, so running twice releases once.
 *
 * <p>This class is the {@code java.util.concurrent} facade: argument checks, the total and the
 * queries. How permits are acquired and waited for in the line is {@link Acquisitions}; how grants
 * end (release, give-up, loss) is {@link GrantEnds}; a handle is a {@link RedisPermitHandle}; this
 * client's books of its grants are {@link Grants}.
 */
public final class RedisSemaphore implements DistributedSemaphore {

    private final String name;
    private final SemaphoreKeys keys;
    private final Machinery machinery;
    /** This client's pending async acquisitions of this semaphore, waited for one at a time. */
    private final AsyncLine asyncLine;
    private final SynchronizerMeters meters;
    /** This client's grants of this semaphore, live or lost, and the order a release takes them in. */
    private final Grants grants;
    private final SemaphoreParts parts;
    /** The barging try and the wait in the line. */
    private final Acquisitions acquisitions;
    /** Releases, give-ups and losses of grants. */
    private final GrantEnds ends;

    public RedisSemaphore(String name, Machinery machinery) {
        this.parts = SemaphoreParts.of(name, machinery);
        this.name = name;
        this.keys = parts.keys();
        this.machinery = machinery;
        this.meters = parts.meters();
        this.grants = parts.grants();
        this.ends = new GrantEnds(parts);
        this.acquisitions = new Acquisitions(parts, ends);
        this.asyncLine = new AsyncLine(machinery, SemaphoreParts.KIND + " '" + name + "'");
    }

    @Override
    public String name() {
        return name;
    }

    /* --------------- total --------------- */

    @Override
    public boolean trySetPermits(int permits) {
        // Negative is allowed, as Semaphore's constructor allows it: nobody acquires until it is raised.
        machinery.checkOpen();
        return machinery.<Long>await(machinery.scripts.run(Script.SEMAPHORE_SET, keys.forSet(),
                Integer.toString(permits)), what("set the permits of")) == 1L;
    }

    @Override
    public void addPermits(int delta) {
        machinery.checkOpen();
        List<Object> reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_ADD, keys.forQueue(),
                Integer.toString(delta)), what("add permits to"));
        SemaphoreAddReply added = SemaphoreAddReply.of(Script.SEMAPHORE_ADD, reply);
        if (!added.changed()) {
            throw new IllegalArgumentException("delta would make the total negative: " + added.total() + " + " + delta);
        }
    }

    /* --------------- acquire --------------- */

    @Override
    public void acquire() throws InterruptedException {
        acquire(1);
    }

    @Override
    public void acquire(int permits) throws InterruptedException {
        checkNotNegative("permits", permits);
        acquire(permits, Acquirer.FOREVER);
    }

    @Override
    public boolean tryAcquire() {
        return tryAcquire(1);
    }

    @Override
    public boolean tryAcquire(int permits) {
        checkNotNegative("permits", permits);
        machinery.checkOpen();
        if (permits == 0) {
            return true;
        }
        try {
            return meters.timed(() -> acquisitions.take(permits) > 0);
        } catch (InterruptedException e) {
            throw new AssertionError("a single try does not wait", e);
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        }
    }

    @Override
    public boolean tryAcquire(long timeout, TimeUnit unit) throws InterruptedException {
        return tryAcquire(1, timeout, unit);
    }

    @Override
    public boolean tryAcquire(int permits, long timeout, TimeUnit unit) throws InterruptedException {
        checkNotNegative("permits", permits);
        Objects.requireNonNull(unit, "unit");
        return acquire(permits, unit.toNanos(timeout));
    }

    @Override
    public int drainPermits() {
        machinery.checkOpen();
        return acquisitions.take(0);
    }

    private boolean acquire(int permits, long timeoutNanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (permits == 0) {
            return true;
        }
        machinery.checkOpen();
        try {
            return meters.timed(() -> acquisitions.waitForPermits(permits, timeoutNanos, false) != null);
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        }
    }

    /* --------------- release --------------- */

    @Override
    public void release() {
        release(1);
    }

    @Override
    public void release(int permits) {
        checkNotNegative("permits", permits);
        if (permits == 0) {
            return;
        }
        machinery.checkOpen();
        ends.release(permits);
    }

    /* --------------- handles --------------- */

    @Override
    public PermitHandle acquirePermits(int permits) throws InterruptedException {
        checkAtLeastOne(permits);
        return acquireHandle(permits, Acquirer.FOREVER).orElseThrow();
    }

    @Override
    public Optional<PermitHandle> tryAcquirePermits(int permits, Duration wait) throws InterruptedException {
        checkAtLeastOne(permits);
        return acquireHandle(permits, Acquirer.timeoutNanos(wait));
    }

    /**
     * {@inheritDoc}
     *
     * <p>This client's async acquisitions of one semaphore object are waited for one at a time, in
     * the order they were made, by one thread of the client's however many are pending; each takes
     * its turn in the semaphore's queue as a blocking {@code acquirePermits} would.
     */
    @Override
    public CompletionStage<PermitHandle> acquirePermitsAsync(int permits) {
        checkAtLeastOne(permits);
        return asyncLine.<PermitHandle>submit(Acquirer.FOREVER, null,
                timeout -> acquireHandle(permits, Acquirer.FOREVER).orElseThrow(), PermitHandle::close);
    }

    /** Waits for the permits as {@code acquire(permits)} does, booked as one grant of a new handle. */
    private Optional<PermitHandle> acquireHandle(int permits, long timeoutNanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        machinery.checkOpen();
        Grant[] granted = new Grant[1];
        try {
            meters.timed(() -> (granted[0] = acquisitions.waitForPermits(permits, timeoutNanos, true)) != null);
        } catch (SynchronizerUnavailableException e) {
            throw machinery.unlessClosed(e);
        }
        return Optional.ofNullable(granted[0]).map(grant -> new RedisPermitHandle(parts, ends, grant));
    }

    /* --------------- queries --------------- */

    @Override
    public int availablePermits() {
        machinery.checkOpen();
        long available = machinery.<Long>await(machinery.scripts.run(Script.SEMAPHORE_AVAILABLE, keys.forTry()),
                what("count the permits of"));
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, available));
    }

    /**
     * One read-only script call; see {@link DistributedSemaphore#snapshot()}. Grants are summed
     * per client: the client id is the client part of the grant's name ({@link Owner#clientOf}).
     */
    @Override
    public SemaphoreSnapshot snapshot() {
        machinery.checkOpen();
        List<Object> reply = machinery.await(machinery.scripts.run(Script.SEMAPHORE_SNAPSHOT, keys.forSnapshot()),
                what("snapshot"));
        SemaphorePicture picture = SemaphorePicture.of(Script.SEMAPHORE_SNAPSHOT, reply);
        long total = picture.total();
        Map<String, long[]> perClient = new LinkedHashMap<>();   // client -> {permits, grants, shortest lease}
        long held = 0;
        for (SemaphorePicture.Grant live : picture.grants()) {
            String grant = live.grant();
            long permits = live.permits();
            long remaining = live.remainingMillis();
            String client = Owner.clientOf(grant);
            long[] sum = perClient.computeIfAbsent(client, c -> new long[] {0, 0, Long.MAX_VALUE});
            sum[0] += permits;
            sum[1]++;
            sum[2] = Math.min(sum[2], remaining);
            held += permits;
        }
        List<SemaphoreSnapshot.PermitHolder> holders = new ArrayList<>();
        perClient.forEach((client, sum) -> holders.add(new SemaphoreSnapshot.PermitHolder(client,
                (int) Math.min(Integer.MAX_VALUE, sum[0]), (int) sum[1], sum[2])));
        int totalPermits = (int) Math.min(Integer.MAX_VALUE, total);
        return new SemaphoreSnapshot(name, totalPermits, (int) Math.max(Integer.MIN_VALUE, total - held), holders,
                (int) picture.queued());
    }

    /** Shows the name and what this JVM knows; makes no network call. */
    @Override
    public String toString() {
        return "RedisSemaphore[" + name + ", " + grants.describe() + "]";
    }

    /* --------------- helpers --------------- */

    private String what(String verb) {
        return parts.what(verb);
    }

    private static void checkAtLeastOne(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be >= 1: " + permits);
        }
    }

    private static void checkNotNegative(String argument, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(argument + " must be >= 0: " + value);
        }
    }
}
