package dev.synchronizers.redis.watchdog;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.redis.support.Replies;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of a client's holds alive and finds the holds that are gone.
 *
 * <p>One daemon thread per client ticks every third of the default lease. A tick renews every
 * registered renewable lease: all leases that share a renew script go to Redis as one batched
 * script call (in chunks of {@value #BATCH} holds), so a tick costs one round trip per script in use
 * whatever the number of holds. A lease Redis reports gone, or one that could not be renewed for a
 * whole lease because Redis was unreachable, is lost: it is unregistered and its owner's callback
 * is told, on the watchdog thread.
 *
 * <p>Registration and unregistration are the single point where a hold changes hands between its
 * owner and the watchdog: {@link #unregister} returns false exactly when the watchdog declared the
 * lease lost first, so a lease that is being released is never reported lost.
 */
public final class Watchdog implements AutoCloseable {

    /** Holds per script call: large enough for one round trip, small enough not to stall Redis. */
    static final int BATCH = 500;

    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    private final ScriptRegistry scripts;
    private final long leaseMillis;
    private final Duration timeout;
    private final Set<Lease> leases = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService scheduler;

    /**
     * Starts the watchdog thread.
     *
     * @param scripts the registry that runs the renew scripts
     * @param leaseMillis the lease every renewal sets; the tick is a third of it
     * @param timeout the command timeout, for a tick's replies
     * @param threadName the watchdog thread's name
     */
    public Watchdog(ScriptRegistry scripts, long leaseMillis, Duration timeout, String threadName) {
        this.scripts = scripts;
        this.leaseMillis = leaseMillis;
        this.timeout = timeout;
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, threadName);
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        this.scheduler = executor;
        long tick = Math.max(1, leaseMillis / 3);
        scheduler.scheduleWithFixedDelay(this::tick, tick, tick, TimeUnit.MILLISECONDS);
    }

    /**
     * Registers a hold. A renewable hold is renewed every tick; a fixed-lease hold is only
     * tracked, so that the owner's state stays reachable until it is released or its lease ends.
     *
     * @param renewScript the batched script that renews this kind of hold
     * @param key the key that holds the lease
     * @param owner the owner string the script checks
     * @param fixedLeaseMillis the fixed lease, or {@code 0} for a hold the watchdog renews
     * @param sentNanos {@link System#nanoTime()} just before the acquiring command was sent: the
     *     lease started in Redis after it, so local expiry counted from it is never late
     * @param onLost told once, on the watchdog thread, if the lease is lost
     * @return the registered lease
     */
    public Lease register(Script renewScript, String key, String owner, long fixedLeaseMillis,
            long sentNanos, Consumer<LostHold.Cause> onLost) {
        Lease lease = new Lease(renewScript, key, owner, fixedLeaseMillis, sentNanos, onLost);
        leases.add(lease);
        return lease;
    }

    /**
     * Stops renewing a lease; called by its owner when it releases the hold.
     *
     * @param lease the lease
     * @return true if the lease was still registered; false if the watchdog had declared it lost
     */
    public boolean unregister(Lease lease) {
        return leases.remove(lease);
    }

    /**
     * Returns the watchdog thread as an executor: the default home of lost-hold listeners.
     *
     * @return an executor that runs tasks on the watchdog thread, after the current tick
     */
    public Executor executor() {
        return scheduler;
    }

    /**
     * Returns the number of registered leases, for leak checks.
     *
     * @return how many holds the watchdog tracks
     */
    public int registered() {
        return leases.size();
    }

    /**
     * Runs one renewal tick now, on the caller's thread. For tests and for the scheduler.
     */
    public void tick() {
        try {
            renewAll();
        } catch (RuntimeException | Error e) {
            log.error("watchdog tick failed; it runs again in {} ms", leaseMillis / 3, e);
        }
    }

    private void renewAll() {
        long now = System.nanoTime();
        Map<Script, List<Lease>> due = new LinkedHashMap<>();
        for (Lease lease : leases) {
            if (lease.fixedLeaseMillis > 0) {
                if (now - lease.startNanos >= TimeUnit.MILLISECONDS.toNanos(lease.fixedLeaseMillis)
                        && leases.remove(lease)) {
                    lease.lostCause = LostHold.Cause.LEASE_EXPIRED;
                    lease.onLost.accept(LostHold.Cause.LEASE_EXPIRED);
                }
            } else {
                due.computeIfAbsent(lease.renewScript, s -> new ArrayList<>()).add(lease);
            }
        }
        List<Batch> batches = new ArrayList<>();
        due.forEach((script, list) -> {
            for (int from = 0; from < list.size(); from += BATCH) {
                List<Lease> chunk = list.subList(from, Math.min(list.size(), from + BATCH));
                batches.add(new Batch(chunk, send(script, chunk)));
            }
        });
        for (Batch batch : batches) {
            settle(batch, now);
        }
    }

    private CompletionStage<List<Object>> send(Script script, List<Lease> chunk) {
        String[] keys = new String[chunk.size()];
        String[] args = new String[chunk.size() + 1];
        args[0] = Long.toString(leaseMillis);
        for (int i = 0; i < keys.length; i++) {
            keys[i] = chunk.get(i).key;
            args[i + 1] = chunk.get(i).owner;
        }
        return scripts.run(script, keys, args);
    }

    private void settle(Batch batch, long tickStart) {
        List<Object> renewed;
        try {
            renewed = Replies.await(batch.reply, timeout, "renew " + batch.leases.size() + " leases");
        } catch (RuntimeException e) {
            for (Lease lease : batch.leases) {
                if (tickStart - lease.renewedNanos >= TimeUnit.MILLISECONDS.toNanos(leaseMillis)) {
                    lose(lease, LostHold.Cause.UNRENEWABLE);
                }
            }
            log.warn("watchdog could not renew {} leases; they count as lost once unrenewed for {} ms: {}",
                    batch.leases.size(), leaseMillis, e.getMessage());
            return;
        }
        for (int i = 0; i < batch.leases.size(); i++) {
            Lease lease = batch.leases.get(i);
            if (((Long) renewed.get(i)) == 1L) {
                lease.renewedNanos = tickStart;
            } else {
                lose(lease, LostHold.Cause.GONE);
            }
        }
    }

    /**
     * Declares a lease lost now, for example after a local {@code forceUnlock()}: as if a tick had
     * found it gone. Does nothing if it is not registered.
     *
     * @param lease the lease
     * @param cause why it is lost
     */
    public void declareLost(Lease lease, LostHold.Cause cause) {
        lose(lease, cause);
    }

    private void lose(Lease lease, LostHold.Cause cause) {
        if (leases.remove(lease)) {
            lease.lostCause = cause;
            lease.onLost.accept(cause);
        }
    }

    /**
     * Stops the watchdog thread. Registered leases are no longer renewed and expire in Redis with
     * their lease.
     */
    @Override
    public void close() {
        scheduler.shutdownNow();
        try {
            scheduler.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        leases.clear();
    }

    /** One registered hold's lease. Identity is object identity. */
    public static final class Lease {
        final Script renewScript;
        final String key;
        final String owner;
        final long fixedLeaseMillis;
        final long startNanos;
        final Consumer<LostHold.Cause> onLost;
        volatile long renewedNanos;
        volatile LostHold.Cause lostCause;

        Lease(Script renewScript, String key, String owner, long fixedLeaseMillis, long sentNanos,
                Consumer<LostHold.Cause> onLost) {
            this.renewScript = renewScript;
            this.key = key;
            this.owner = owner;
            this.fixedLeaseMillis = fixedLeaseMillis;
            this.onLost = onLost;
            this.startNanos = sentNanos;
            this.renewedNanos = startNanos;
        }

        /**
         * Tells whether this is a fixed lease, which the watchdog does not renew.
         *
         * @return true for a fixed lease
         */
        public boolean fixed() {
            return fixedLeaseMillis > 0;
        }

        /**
         * Tells whether the lease is known to be over: lost, or a fixed lease past its end by the
         * local clock (which the watchdog may not have noticed yet).
         *
         * @return the reason it is over, or null while it is believed held
         */
        public LostHold.Cause endedBecause() {
            LostHold.Cause cause = lostCause;
            if (cause == null && fixedLeaseMillis > 0
                    && System.nanoTime() - startNanos >= TimeUnit.MILLISECONDS.toNanos(fixedLeaseMillis)) {
                return LostHold.Cause.LEASE_EXPIRED;
            }
            return cause;
        }
    }

    private record Batch(List<Lease> leases, CompletionStage<List<Object>> reply) {
    }
}
