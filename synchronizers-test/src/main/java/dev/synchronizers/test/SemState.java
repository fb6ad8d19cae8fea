package dev.synchronizers.test;

import dev.synchronizers.LostHold;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/** What Redis keeps of one semaphore: the total and the grants. Guarded by the store's lock. */
final class SemState {

    static final String KIND = "semaphore";

    /** One acquisition's permits: the client's (by thread) or a handle's. */
    static final class Grant {
        final InMemorySynchronizers client;
        final long threadId;
        int permits;
        MemPermitHandle handle;
        boolean fixed;
        long deadline;
        ScheduledFuture<?> expiry;
        boolean ended;
        LostHold.Cause lostCause;
        final CompletableFuture<LostHold> lostStage = new CompletableFuture<>();

        Grant(InMemorySynchronizers client, long threadId, int permits) {
            this.client = client;
            this.threadId = threadId;
            this.permits = permits;
        }
    }

    final InMemorySynchronizers.Store store;
    final String name;
    /** Null until set. */
    Integer total;
    final List<Grant> grants = new ArrayList<>();
    final List<Grant> lost = new ArrayList<>();
    final ArrayDeque<Object> queue = new ArrayDeque<>();

    SemState(InMemorySynchronizers.Store store, String name) {
        this.store = store;
        this.name = name;
    }

    int total() {
        return total == null ? 0 : total;
    }

    int available() {
        int held = 0;
        for (Grant grant : grants) {
            held += grant.permits;
        }
        return total() - held;
    }

    void end(Grant grant) {
        grant.ended = true;
        grants.remove(grant);
        if (grant.expiry != null) {
            grant.expiry.cancel(false);
        }
        CompletableFutures.fail(store, grant.lostStage, new CancellationException("released"));
        store.changed.signalAll();
    }

    void lose(Grant grant, LostHold.Cause cause) {
        grant.ended = true;
        grant.lostCause = cause;
        grants.remove(grant);
        if (grant.expiry != null) {
            grant.expiry.cancel(false);
        }
        if (grant.handle == null) {
            lost.add(grant);
        }
        LostHold report = new LostHold(name, KIND, grant.handle == null ? grant.threadId : -1, -1, cause);
        grant.client.tell(report);
        CompletableFutures.complete(store, grant.lostStage, report);
        store.changed.signalAll();
    }

    int loseAll(LostHold.Cause cause) {
        List<Grant> all = new ArrayList<>(grants);
        for (Grant grant : all) {
            lose(grant, cause);
        }
        return all.size();
    }

    /** The grant ends unnoticed at {@code deadline} (a closed client's permits). */
    void expireAt(Grant grant, long deadline) {
        grant.fixed = true;
        grant.deadline = deadline;
        grant.expiry = store.at(deadline, () -> {
            if (!grant.ended) {
                end(grant);
            }
        });
    }
}
