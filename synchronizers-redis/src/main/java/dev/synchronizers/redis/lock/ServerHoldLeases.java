package dev.synchronizers.redis.lock;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.script.LockPicture;
import dev.synchronizers.redis.script.ReadWriteLockPicture;
import dev.synchronizers.redis.script.RenewReply;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Renewal;
import dev.synchronizers.redis.watchdog.Watchdog;
import java.util.List;
import java.util.function.Consumer;

/**
 * What a {@link ServerLockBackend} does with the lease of a booked hold besides renewing it, which
 * the watchdog does: verify the hold in Redis, relet it with a fixed lease, declare it lost, and
 * stop keeping it. A hold taken from this client's cache is the cache's to keep.
 */
final class ServerHoldLeases {

    private final String name;
    private final String kind;
    private final LockKeys keys;
    private final LockPolicy policy;
    private final Machinery machinery;
    /** This client's cache of the lock, or null (see {@link ServerLockBackend}). */
    private final LockCache cache;

    ServerHoldLeases(ServerLockBackend backend, LockCache cache) {
        this.name = backend.name;
        this.kind = backend.kind;
        this.keys = backend.keys;
        this.policy = backend.policy;
        this.machinery = backend.machinery;
        this.cache = cache;
    }

    /** One read-only script call: the lock's picture (both halves' for a read-write lock) names the hold. */
    boolean stillHeld(Holds.Hold held) {
        String what = "verify " + kind + " '" + name + "'";
        if (policy == LockPolicy.READ || policy == LockPolicy.WRITE) {
            ReadWriteLockPicture picture = ReadWriteLockPicture.of(Script.RW_SNAPSHOT, machinery.await(
                    machinery.scripts.run(Script.RW_SNAPSHOT, keys.keysFor(Script.RW_SNAPSHOT)), what));
            if (policy == LockPolicy.READ) {
                return picture.readers().stream()
                        .anyMatch(reader -> reader.owner().equals(held.owner) && reader.token() == held.token);
            }
            return picture.writers().stream()
                    .anyMatch(writer -> writer.owner().equals(held.owner) && writer.token() == held.token);
        }
        LockPicture picture = LockPicture.of(Script.LOCK_SNAPSHOT, machinery.await(
                machinery.scripts.run(Script.LOCK_SNAPSHOT, keys.keysFor(Script.LOCK_SNAPSHOT)), what));
        return picture.holders().stream()
                .anyMatch(holder -> holder.owner().equals(held.owner)
                        && Long.toString(holder.token()).equals(held.checkToken));
    }

    /** One call of the renew script with the new lease, token-checked as every renewal is. */
    HoldLease relet(Holds.Hold held, long millis, Consumer<LostHold.Cause> onLost) {
        long sent = System.nanoTime();
        String[] itemArgs = {held.owner, Long.toString(held.token)};
        List<Object> reply = machinery.await(machinery.scripts.run(policy.renew, keys.keysFor(policy.renew),
                Long.toString(millis), itemArgs[0], itemArgs[1]), "set the lease of " + kind + " '" + name + "'");
        if (RenewReply.of(policy.renew, reply, 1).outcome(0) != RenewReply.Outcome.RENEWED) {
            machinery.watchdog.declareLost((Watchdog.Lease) held.lease, LostHold.Cause.GONE);
            return null;
        }
        if (!machinery.watchdog.unregister((Watchdog.Lease) held.lease)) {
            return null;   // reported lost meanwhile: its owner was told so already
        }
        return machinery.watchdog.register(new Renewal(policy.renew, keys.keysFor(policy.renew), itemArgs, millis,
                sent, null, onLost, null, null));
    }

    /** See {@link ServerLockBackend#declareLost}: a cache's take is the cache's to end. */
    void declareLost(HoldLease lease, LostHold.Cause cause) {
        if (lease instanceof CacheTake take) {
            cache.declareLost(take, cause);
            return;
        }
        machinery.watchdog.declareLost((Watchdog.Lease) lease, cause);
    }

    /** See {@link ServerLockBackend#endLease}. */
    boolean endLease(HoldLease lease) {
        if (lease instanceof CacheTake take) {
            // The cache's own lease goes on; release() decides whether the cache stays.
            return take.endedBecause() == null;
        }
        return machinery.watchdog.unregister((Watchdog.Lease) lease);
    }
}
