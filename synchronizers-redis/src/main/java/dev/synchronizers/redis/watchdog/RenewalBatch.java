package dev.synchronizers.redis.watchdog;

import dev.synchronizers.redis.script.RenewReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One renewal call of a tick: a chunk of leases that share a renew script and a batch group, and
 * the call's answer, which holds per lease, in order, its {@link RenewReply.Outcome}, or an
 * {@link ItemFailure} where the lease was renewed by a call of its own that failed.
 *
 * <p>On a cluster, a call of several items that a slot migration refuses with {@code TRYAGAIN} (its
 * keys split between the slot's old and new master) is sent again item by item at once: each item
 * alone is served, by the old master or through {@code ASK} by the new one.
 *
 * @param leases the leases the call renews, in the order of its items
 * @param answer per lease, its outcome or its own call's failure; fails as a whole if the call did
 */
record RenewalBatch(List<Watchdog.Lease> leases, CompletionStage<List<Object>> answer) {

    /** The watchdog's category, in which users may already tune its messages. */
    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    /** In an answer, in place of an item's outcome: the item's own call failed. */
    record ItemFailure(Throwable failure) {
    }

    /** The keys and arguments of one call of a batched renew script. */
    record Call(String[] keys, String[] args) {

        /**
         * The call of {@code script} that renews {@code leases} for {@code leaseMillis}: the lease
         * first, then each lease's item.
         */
        static Call of(Script script, List<Watchdog.Lease> leases, long leaseMillis) {
            String[] keys = new String[leases.size() * script.keysPerItem];
            String[] args = new String[1 + leases.size() * script.argsPerItem];
            args[0] = Long.toString(leaseMillis);
            for (int i = 0; i < leases.size(); i++) {
                Renewal renewal = leases.get(i).renewal;
                System.arraycopy(renewal.keys(), 0, keys, i * script.keysPerItem, script.keysPerItem);
                System.arraycopy(renewal.itemArgs(), 0, args, 1 + i * script.argsPerItem, script.argsPerItem);
            }
            return new Call(keys, args);
        }
    }

    /**
     * Sends the call that renews {@code chunk} with {@code script}; does not wait for its answer.
     *
     * @param scripts the registry that runs it
     * @param script the renew script the leases share
     * @param chunk the leases, of one batch group
     * @param leaseMillis the lease to set
     * @return the batch, its answer to come
     */
    static RenewalBatch send(ScriptRegistry scripts, Script script, List<Watchdog.Lease> chunk, long leaseMillis) {
        Call call = Call.of(script, chunk, leaseMillis);
        if (chunk.size() == 1) {
            return new RenewalBatch(chunk, scripts.<List<Object>>run(script, call.keys, call.args)
                    .thenApply(reply -> List.of(RenewReply.of(script, reply, 1).outcome(0))));
        }
        CompletionStage<List<Object>> whole = scripts.runBatch(script, call.keys, call.args);
        return new RenewalBatch(chunk, whole.handle((reply, failure) -> {
            if (failure == null) {
                return CompletableFuture.<List<Object>>completedFuture(
                        new ArrayList<>(RenewReply.of(script, reply, chunk.size()).outcomes()));
            }
            if (!ScriptRegistry.tryAgain(failure)) {
                return CompletableFuture.<List<Object>>failedFuture(failure);
            }
            log.debug("watchdog: a renewal call of {} leases was refused during a slot migration ({}); renewing them"
                    + " one by one", chunk.size(), failure.getMessage());
            return oneByOne(scripts, script, chunk, leaseMillis);
        }).thenCompose(stage -> stage));
    }

    /** Renews each lease of {@code chunk} with a call of its own; a call that fails gives an {@link ItemFailure}. */
    private static CompletionStage<List<Object>> oneByOne(ScriptRegistry scripts, Script script,
            List<Watchdog.Lease> chunk, long leaseMillis) {
        List<CompletableFuture<Object>> each = new ArrayList<>();
        for (Watchdog.Lease lease : chunk) {
            Call call = Call.of(script, List.of(lease), leaseMillis);
            CompletionStage<List<Object>> reply = scripts.run(script, call.keys, call.args);
            each.add(reply.handle((renewed, failure) -> failure == null
                    ? (Object) RenewReply.of(script, renewed, 1).outcome(0)
                    : new ItemFailure(failure)).toCompletableFuture());
        }
        return CompletableFuture.allOf(each.toArray(new CompletableFuture<?>[0]))
                .thenApply(ignored -> {
                    List<Object> replies = new ArrayList<>();
                    each.forEach(future -> replies.add(future.join()));
                    return replies;
                });
    }
}
