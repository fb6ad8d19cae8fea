package dev.synchronizers.test;

import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ScheduledFuture;

/** What Redis keeps of one lock name (lock, fair lock or read-write lock). Guarded by the store's lock. */
final class LockState {

    enum Type { LOCK, FAIR, RW }

    /** The owner of a thread hold. A handle's owner is an object of its own. */
    record ThreadKey(InMemorySynchronizers client, long threadId) {
    }

    /** A thread hold that was lost, by owner and mode: its owner's unlocks throw until its count is spent. */
    record LostKey(Object owner, boolean read) {
    }

    /** One waiting acquisition, in arrival order. */
    static final class Waiter {
        final boolean read;

        Waiter(boolean read) {
            this.read = read;
        }
    }

    final InMemorySynchronizers.Store store;
    final Type type;
    final String name;
    long lastToken;
    final List<Hold> holds = new ArrayList<>();
    final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    final Map<LostKey, Hold> lost = new HashMap<>();
    final Map<String, MemCondition.Waiters> conditions = new HashMap<>();

    LockState(InMemorySynchronizers.Store store, Type type, String name) {
        this.store = store;
        this.type = type;
        this.name = name;
    }

    String kind(boolean read) {
        return switch (type) {
            case LOCK -> "lock";
            case FAIR -> "fair lock";
            case RW -> read ? "read lock" : "write lock";
        };
    }

    Hold find(Object owner, boolean read) {
        for (Hold hold : holds) {
            if (hold.read == read && hold.owner.equals(owner)) {
                return hold;
            }
        }
        return null;
    }

    /** Whether an acquisition by {@code owner} in this mode may be granted now. */
    boolean grantable(Object owner, boolean read, Waiter waiter, boolean barge) {
        for (Hold hold : holds) {
            if (!hold.owner.equals(owner) && (!read || !hold.read)) {
                return false;
            }
        }
        if (barge || type == Type.LOCK) {
            return true;
        }
        if (type == Type.FAIR) {
            return queue.isEmpty() || queue.peekFirst() == waiter;
        }
        if (read) {
            if (find(owner, false) != null) {
                return true; // a writer takes the read lock (downgrade) past waiting writers
            }
            for (Waiter queued : queue) {
                if (!queued.read) {
                    return false;
                }
            }
            return true;
        }
        for (Waiter queued : queue) {
            if (!queued.read) {
                return queued == waiter;
            }
        }
        return true;
    }

    Hold grant(InMemorySynchronizers client, Object owner, long threadId, boolean read, long leaseNanos, int count) {
        Hold hold = new Hold(this, client, owner, threadId, read, ++lastToken);
        hold.count = count;
        hold.leaseNanos = leaseNanos;
        holds.add(hold);
        if (leaseNanos > 0) {
            fix(hold, System.nanoTime() + leaseNanos, false);
        }
        return hold;
    }

    /** Gives {@code hold} a fixed lease ending at {@code deadline}; {@code silent}: it then ends unnoticed. */
    void fix(Hold hold, long deadline, boolean silent) {
        if (hold.expiry != null) {
            hold.expiry.cancel(false);
        }
        hold.fixed = true;
        hold.deadline = deadline;
        ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
        self[0] = store.at(deadline, () -> {
            if (!hold.ended && hold.expiry == self[0]) {
                if (silent) {
                    end(hold);
                } else {
                    lose(hold, LostHold.Cause.LEASE_EXPIRED, false);
                }
            }
        });
        hold.expiry = self[0];
    }

    /** Ends {@code hold} without a loss (a release, or a lease its owner chose to let run out). */
    void end(Hold hold) {
        hold.ended = true;
        holds.remove(hold);
        if (hold.expiry != null) {
            hold.expiry.cancel(false);
        }
        if (hold.handle != null) {
            hold.handle.released = true;
            CompletableFutures.fail(store, hold.lostStage, new CancellationException("released"));
        }
        store.changed.signalAll();
    }

    /** Ends {@code hold} as lost: the owner is told (unless {@code tell} is false) and its release throws. */
    void lose(Hold hold, LostHold.Cause cause, boolean tell) {
        if (hold.handle != null && hold.handle.released) {
            end(hold); // let go by releaseAfter: no longer its owner's hold, so nobody is told
            return;
        }
        hold.ended = true;
        hold.lostCause = cause;
        holds.remove(hold);
        if (hold.expiry != null) {
            hold.expiry.cancel(false);
        }
        if (hold.handle == null) {
            lost.put(new LostKey(hold.owner, hold.read), hold);
        }
        LostHold report = new LostHold(name, kind(hold.read), hold.threadId, hold.token, cause, hold.handle);
        if (tell) {
            hold.client.tell(report);
        }
        CompletableFutures.complete(store, hold.lostStage, report);
        store.changed.signalAll();
    }

    int loseAll(LostHold.Cause cause, boolean tell) {
        List<Hold> all = new ArrayList<>(holds);
        for (Hold hold : all) {
            lose(hold, cause, tell);
        }
        return all.size();
    }

    /** Throws for the lost thread hold of {@code key} if any (spending one level of it); else returns. */
    void throwIfLost(LostKey key, boolean spend) {
        Hold hold = lost.get(key);
        if (hold == null) {
            return;
        }
        if (spend && --hold.count <= 0) {
            lost.remove(key);
        }
        throw lostException(hold);
    }

    LostHoldException lostException(Hold hold) {
        return new LostHoldException(name, hold.lostCause, kind(hold.read) + " '" + name + "' (token "
                + hold.token + ") was lost: " + hold.lostCause);
    }

    /** The waiters as getQueueLength() counts them: a read-write lock's halves count the waiting writers, plus one if readers wait. */
    int queueLength() {
        if (type != Type.RW) {
            return queue.size();
        }
        return waiting(false) + (waiting(true) > 0 ? 1 : 0);
    }

    int waiting(boolean read) {
        int count = 0;
        for (Waiter waiter : queue) {
            if (waiter.read == read) {
                count++;
            }
        }
        return count;
    }

    @Override
    public String toString() {
        return type + " " + Objects.toString(name);
    }
}
