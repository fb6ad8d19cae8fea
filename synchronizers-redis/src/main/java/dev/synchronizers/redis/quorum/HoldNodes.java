package dev.synchronizers.redis.quorum;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.client.ClientContext;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.support.Disconnected;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/** The nodes of a {@link QuorumLockBackend} as the lease of one hold (by its attempt's owner string) uses them. */
final class HoldNodes implements QuorumLease.Nodes {

    private final QuorumLockBackend backend;
    private final String name;
    private final LockKeys keys;
    private final ClientContext context;
    private final QuorumNodes redlock;
    private final String owner;
    private final long token;

    HoldNodes(QuorumLockBackend backend, String owner, long token) {
        this.backend = backend;
        this.name = backend.name;
        this.keys = backend.keys;
        this.context = backend.context;
        this.redlock = backend.redlock;
        this.owner = owner;
        this.token = token;
    }
    @Override
    public int size() {
        return redlock.nodes.size();
    }

    @Override
    public int quorum() {
        return redlock.quorum;
    }

    @Override
    public long leaseMillis() {
        return context.leaseMillis;
    }

    @Override
    public long driftMillis(long millis) {
        return redlock.driftMillis(millis);
    }

    @Override
    public HoldLease keep(int index, long fixedMillis, long startNanos, Thread owningThread,
            Consumer<LostHold.Cause> onLost, BooleanSupplier takeBack) {
        return redlock.nodes.get(index).watchdog().register(new Renewal(Script.REDLOCK_RENEW,
                keys.keysFor(Script.REDLOCK_RENEW), new String[] {owner, Long.toString(token)},
                fixedMillis, startNanos, owningThread, onLost, takeBack, null));
    }

    @Override
    public void stopKeeping(int index, HoldLease lease) {
        redlock.nodes.get(index).watchdog().unregister((Watchdog.Lease) lease);
    }

    @Override
    public CompletionStage<Long> release(int index, long deadlineNanos, boolean giveBack,
            BooleanSupplier mayHaveHeld) {
        if (giveBack) {
            context.metrics.followUp(Recorder.FollowUp.GIVE_BACK);
        }
        RedlockNode node = redlock.nodes.get(index);
        return backend.giveBackRetried(node, owner, "release of " + QuorumLockBackend.KIND + " '" + name + "'",
                deadlineNanos, failure -> !Disconnected.isRefusal(failure) || mayHaveHeld.getAsBoolean());
    }
}
