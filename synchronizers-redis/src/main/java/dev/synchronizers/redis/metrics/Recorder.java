package dev.synchronizers.redis.metrics;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.script.ScriptCalls;
import java.util.function.IntSupplier;

/**
 * Receives what one client's machinery does, for metrics. Every method has a default that does
 * nothing, and {@link #NONE} is what a client without a meter registry uses, so that reporting
 * costs an interface call and no allocation when nobody listens.
 *
 * <p>Implementations must be thread-safe and must not block or throw: they are called on
 * application threads, on the watchdog thread and on Lettuce's event loop.
 */
public interface Recorder extends ScriptCalls {

    /** Records nothing. */
    Recorder NONE = new Recorder() {
    };

    /** What a wait for an acquisition ended with. */
    enum Outcome {
        /** The caller got what it waited for. */
        ACQUIRED("acquired"),
        /** The waiting time elapsed first (for a single attempt: it found the synchronizer taken). */
        TIMED_OUT("timed_out"),
        /** The thread was interrupted and the wait ended with {@code InterruptedException}. */
        INTERRUPTED("interrupted"),
        /** The wait ended with any other exception, e.g. Redis could not be reached. */
        FAILED("failed");

        /** The value of the {@code outcome} tag. */
        public final String tag;

        Outcome(String tag) {
            this.tag = tag;
        }
    }

    /** A follow-up that settles a call whose outcome is unknown, or that ends a wait cleanly. */
    enum FollowUp {
        /** An acquire whose caller had given up turned out to have acquired: released again. */
        UNDO("undo"),
        /** A waiter that stopped without acquiring left its queue in Redis. */
        LEAVE("leave"),
        /** A lock a neighbour's hand-over may have given a waiter that stopped was given back. */
        GIVE_BACK("give_back"),
        /** A semaphore acquisition whose outcome is unknown, or whose permits were lost, was given up. */
        GIVE_UP("give_up"),
        /** A follow-up or release Redis did not answer was queued to be retried at every tick. */
        RETRY("retry");

        /** The value of the {@code action} tag. */
        public final String tag;

        FollowUp(String tag) {
            this.tag = tag;
        }
    }

    /**
     * Returns the meters of one synchronizer object. Called once per object, when it is created.
     *
     * @param kind the kind tag, e.g. {@code "lock"} or {@code "read_lock"}
     * @param name the synchronizer's name, for an opted-in {@code name} tag
     * @return its meters; {@link SynchronizerMeters#NONE} when nothing is recorded
     */
    default SynchronizerMeters synchronizer(String kind, String name) {
        return SynchronizerMeters.NONE;
    }

    /**
     * A hold was lost: reported once per lost hold, with the event the listeners get.
     *
     * @param hold the lost-hold event
     */
    default void lost(LostHold hold) {
    }

    /**
     * One watchdog tick ended.
     *
     * @param nanos how long it took
     * @param renewed how many leases it renewed
     * @param failed how many leases it could not renew because Redis did not answer
     */
    default void tick(long nanos, int renewed, int failed) {
    }

    /**
     * A {@code WAIT} reported fewer replicas than the client's replica acknowledgement asks.
     *
     * @param call {@code "acquire"} (the acquisition was undone and retried) or {@code "renew"}
     *     (reported only)
     */
    default void replicaAcksShort(String call) {
    }

    /** A wake-up message arrived on the Pub/Sub connection. */
    default void wakeupReceived() {
    }

    /**
     * A follow-up was sent (or queued for retry).
     *
     * @param action which
     */
    default void followUp(FollowUp action) {
    }

    /**
     * Registers the client's gauges: leases the watchdog tracks, follow-ups waiting to be retried,
     * channels subscribed for wake-ups. Called once, when the client is built.
     *
     * @param leases reads the number of tracked leases
     * @param pendingRetries reads the number of pending retries
     * @param channels reads the number of subscribed channels
     */
    default void clientGauges(IntSupplier leases, IntSupplier pendingRetries, IntSupplier channels) {
    }

    /** The client closes: its gauges are removed. */
    default void close() {
    }
}
