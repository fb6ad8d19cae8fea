package dev.synchronizers;

/**
 * Told when an owner loses a hold it has not released: see {@link LostHold.Cause}. Register one
 * when creating the {@link Synchronizers}.
 *
 * <p>A listener runs on the executor it was registered with (by default the implementation's
 * watchdog thread, so it must be quick and must not block), never on the store client's I/O
 * threads. A listener that throws is logged and does not stop other listeners. The owning thread
 * learns of the loss independently: {@code isHeldByCurrentThread()} turns false and its next
 * {@code unlock()} throws {@link LostHoldException}.
 */
@FunctionalInterface
public interface LostHoldListener {

    /**
     * Called once per lost hold.
     *
     * @param hold what was lost and why
     */
    void holdLost(LostHold hold);
}
