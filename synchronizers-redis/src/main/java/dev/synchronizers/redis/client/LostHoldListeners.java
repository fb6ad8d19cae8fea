package dev.synchronizers.redis.client;

import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldListener;
import dev.synchronizers.redis.metrics.Recorder;
import java.util.List;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's lost-hold listeners, each with the executor it runs on. Every lost hold is logged
 * at WARN whether or not listeners are registered; a fixed lease that ran out is logged at DEBUG
 * only and not passed to listeners, since the caller chose it.
 */
public final class LostHoldListeners {

    private static final Logger log = LoggerFactory.getLogger(LostHoldListeners.class);

    record Registration(LostHoldListener listener, Executor executor) {
    }

    private final List<Registration> registrations;
    private final Recorder recorder;

    LostHoldListeners(List<Registration> registrations, Recorder recorder) {
        this.registrations = List.copyOf(registrations);
        this.recorder = recorder;
    }

    /** Counts, logs and passes on one lost hold; called once per lost hold. */
    public void report(LostHold hold) {
        recorder.lost(hold);
        if (hold.cause() == LostHold.Cause.LEASE_EXPIRED) {
            log.debug("fixed lease of {} '{}' held by thread {} ran out before unlock()",
                    hold.kind(), hold.name(), hold.threadId());
            return;
        }
        log.warn("LOST HOLD: {} '{}' held by thread {} (fencing token {}) is no longer held: {}",
                hold.kind(), hold.name(), hold.threadId(), hold.fencingToken(), describe(hold.cause()));
        for (Registration registration : registrations) {
            try {
                registration.executor().execute(() -> call(registration.listener(), hold));
            } catch (RuntimeException e) {
                log.error("lost-hold listener {} could not be scheduled", registration.listener(), e);
            }
        }
    }

    public static String describe(LostHold.Cause cause) {
        return switch (cause) {
            case GONE -> "Redis no longer has it (lease expired, forced, or lost in a restart or failover)";
            case UNRENEWABLE -> "the watchdog could not reach Redis before the lease could run out";
            case ABANDONED -> "its thread ended without releasing it; it expires with its lease";
            case LEASE_EXPIRED -> "its fixed lease ran out";
        };
    }

    private static void call(LostHoldListener listener, LostHold hold) {
        try {
            listener.holdLost(hold);
        } catch (RuntimeException | Error e) {
            log.error("lost-hold listener {} threw; other listeners still run", listener, e);
        }
    }
}
