package dev.synchronizers.redis.watchdog;

import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.RenewReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongPredicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a watchdog checks, after a tick, how many replicas have its renewals: the contract is
 * {@link Watchdog#acknowledgeRenewals}'s. At most one check is under way at a time.
 */
final class RenewalAcks {

    /** The watchdog's category, in which users may already tune its messages. */
    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    /** The side connection's scripts, which write one renewed lease again after a tick. */
    private final ScriptRegistry scripts;
    /** Sends the WAIT that follows that write on the side connection. */
    private final Supplier<CompletionStage<Long>> waitCall;
    /** Whether the WAIT's answer meets the requirement. */
    private final LongPredicate met;
    private final Recorder recorder;
    /** Whether a tick's check is still under way: the next tick then sends none. */
    private final AtomicBoolean checking = new AtomicBoolean();

    RenewalAcks(ScriptRegistry scripts, Supplier<CompletionStage<Long>> waitCall, LongPredicate met, Recorder recorder) {
        this.scripts = scripts;
        this.waitCall = waitCall;
        this.met = met;
        this.recorder = recorder;
    }

    /**
     * Writes one lease, renewed by this tick, once more on the side connection and waits there for
     * the replicas, in the background; reports the tick if fewer acknowledged than asked. Does
     * nothing while the previous check is under way.
     *
     * @param script the lease's renew script
     * @param call the call of that script that renews the lease alone
     * @param renewed how many leases the tick renewed, for the warning
     */
    void check(Script script, RenewalBatch.Call call, int renewed) {
        if (!checking.compareAndSet(false, true)) {
            return;
        }
        CompletionStage<ScriptRegistry.Followed<List<Object>>> checked;
        try {
            checked = scripts.runFollowedBy(script, call.keys(), call.args(), waitCall);
        } catch (RuntimeException e) {
            checking.set(false);
            throw e;
        }
        checked.whenComplete((both, failure) -> {
            checking.set(false);
            if (failure != null) {
                recorder.replicaAcksShort("renew");
                log.warn("watchdog could not learn how many replicas have its renewals: {}", failure.getMessage());
            } else if (!renewed(RenewReply.of(script, both.reply(), 1).outcome(0))) {
                // The lease ended meanwhile: nothing was written again, and the WAIT proves nothing.
                log.debug("watchdog could not check its renewals' replicas this tick: the lease it wrote again ended");
            } else if (!met.test(both.followUp())) {
                recorder.replicaAcksShort("renew");
                log.warn("watchdog renewed {} leases, but only {} replicas acknowledged them: a failover now could"
                        + " forget them", renewed, both.followUp());
            }
        });
    }

    /**
     * Whether a renewal wrote the lease again: renewed, renewed and asked back (a lock cache), or a
     * signal renewed (a condition waiter).
     */
    private static boolean renewed(RenewReply.Outcome outcome) {
        return outcome == RenewReply.Outcome.RENEWED || outcome == RenewReply.Outcome.ASKED_BACK
                || outcome == RenewReply.Outcome.SIGNALLED;
    }
}
