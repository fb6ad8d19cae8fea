package dev.synchronizers.redis.client;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link LossSignal}s of one client's handles that are still open (neither lost nor released),
 * so that {@code close()} settles each of them: a handle still held when its client closes is no
 * longer renewed and expires with its lease, so its {@code lost()} stage completes with an
 * {@link dev.synchronizers.LostHold.Cause#ABANDONED} report rather than never. Thread-safe.
 */
public final class LossSignals {

    private final Set<LossSignal> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** Tracks {@code signal} until it is settled; one opened after {@link #close()} is abandoned at once. */
    void opened(LossSignal signal) {
        open.add(signal);
        if (closed) {
            signal.abandoned();
        }
    }

    /** Stops tracking {@code signal}, which was settled. */
    void settled(LossSignal signal) {
        open.remove(signal);
    }

    /** For the client's {@code close()}: every signal still open is settled as abandoned. */
    public void close() {
        closed = true;
        for (LossSignal signal : open) {
            signal.abandoned();
        }
    }
}
