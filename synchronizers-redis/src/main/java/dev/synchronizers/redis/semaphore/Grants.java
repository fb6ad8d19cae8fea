package dev.synchronizers.redis.semaphore;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.client.LossSignal;
import dev.synchronizers.redis.watchdog.HoldLease;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * One client's books of the permits it holds of one semaphore: its grants, live or lost, in
 * acquisition order, and the order in which a plain {@code release(n)} takes from them.
 *
 * <p>Thread-safe: every method takes the books' lock, a {@link ReentrantLock} that is never held
 * around I/O. The books do no I/O and know nothing of Redis; what they need done for a grant (its
 * lease registered or stopped, its hold ended in the metrics) they ask of a {@link Keeper}, under
 * the lock, so that a loss reported by the watchdog and a release never see a grant half booked.
 *
 * <p>Invariants: a grant in the books has permits left ({@code permits > 0}); a handle's grant
 * ({@link Grant#ofHandle}) is never taken or counted by a plain release, and leaves the books as
 * soon as it is lost or released; a grant's hold ends in the metrics at most once; at most
 * {@link #MAX_LOST_GRANTS} lost grants are remembered, the oldest forgotten first.
 */
public final class Grants {

    /** Lost grants remembered for their release to report; older ones beyond this are forgotten. */
    public static final int MAX_LOST_GRANTS = 1024;

    /**
     * What the books ask of the semaphore around them for a grant. Called under the books' lock:
     * an implementation must not block or do I/O.
     */
    public interface Keeper {

        /**
         * Stops renewing a grant's lease, before its release reaches Redis, so that the release is
         * never mistaken for a loss.
         *
         * @param lease the grant's lease
         * @return true if the lease was still active; false if it had already ended as lost
         */
        boolean stopRenewing(HoldLease lease);

        /**
         * Ends a grant's hold in the metrics; called once per grant.
         *
         * @param metric what the metrics returned when the hold started, possibly null
         * @param released true if a release ended it while it was not known lost
         */
        void holdEnded(Object metric, boolean released);
    }

    /**
     * What a plain release took, for the caller to send and report.
     *
     * @param keep the live grants it took from, as {@code <grant>=<permits kept>} separated by
     *     spaces (the argument of semaphore-release.lua); empty if it took only lost permits
     * @param lostCause why the last lost grant it reached was lost, or null if it reached none
     * @param lostPermits how many of the permits it took were lost
     */
    public record Taken(String keep, LostHold.Cause lostCause, int lostPermits) {
    }

    private final String what;
    private final Keeper keeper;
    /** Guards {@link #grants} and the grants' mutable fields, never around I/O. */
    private final ReentrantLock books = new ReentrantLock();
    /** This client's grants with permits left, live or lost, in acquisition order. */
    private final List<Grant> grants = new ArrayList<>();

    /**
     * @param what the semaphore as messages name it, e.g. {@code semaphore 'orders'}
     * @param keeper what the books ask of the semaphore for a grant
     */
    public Grants(String what, Keeper keeper) {
        this.what = what;
        this.keeper = keeper;
    }

    /**
     * Books a grant the client now holds, and, under the books' lock, gives it its lease, so that
     * a loss of the lease finds it booked.
     *
     * @param grant a grant not booked before
     * @param leaseFor registers the grant's lease; must not block or do I/O
     * @return the grant
     */
    public Grant add(Grant grant, Function<Grant, HoldLease> leaseFor) {
        books.lock();
        try {
            grants.add(grant);
            grant.lease = leaseFor.apply(grant);
        } finally {
            books.unlock();
        }
        return grant;
    }

    /**
     * Takes out the grants named {@code grantId}, which were never the caller's: stops renewing
     * them and ends their holds as not released. Does nothing if none is booked.
     */
    public void removeUnreplicated(String grantId) {
        books.lock();
        try {
            for (Iterator<Grant> it = grants.iterator(); it.hasNext(); ) {
                Grant grant = it.next();
                if (grant.id.equals(grantId)) {
                    it.remove();
                    keeper.stopRenewing(grant.lease);
                    endHold(grant, false);
                }
            }
        } finally {
            books.unlock();
        }
    }

    /**
     * Marks a grant lost and ends its hold as not released. A plain grant stays in the books as lost,
     * for the release that reaches it to report; a handle's grant leaves them, since only its
     * handle, which keeps it, can reach it. Then forgets the oldest lost grants beyond
     * {@link #MAX_LOST_GRANTS}.
     */
    public void lost(Grant grant, LostHold.Cause cause) {
        books.lock();
        try {
            grant.lost = cause;
            endHold(grant, false);
            if (grant.ofHandle) {
                grants.remove(grant);
            }
            long lostGrants = grants.stream().filter(g -> g.lost != null).count();
            for (var it = grants.iterator(); lostGrants > MAX_LOST_GRANTS && it.hasNext(); ) {
                if (it.next().lost != null) {
                    it.remove();
                    lostGrants--;
                }
            }
        } finally {
            books.unlock();
        }
    }

    /**
     * Takes {@code permits} from the grants a plain release by {@code threadId} may take from, in
     * {@link #releaseOrder} order, all or nothing. A grant left with no permits leaves the books:
     * its lease is stopped and its hold ended as released, unless it turns out lost.
     *
     * @param permits at least 1
     * @return what was taken, for the caller to send to Redis and report
     * @throws IllegalStateException if those grants hold fewer permits; then nothing changes
     */
    public Taken release(long threadId, int permits) {
        StringBuilder keep = new StringBuilder();
        LostHold.Cause lostCause = null;
        int lostPermits = 0;
        books.lock();
        try {
            List<Grant> order = releaseOrder(threadId);
            int have = 0;
            for (Grant grant : order) {
                have += grant.permits;
            }
            if (have < permits) {
                int handles = permitsOfHandles();
                throw new IllegalStateException(what + ": cannot release " + permits
                        + " permits: this client holds " + have
                        + (handles > 0 ? " outside handles (its handles hold " + handles + " more, which only"
                                + " PermitHandle.release() releases)" : ""));
            }
            int left = permits;
            for (Iterator<Grant> it = order.iterator(); left > 0 && it.hasNext(); ) {
                Grant grant = it.next();
                int taken = Math.min(left, grant.permits);
                left -= taken;
                grant.permits -= taken;
                if (grant.permits == 0) {
                    grants.remove(grant);
                    if (grant.lost == null && !keeper.stopRenewing(grant.lease)) {
                        grant.lost = grant.lease.endedBecause();
                    }
                    if (grant.lost == null) {
                        endHold(grant, true);
                    }
                }
                if (grant.lost != null) {
                    lostCause = grant.lost;
                    lostPermits += taken;
                } else {
                    keep.append(keep.length() == 0 ? "" : " ").append(grant.id).append('=').append(grant.permits);
                }
            }
        } finally {
            books.unlock();
        }
        return new Taken(keep.toString(), lostCause, lostPermits);
    }

    /**
     * Takes a handle's grant out of the books, its handle having just been marked released. If it
     * is live, stops renewing it and ends its hold as released.
     *
     * @return null if it was live, for the caller to release in Redis; otherwise why it was lost
     */
    public LostHold.Cause releaseHandle(Grant grant) {
        books.lock();
        try {
            grants.remove(grant);
            LostHold.Cause lostCause = grant.lost;
            if (lostCause == null && !keeper.stopRenewing(grant.lease)) {
                // Lost just now: the watchdog reports it and gives it up.
                lostCause = Objects.requireNonNullElse(grant.lease.endedBecause(), LostHold.Cause.GONE);
            }
            if (lostCause == null) {
                endHold(grant, true);
            }
            return lostCause;
        } finally {
            books.unlock();
        }
    }

    /**
     * The grants a release by {@code threadId} takes from, in order: the thread's lost grants, its
     * live ones, then other threads' lost grants and live ones, each in acquisition order. Never a
     * handle's grant: that is its handle's to release.
     *
     * @return a new list, a snapshot of the books
     */
    public List<Grant> releaseOrder(long threadId) {
        books.lock();
        try {
            List<Grant> order = new ArrayList<>(grants.size());
            for (int pass = 0; pass < 4; pass++) {
                boolean own = pass < 2;
                boolean lost = pass % 2 == 0;
                for (Grant grant : grants) {
                    if (!grant.ofHandle && (grant.threadId == threadId) == own && (grant.lost != null) == lost) {
                        order.add(grant);
                    }
                }
            }
            return order;
        } finally {
            books.unlock();
        }
    }

    /** The live permits of this client's handles. */
    public int permitsOfHandles() {
        books.lock();
        try {
            int held = 0;
            for (Grant grant : grants) {
                if (grant.ofHandle && grant.lost == null) {
                    held += grant.permits;
                }
            }
            return held;
        } finally {
            books.unlock();
        }
    }

    /**
     * What the books hold, for {@code toString()}: {@code held by this client: <live permits>},
     * then {@code (<n> by handles)} if handles hold some, then {@code , lost: <n>} if some are lost.
     */
    public String describe() {
        books.lock();
        try {
            int held = 0;
            int lost = 0;
            for (Grant grant : grants) {
                if (grant.lost == null) {
                    held += grant.permits;
                } else {
                    lost += grant.permits;
                }
            }
            int handles = permitsOfHandles();
            return "held by this client: " + held + (handles > 0 ? " (" + handles + " by handles)" : "")
                    + (lost > 0 ? ", lost: " + lost : "");
        } finally {
            books.unlock();
        }
    }

    /** Ends a grant's hold in the metrics, once: released, or lost. Called under {@link #books}. */
    private void endHold(Grant grant, boolean released) {
        if (!grant.ended) {
            grant.ended = true;
            Object metric = grant.metric;
            grant.metric = null;
            keeper.holdEnded(metric, released);
        }
    }

    /**
     * One acquisition's permits, counted in Redis under its own name. Its mutable fields are
     * guarded by the books' lock once it is booked.
     */
    public static final class Grant {
        public final String id;
        /** The acquiring thread, or -1 for a handle's grant. */
        final long threadId;
        /** Whether a {@link dev.synchronizers.PermitHandle} owns it: then only that handle releases it, all at once. */
        final boolean ofHandle;
        public int permits;
        /** Set when booked ({@link #add}); the lease the watchdog renews. */
        public HoldLease lease;
        /** Null while live; why it was lost, once the watchdog says so. */
        LostHold.Cause lost;
        /** The grant's handle in the metrics, until its hold ends. */
        Object metric;
        /** Whether its hold has ended in the metrics. */
        boolean ended;
        /** For a handle's grant, its handle's {@code lost()} stage; null for another grant. */
        final LossSignal loss;

        /**
         * @param threadId the acquiring thread, or -1 for a handle's grant
         * @param metric what the metrics returned when the hold started, possibly null
         * @param loss for a handle's grant, its handle's {@code lost()} stage; null for another grant
         */
        public Grant(String id, long threadId, int permits, boolean ofHandle, Object metric, LossSignal loss) {
            this.id = id;
            this.threadId = threadId;
            this.permits = permits;
            this.ofHandle = ofHandle;
            this.metric = metric;
            this.loss = loss;
        }
    }
}
