package dev.synchronizers.redis.metrics;

/**
 * The meters of one synchronizer object: its waits, its holds and the hand-overs its waiters
 * receive. Resolved once, when the object is created, so that recording costs no lookup.
 * Thread-safe; must not block or throw.
 */
public interface SynchronizerMeters {

    /** Records nothing, and so reads no clock: {@link #timed} just runs the wait. */
    SynchronizerMeters NONE = new SynchronizerMeters() {
        @Override
        public boolean timed(Wait wait) throws InterruptedException {
            return wait.run();
        }
    };

    /**
     * One acquisition that went to Redis ended (re-entering a held lock is not one).
     *
     * @param outcome how it ended
     * @param nanos how long the caller waited
     */
    default void waited(Recorder.Outcome outcome, long nanos) {
    }

    /** A wait for an acquisition: true if acquired, false if its time ran out. */
    @FunctionalInterface
    interface Wait {
        /**
         * Waits.
         *
         * @return whether it acquired
         * @throws InterruptedException if interrupted
         */
        boolean run() throws InterruptedException;
    }

    /**
     * Runs {@code wait} and records it with {@link #waited}: acquired, timed out, interrupted, or
     * failed (any other exception, which is rethrown).
     *
     * @param wait the wait
     * @return what it returned
     * @throws InterruptedException if it was interrupted
     */
    default boolean timed(Wait wait) throws InterruptedException {
        long start = System.nanoTime();
        Recorder.Outcome outcome = Recorder.Outcome.FAILED;
        try {
            boolean acquired = wait.run();
            outcome = acquired ? Recorder.Outcome.ACQUIRED : Recorder.Outcome.TIMED_OUT;
            return acquired;
        } catch (InterruptedException e) {
            outcome = Recorder.Outcome.INTERRUPTED;
            throw e;
        } finally {
            waited(outcome, System.nanoTime() - start);
        }
    }

    /**
     * A hold began. The returned handle must be passed to {@link #holdEnded} exactly once.
     *
     * @return a handle for the hold in progress, or null when nothing is recorded
     */
    default Object holdStarted() {
        return null;
    }

    /**
     * A hold ended, by release or by loss.
     *
     * @param handle what {@link #holdStarted()} returned
     * @param released true if {@code unlock()} or {@code release()} ended it while it was not known
     *     lost; false if it ended otherwise (lost), so that only completed holds are timed
     */
    default void holdEnded(Object handle, boolean released) {
    }

    /**
     * A waiter of this client was handed what it waited for, without a try of its own.
     *
     * @param local true if a neighbour in this client handed it over in one script call; false if
     *     a script in Redis served it from the queue
     */
    default void handedOver(boolean local) {
    }

    /**
     * A thread took a lock its client caches, locally: no round trip ({@code lockCaching}).
     * Such a take is a hold like any other ({@link #holdStarted()}).
     */
    default void cacheTaken() {
    }

    /**
     * The client stopped caching a lock: it gave it back in Redis, or found it gone.
     *
     * @param cause why, one of {@code asked} (another client asked for it), {@code await} (a
     *     condition's await gave it back), {@code bypass} (an acquisition that does not use the cache
     *     needed it in Redis), {@code expiring} (its lease could have run out by the local clock),
     *     {@code abandoned} (the thread inside ended without unlock), {@code unavailable} (Redis did
     *     not answer a reservation of tokens), {@code lost} (Redis no longer had it), {@code unreplicated} (with replica acks, a new block of
     *     tokens was not acknowledged), {@code close}
     */
    default void cacheEnded(String cause) {
    }

    /** The client asked another client to give back a lock that client caches: one message. */
    default void askSent() {
    }
}
