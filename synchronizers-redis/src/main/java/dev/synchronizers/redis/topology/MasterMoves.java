package dev.synchronizers.redis.topology;

import dev.synchronizers.redis.topology.SentinelQuery.Named;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sentinel watch's decisions about when to move its {@link Follower}, and the moves: what an
 * announcement that names the current master as the old one leads to ({@link #follow}), and what
 * an answer of a sentinel leads to ({@link #consider}), given the configuration known. It holds
 * that configuration: a master and its epoch as one answer named them, the epoch the current
 * master was named with, and the sentinel whose announcement moved the follower while that move
 * is unconfirmed. A sentinel that lags behind, announcing late the switches it missed, cannot move
 * the follower back; a move on an announcement whose sentinel did not tell the epoch stays
 * unconfirmed until that sentinel answers, and is undone if the answer shows it was stale (the
 * rules are the sentinel watch's class comment).
 *
 * <p>Every method runs on the watch's thread ({@link WatchThread}), one at a time, except that
 * {@link #askUntilAnswered}'s answer is handed back to it.
 */
final class MasterMoves {

    // The logger SentinelTopology logged these under before the watch was split from it: log
    // settings for it keep working. Named by its name, not its class: SentinelTopology uses this
    // class, and this class does not use it back.
    private static final Logger log = LoggerFactory.getLogger("dev.synchronizers.redis.topology.SentinelTopology");

    /**
     * The client side the watch moves from master to master: its connections to the current
     * master and to the next one. Implemented by {@code SentinelTopology}.
     */
    interface Follower {

        /** Returns the master the client talks to now; any thread, without blocking. */
        MasterConnections current();

        /**
         * Connects to the master a sentinel named, by its address. On the watch's thread; blocks
         * until connected, up to the connect timeout.
         *
         * @return the new master's connections, not yet the current ones; or null if it cannot be
         *     reached yet (the watch then asks the sentinels again a moment later) or the client is
         *     closed
         */
        MasterConnections connect(String host, int port);

        /**
         * Makes {@code next}, from {@link #connect}, the current master. On the watch's thread.
         */
        void switchTo(MasterConnections next);
    }

    private final Follower follower;
    private final String masterId;
    private final Duration timeout;
    private final WatchThread thread;
    /** Asks every sentinel for the master again (the watch's resolveAll). */
    private final Runnable askAll;
    /**
     * The newest configuration an answer named: its master and its epoch, from one answer
     * ({@link SentinelQuery#UNKNOWN_EPOCH} if the first answer named none). Written on the worker thread only.
     */
    private volatile Named known;
    /**
     * The epoch an answer named the follower's current master with; {@link SentinelQuery#UNKNOWN_EPOCH} after
     * a move on an announcement its sentinel did not answer in time, until an answer names it.
     * Below {@code known}'s epoch while such a move is unconfirmed. Written on the worker thread only.
     */
    private volatile long currentEpoch;
    /** The sentinel whose announcement moved the follower without an answer, while that move is unconfirmed; else null. */
    private volatile SentinelEar movedBy;

    /**
     * @param first the follower's current master and the configuration epoch it was named with,
     *     as one answer named them
     * @param masterId the name of the master the sentinels watch
     * @param askAll asks every sentinel for the master again, asynchronously
     */
    MasterMoves(Follower follower, Named first, String masterId, Duration timeout, WatchThread thread,
            Runnable askAll) {
        this.follower = follower;
        this.known = first;
        this.currentEpoch = first.epoch();
        this.masterId = masterId;
        this.timeout = timeout;
        this.thread = thread;
        this.askAll = askAll;
    }

    /**
     * Follows an announcement that named the current master ({@code doubted}) as the old one,
     * unless the sentinel that sent it, asked meanwhile, says otherwise. It is asked while the
     * client connects to the announced master, so that a true switch costs no round trip more.
     * The announcement is not enough on its own: a sentinel that lags behind announces the
     * switches it learns of late, and one to an older configuration (back from the current master
     * to the one before it, after a failover and a failover back) names the current master as
     * the old one too; only the configuration epoch tells the two apart. So: if the sentinel names
     * the announced master with an epoch older than the one known, the client stays on its
     * master, whose replies are trusted again once no other announcement about it is being
     * checked; if it names another master now, that answer is considered as any other
     * ({@link #consider}); if it names the announced master with an epoch not older than the one
     * known, the client follows the announcement; if it does not answer within the command
     * timeout, or names no epoch, the client follows it too, unconfirmed, and that sentinel is
     * asked until it answers ({@link #moveUnconfirmed}). On the worker thread.
     */
    void follow(SentinelEar from, MasterConnections doubted, String host, int port) {
        try {
            MasterConnections now = follower.current();
            if (thread.closed() || now.is(host, port)) {
                return;
            }
            if (now != doubted) {
                from.resolve();   // the client has moved since: checked as an announcement about another master
                return;
            }
            CompletableFuture<Named> asked = from.ask();
            MasterConnections next = connectTo(host, port);
            Named named = null;
            try {
                named = asked.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                log.debug("sentinel {} did not tell the new configuration's epoch: {}", from.address(), e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();   // closing
            }
            if (named != null && !(named.host().equals(host) && named.port() == port)) {
                closeUnused(next);
                consider(from, named);   // the sentinel has moved on since, or back
                return;
            }
            // Older, not "not newer": one configuration epoch names one master (askFor pairs them
            // at one moment), so an equal epoch is the configuration the client already has.
            Named before = known;
            if (named != null && named.epoch() != SentinelQuery.UNKNOWN_EPOCH && named.epoch() < before.epoch()) {
                closeUnused(next);
                log.info("sentinel {} names {}:{} with configuration epoch {}, older than the {} the client knows:"
                        + " it lags behind; staying on {}", from.address(), host, port, named.epoch(), before.epoch(),
                        now);
                return;
            }
            now.markStale();
            if (next == null) {
                return;
            }
            if (named != null && named.epoch() != SentinelQuery.UNKNOWN_EPOCH) {
                switchTo(next, named);
            } else {
                moveUnconfirmed(from, next, before);
            }
        } finally {
            doubted.checked();
        }
    }

    private static void closeUnused(MasterConnections next) {
        if (next != null) {
            next.close();
        }
    }

    /**
     * One sentinel named a master, when asked: follow it if its configuration is newer than the
     * one known; after an unconfirmed move, confirm it, or go back to the known configuration's
     * master if the answer shows the move was stale (see the class comment). On the worker thread,
     * so that decisions and moves happen one at a time.
     */
    void consider(SentinelEar from, Named named) {
        MasterConnections now = follower.current();
        if (thread.closed()) {
            return;
        }
        Named before = known;
        boolean unconfirmed = currentEpoch < before.epoch();
        if (named.epoch() == SentinelQuery.UNKNOWN_EPOCH) {
            if (now.is(named.host(), named.port()) && !unconfirmed) {
                return;
            }
            // The sentinel is failing the master over: ask it again once it is done (its
            // announcement of the switch may come first and move the client).
            log.debug("sentinel {} is failing the master over to {}:{}; asking it again", from.address(),
                    named.host(), named.port());
            thread.schedule(from == movedBy ? () -> askUntilAnswered(from, now) : from::resolve,
                    WatchThread.RETRY_MILLIS);
            return;
        }
        if (now.is(named.host(), named.port())) {
            if (named.epoch() >= before.epoch()) {
                known = named;
                currentEpoch = named.epoch();
                movedBy = null;
            } else if (unconfirmed && from == movedBy) {
                moveBack(now, before, "sentinel " + from.address() + ", whose announcement moved the client here,"
                        + " names " + now + " with configuration epoch " + named.epoch());
            }
            return;
        }
        if (named.epoch() > before.epoch()) {
            now.markStale();
            log.info("sentinel {} names {}:{} the master of {} (configuration epoch {}, the client knew {}), not {};"
                    + " following it", from.address(), named.host(), named.port(), masterId,
                    named.epoch(), before.epoch(), now);
            MasterConnections next = connectTo(named.host(), named.port());
            if (next != null) {
                switchTo(next, named);
            }
            return;
        }
        if (unconfirmed && from == movedBy) {
            moveBack(now, before, "sentinel " + from.address() + ", whose announcement moved the client here,"
                    + " names " + named.host() + ":" + named.port() + " with configuration epoch " + named.epoch());
            return;
        }
        if (unconfirmed && now.readOnly() && named.equals(before)) {
            moveBack(now, before, now + " answers READONLY and sentinel " + from.address() + " names "
                    + named.host() + ":" + named.port() + " with configuration epoch " + named.epoch());
            return;
        }
        log.debug("sentinel {} names {}:{} with configuration epoch {}, not newer than the {} known; ignored",
                from.address(), named.host(), named.port(), named.epoch(), before.epoch());
    }

    /**
     * Follows an announcement without the new master's epoch (its sentinel did not answer in
     * time, or named none): the move is unconfirmed until an answer names that master with an
     * epoch not older than the one known, and the announcing sentinel is asked until it answers.
     */
    private void moveUnconfirmed(SentinelEar from, MasterConnections next, Named before) {
        currentEpoch = SentinelQuery.UNKNOWN_EPOCH;
        movedBy = from;
        follower.switchTo(next);
        log.info("moved to {} on the announcement of sentinel {}, which did not tell its configuration epoch;"
                + " asking it until it does (the client knew {}:{} with epoch {})", next, from.address(),
                before.host(), before.port(), before.epoch());
        thread.schedule(() -> askUntilAnswered(from, next), WatchThread.RETRY_MILLIS);
    }

    /**
     * Asks {@code from}, whose announcement moved the follower to {@code moved} unconfirmed, until
     * it answers; stops once the move is confirmed or the follower has moved on.
     */
    private void askUntilAnswered(SentinelEar from, MasterConnections moved) {
        if (thread.closed() || follower.current() != moved || movedBy != from) {
            return;
        }
        from.ask().whenComplete((named, failure) -> {
            if (failure != null) {
                log.debug("sentinel {} did not name the master yet: {}", from.address(), failure.getMessage());
                thread.schedule(() -> askUntilAnswered(from, moved), WatchThread.RETRY_MILLIS);
            } else {
                thread.execute(() -> consider(from, named));
            }
        });
    }

    /**
     * The unconfirmed move to {@code now} was stale: moves back to the master of the known
     * configuration, {@code to}. If it cannot be reached yet, every sentinel is asked again a
     * moment later ({@link #connectTo}); the move stays unconfirmed, and its sentinel's answer or
     * a sentinel naming {@code to} after a {@code READONLY} tries again.
     */
    private void moveBack(MasterConnections now, Named to, String why) {
        now.markStale();
        log.info("{}: the announcement that moved the client there was stale; moving back to {}:{}, the master of"
                + " configuration epoch {}", why, to.host(), to.port(), to.epoch());
        MasterConnections next = connectTo(to.host(), to.port());
        if (next != null) {
            switchTo(next, to);
        }
    }

    /**
     * Connects to a new master; if it cannot be reached yet, asks the sentinels again a moment
     * later (which moves the client then) and returns null.
     */
    private MasterConnections connectTo(String host, int port) {
        MasterConnections next = follower.connect(host, port);
        if (next == null && !thread.closed()) {
            thread.schedule(askAll, WatchThread.RETRY_MILLIS);
        }
        return next;
    }

    /** Moves the follower to {@code next}, the master of {@code named}'s configuration, whose epoch is known. */
    private void switchTo(MasterConnections next, Named named) {
        if (named.epoch() >= known.epoch()) {
            known = named;
        }
        currentEpoch = named.epoch();
        movedBy = null;
        follower.switchTo(next);
    }

}
