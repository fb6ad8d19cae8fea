package dev.synchronizers.redis.client;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One waiter's place in a queue in Redis (the fair lock's, the semaphore's): leased and renewed by
 * the watchdog while the waiter waits, and left at once when it gives up. A place the watchdog
 * finds gone (purged while the client was cut off) is taken again, at the back, by the waiter's
 * next try, so the watchdog wakes it to make that try now; the place that try takes is leased and
 * renewed as the first was.
 *
 * <p>Used by one waiting thread; not thread-safe.
 */
public final class QueuePlace {

    private static final Logger log = LoggerFactory.getLogger(QueuePlace.class);

    private final Machinery machinery;
    private final String owner;
    private final Script renew;
    private final String[] placeKeys;
    private final Script leave;
    private final String[] leaveKeys;
    private final String[] leaveArgs;
    private final String what;
    /** Sends a retried leave, or skips it when it can no longer be meant for this wait. */
    private Function<Supplier<CompletionStage<?>>, CompletionStage<?>> retryGuard = Supplier::get;
    private boolean queued;
    /** When the try that queued the waiter was sent; the place is known to be queued since. */
    private long queuedNanos;
    private Watchdog.Lease lease;
    /** Where the watchdog wakes the waiter when its place is gone; set once it waits. */
    private WakeupDispatcher.Subscription subscription;

    /**
     * @param owner the waiter's owner string, its member in the queue
     * @param renew the batched script that renews places in this kind of queue
     * @param placeKeys the keys of one item of that script
     * @param leave the script that takes the waiter out of the queue
     * @param leaveKeys that script's keys
     * @param what the synchronizer, for messages, e.g. {@code "fair lock 'orders'"}
     * @param leaveExtra the leave script's arguments after the owner, if it takes more
     */
    public QueuePlace(Machinery machinery, String owner, Script renew, String[] placeKeys, Script leave, String[] leaveKeys,
            String what, String... leaveExtra) {
        this.machinery = machinery;
        this.owner = owner;
        this.renew = renew;
        this.placeKeys = placeKeys;
        this.leave = leave;
        this.leaveKeys = leaveKeys;
        this.leaveArgs = new String[1 + leaveExtra.length];
        leaveArgs[0] = owner;
        System.arraycopy(leaveExtra, 0, leaveArgs, 1, leaveExtra.length);
        this.what = what;
    }

    /**
     * Makes every retried leave go through {@code guard}, which sends it or skips it. A leave named
     * by owner (the fair lock's, the writer's) must not run after the same thread took the lock
     * again, since it gives back a lock handed to that owner: the guard knows when.
     *
     * @param guard given the leave to send, sends it or returns a completed stage instead
     */
    public void guardRetries(Function<Supplier<CompletionStage<?>>, CompletionStage<?>> guard) {
        this.retryGuard = guard;
    }

    /**
     * Records that a try put the waiter in the queue (or kept it there), so that giving up must
     * take it out. After the watchdog ended the renewal of a place it found gone, the place this
     * try took is registered for renewal afresh.
     *
     * @param sentNanos {@link System#nanoTime()} just before that try was sent
     */
    public void queued(long sentNanos) {
        if (!queued) {
            queued = true;
            queuedNanos = sentNanos;
        }
        if (lease != null && lease.endedBecause() != null) {
            register(sentNanos);
        }
    }

    /** The waiter is about to sleep: keep its place leased. */
    public void waiting(WakeupDispatcher.Subscription subscription) {
        this.subscription = subscription;
        register(queued ? queuedNanos : System.nanoTime());
    }

    private void register(long sentNanos) {
        WakeupDispatcher.Subscription wakes = subscription;
        // Gone: the waiter tries now and so takes a place again. Unanswered: a try now would go
        // unanswered too and end the wait with an error; the waiter sleeps on, and the reconnect
        // that ends a silence wakes it, or its own bound does (its place is taken again then).
        lease = machinery.watchdog.register(Renewal.ofThread(renew, placeKeys, new String[] {owner}, 0, sentNanos,
                Thread.currentThread(), cause -> {
                    if (cause != LostHold.Cause.UNRENEWABLE) {
                        wakes.wake();
                    }
                }));
    }

    /**
     * Returns a moment, by {@link System#nanoTime()}, before which the waiter was still queued:
     * when the try that queued it was sent, or the start of the last tick that renewed its place.
     * Whatever served the waiter from the line did so after it, so a lease granted with the
     * serving runs at least a lease from it.
     *
     * @return the last moment the waiter is known to have been queued, or earlier
     */
    public long queuedSinceAtLeast() {
        Watchdog.Lease current = lease;
        return current != null ? current.renewedNanos() : queuedNanos;
    }

    /**
     * Takes the waiter out of the queue while it goes on waiting elsewhere (behind a neighbour of
     * its client): as {@link #done done(false)}, after which a later try may queue it again.
     */
    public void leave() {
        done(false);
        queued = false;
        lease = null;
    }

    /**
     * The waiter stops: stop renewing its place and, if it did not get what it waited for, leave
     * the queue. Leaving also gives back anything Redis handed the waiter meanwhile, so a leave
     * that cannot reach Redis now is retried by the watchdog until it does, or until the place's
     * lease is over (then nothing is left to give back: the place and any grant record have
     * expired, and a client that could not reach Redis for a whole lease has lost its holds).
     */
    public void done(boolean acquired) {
        if (lease != null) {
            machinery.watchdog.unregister(lease);
        }
        if (!acquired && queued) {
            machinery.metrics.followUp(Recorder.FollowUp.LEAVE);
            try {
                machinery.<Long>await(machinery.scripts.run(leave, leaveKeys, leaveArgs), "leave the queue of " + what);
            } catch (RuntimeException e) {
                log.debug("{}: could not leave the queue; retrying until its place's lease is over: {}", what,
                        e.toString());
                Supplier<CompletionStage<?>> send = () -> machinery.scripts.run(leave, leaveKeys, leaveArgs);
                machinery.followUps.retryUntil(leave, "leave the queue of " + what, () -> retryGuard.apply(send),
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
            }
        }
    }
}
