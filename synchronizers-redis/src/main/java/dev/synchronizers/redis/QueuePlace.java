package dev.synchronizers.redis;

import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.wakeup.WakeupDispatcher;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.concurrent.TimeUnit;
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
final class QueuePlace {

    private static final Logger log = LoggerFactory.getLogger(QueuePlace.class);

    private final Machinery machinery;
    private final String owner;
    private final Script renew;
    private final String[] placeKeys;
    private final Script leave;
    private final String[] leaveKeys;
    private final String what;
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
     */
    QueuePlace(Machinery machinery, String owner, Script renew, String[] placeKeys, Script leave, String[] leaveKeys,
            String what) {
        this.machinery = machinery;
        this.owner = owner;
        this.renew = renew;
        this.placeKeys = placeKeys;
        this.leave = leave;
        this.leaveKeys = leaveKeys;
        this.what = what;
    }

    /**
     * Records that a try put the waiter in the queue (or kept it there), so that giving up must
     * take it out. After the watchdog ended the renewal of a place it found gone, the place this
     * try took is registered for renewal afresh.
     *
     * @param sentNanos {@link System#nanoTime()} just before that try was sent
     */
    void queued(long sentNanos) {
        if (!queued) {
            queued = true;
            queuedNanos = sentNanos;
        }
        if (lease != null && lease.endedBecause() != null) {
            register(sentNanos);
        }
    }

    /** The waiter is about to sleep: keep its place leased. */
    void waiting(WakeupDispatcher.Subscription subscription) {
        this.subscription = subscription;
        register(queued ? queuedNanos : System.nanoTime());
    }

    private void register(long sentNanos) {
        WakeupDispatcher.Subscription wakes = subscription;
        lease = machinery.watchdog.register(renew, placeKeys, new String[] {owner}, 0, sentNanos,
                cause -> wakes.wake());
    }

    /**
     * Returns a moment, by {@link System#nanoTime()}, before which the waiter was still queued:
     * when the try that queued it was sent, or the start of the last tick that renewed its place.
     * Whatever served the waiter from the line did so after it, so a lease granted with the
     * serving runs at least a lease from it.
     *
     * @return the last moment the waiter is known to have been queued, or earlier
     */
    long queuedSinceAtLeast() {
        Watchdog.Lease current = lease;
        return current != null ? current.renewedNanos() : queuedNanos;
    }

    /**
     * The waiter stops: stop renewing its place and, if it did not get what it waited for, leave
     * the queue. Leaving also gives back anything Redis handed the waiter meanwhile, so a leave
     * that cannot reach Redis now is retried by the watchdog until it does, or until the place's
     * lease is over (then nothing is left to give back: the place and any grant record have
     * expired, and a client that could not reach Redis for a whole lease has lost its holds).
     */
    void done(boolean acquired) {
        if (lease != null) {
            machinery.watchdog.unregister(lease);
        }
        if (!acquired && queued) {
            try {
                machinery.<Long>await(machinery.scripts.run(leave, leaveKeys, owner), "leave the queue of " + what);
            } catch (RuntimeException e) {
                log.debug("{}: could not leave the queue; retrying until its place's lease is over: {}", what,
                        e.toString());
                machinery.watchdog.retryUntil("leave the queue of " + what,
                        () -> machinery.scripts.run(leave, leaveKeys, owner),
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(machinery.leaseMillis));
            }
        }
    }
}
