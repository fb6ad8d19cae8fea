package dev.synchronizers.redis.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHold;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.FencedCounter;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.testkit.RedisSentinels;
import dev.synchronizers.testkit.RedisServer;
import dev.synchronizers.testkit.RedisServers;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.sentinel.api.sync.RedisSentinelCommands;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The synchronizers on a master with two replicas under three sentinels, reached with a
 * {@code redis-sentinel://} URI: they work, and through a failover the clients follow the new
 * master, holds that were replicated survive, and waiters proceed.
 */
@Tag("topology")
class SentinelTest extends SentinelTestBase {

    @Test
    void create_sentinelUri_everySynchronizerWorksOnTheMaster() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.create(sentinels.sentinelUri()));
        DistributedLock lock = client.lock(prefix + name);
        lock.lock();
        assertEquals(1L, opened.commands(sentinels.master().uri()).exists(LockKeys.of("sync", prefix + name).lock()),
                "the hold lives on the master the sentinels name");
        lock.unlock();
        DistributedSemaphore semaphore = client.semaphore(prefix + name);
        assertTrue(semaphore.trySetPermits(1));
        semaphore.acquire();
        semaphore.release();
        DistributedCountDownLatch latch = client.countDownLatch(prefix + name);
        assertTrue(latch.trySetCount(1));
        latch.countDown();
        assertTrue(latch.await(1, TimeUnit.SECONDS));
    }

    /**
     * A failover while one client holds a lock and another waits for it: both clients follow the
     * new master, the replicated hold (its lease far longer than the failover) is still the
     * holder's, with no loss reported, and its release wakes the waiter on the new master.
     */
    @Test
    void failover_holdSurvivesAndTheWaiterProceedsOnTheNewMaster() throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        DistributedLock holder = client(lost).lock(name);
        DistributedLock waiting = client(lost).lock(name);
        holder.lock();
        long token = holder.fencingToken();
        Background<Long> waiter = Background.start("waiter", () -> {
            throughFailover(() -> {
                waiting.lock();
                return true;
            });
            long next = waiting.fencingToken();
            waiting.unlock();
            return next;
        });
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        RedisServer old = sentinels.master();

        RedisServer now = sentinels.failover();

        assertNotEquals(old, now);
        Await.until("the holder's client answers from the new master", () -> {
            try {
                return holder.isLocked();
            } catch (SynchronizerUnavailableException e) {
                return false;
            }
        });
        assertTrue(holder.isHeldByCurrentThread(), "the hold survived the failover");
        holder.unlock();
        assertTrue(waiter.get() > token, "the waiter got the lock with a newer token");
        assertEquals(List.of(), List.copyOf(lost), "a replicated hold is not lost in a coordinated failover");
    }

    /**
     * A semaphore holder with a waiter, and a fair lock's holder with a queued waiter, across a
     * failover: the permits and places survive (or would be reported lost), and once the holders
     * release on the new master, both waiters proceed.
     */
    @Test
    void semaphoreAndFairQueue_failover_waitersProceed() throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        RedisSynchronizers a = client(lost);
        RedisSynchronizers b = client(lost);
        DistributedSemaphore semaphore = a.semaphore(name);
        DistributedLock fair = a.fairLock(name);
        assertTrue(semaphore.trySetPermits(1));
        semaphore.acquire();
        fair.lock();
        Background<Boolean> permitWaiter = Background.start("permit-waiter", () -> {
            boolean got = throughFailover(() -> b.semaphore(name).tryAcquire(30, TimeUnit.SECONDS));
            b.semaphore(name).release();
            return got;
        });
        Background<Boolean> fairWaiter = Background.start("fair-waiter", () -> {
            boolean got = throughFailover(() -> b.fairLock(name).tryLock(30, TimeUnit.SECONDS));
            b.fairLock(name).unlock();
            return got;
        });
        Await.until("both waiters sleep on their wake-ups", () -> RedisState.sleepsOnWakeup(permitWaiter.thread())
                && RedisState.sleepsOnWakeup(fairWaiter.thread()));

        sentinels.failover();
        Await.until("the holder's client answers from the new master", () -> {
            try {
                return fair.isLocked();
            } catch (SynchronizerUnavailableException e) {
                return false;
            }
        });
        semaphore.release();
        fair.unlock();

        assertTrue(permitWaiter.get(), "the permit waiter got the permit");
        assertTrue(fairWaiter.get(), "the queued fair waiter got the lock");
        assertEquals(List.of(), List.copyOf(lost), "nothing replicated was lost in the failover");
    }

    /* --------------- failovers under load --------------- */

    /** Without replica acknowledgement: the master killed under 2 clients x 2 threads. */
    @Test
    void lock_masterKilledUnderLoad_noErrorAfterTheFailoverAndEveryOverlapReported() throws Exception {
        killMasterUnderLoad(false);
    }

    /** The same with {@code replicaAcks(1, 100 ms)}: every hold a thread got was on a replica. */
    @Test
    void lock_masterKilledUnderLoadWithReplicaAcks_noErrorAfterTheFailoverAndEveryOverlapReported() throws Exception {
        killMasterUnderLoad(true);
    }

    /**
     * 2 clients x 2 threads increment a fencing-token-checked counter under one lock while the
     * master is killed (SIGKILL) and a replica promoted. Once every client works again, no error
     * reaches a caller; no update is lost; every hold the counter refused as stale (an overlap)
     * was reported lost; and the killed server, restarted, rejoins as a replica. Prints the
     * failover time a client saw (first error to first success) and the holds lost.
     */
    private void killMasterUnderLoad(boolean replicaAcks) throws Exception {
        Queue<LostHold> reported = new ConcurrentLinkedQueue<>();
        List<DistributedLock> locks = new ArrayList<>();
        for (int c = 0; c < 2; c++) {
            RedisSynchronizers.Builder builder = RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                    .keyPrefix(prefix).lease(Duration.ofSeconds(3)).commandTimeout(Duration.ofSeconds(2))
                    .lostHoldListener(reported::add, Runnable::run);
            if (replicaAcks) {
                builder.replicaAcks(1, Duration.ofMillis(100));
            }
            locks.add(opened.add(builder.build()).lock(name));
        }
        FencedCounter counter = new FencedCounter();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean settled = new AtomicBoolean();
        AtomicLong firstError = new AtomicLong();
        AtomicLong firstSuccessAfter = new AtomicLong();
        Queue<Throwable> afterSettling = new ConcurrentLinkedQueue<>();
        List<Background<Void>> workers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            DistributedLock lock = locks.get(t % 2);
            workers.add(Background.start("worker-" + t, () -> {
                while (!stop.get()) {
                    try {
                        lock.lock();
                    } catch (SynchronizerUnavailableException e) {
                        firstError.compareAndSet(0, System.nanoTime());
                        if (settled.get()) {
                            afterSettling.add(e);
                        }
                        continue;
                    }
                    if (firstError.get() != 0) {
                        firstSuccessAfter.compareAndSet(0, System.nanoTime());
                    }
                    long token = lock.fencingToken();
                    try {
                        long read = counter.read(token);
                        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                        counter.write(token, read + 1);
                    } finally {
                        try {
                            lock.unlock();
                        } catch (LostHoldException e) {
                            // reported to the listener as well; checked below
                        } catch (SynchronizerUnavailableException e) {
                            firstError.compareAndSet(0, System.nanoTime());
                            if (settled.get()) {
                                afterSettling.add(e);
                            }
                        }
                    }
                }
                return null;
            }));
        }
        Await.until("100 increments before the failover", () -> counter.accepted() >= 100);
        RedisServer old = sentinels.master();
        old.kill();
        sentinels.awaitMasterChangedFrom(old, 1);
        Await.until("every client locks and unlocks again after the failover", () -> {
            for (DistributedLock lock : locks) {
                try {
                    if (!lock.tryLock(1, TimeUnit.SECONDS)) {
                        return false;
                    }
                    lock.unlock();
                } catch (SynchronizerUnavailableException | LostHoldException | InterruptedException e) {
                    return false;
                }
            }
            return true;
        });
        settled.set(true);
        long atSettling = counter.accepted();
        Await.until("100 increments after the failover", () -> counter.accepted() >= atSettling + 100);
        stop.set(true);
        for (Background<Void> worker : workers) {
            worker.get();
        }
        old.restart();
        sentinels.awaitReplicas(2);

        assertEquals(List.of(), List.copyOf(afterSettling), "errors after the failover was over");
        assertEquals(counter.accepted(), counter.value(), "an update was lost");
        Set<Long> reportedTokens = new HashSet<>();
        reported.forEach(hold -> reportedTokens.add(hold.fencingToken()));
        assertTrue(reportedTokens.containsAll(counter.refusedTokens()),
                "holds refused as stale but never reported lost: " + counter.refusedTokens() + " vs " + reportedTokens);
        System.out.printf("sentinel failover (replicaAcks %s): client saw %d ms from first error to first success;"
                        + " %d increments, %d stale reads or writes refused, %d holds reported lost%n",
                replicaAcks ? "on" : "off",
                firstError.get() == 0 || firstSuccessAfter.get() == 0 ? -1
                        : TimeUnit.NANOSECONDS.toMillis(firstSuccessAfter.get() - firstError.get()),
                counter.accepted(), counter.refused(), reported.size());
    }

    /**
     * The master paused (SIGSTOP) past the sentinels' down-after time, so that they promote a
     * replica, then resumed as a stale master that they demote: the holder, cut off for longer
     * than its lease, reports its hold lost and its {@code unlock()} throws; the clients follow the
     * new master, where another client takes the lock.
     */
    @Test
    void lock_masterPausedPastFailoverThenResumed_holdReportedLostAndClientsFollowTheNewMaster() throws Exception {
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        RedisSynchronizers holderClient = opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                .keyPrefix(prefix).lease(Duration.ofSeconds(1)).commandTimeout(Duration.ofMillis(500))
                .lostHoldListener(lost::add, Runnable::run).build());
        DistributedLock holder = holderClient.lock(name);
        DistributedLock other = client(new ConcurrentLinkedQueue<>()).lock(name);
        holder.lock();
        RedisServer old = sentinels.master();

        old.pause();
        try {
            Await.until("the holder's watchdog reports its hold lost", () -> !lost.isEmpty());
            sentinels.awaitMasterChangedFrom(old, 1);
        } finally {
            old.resume();
        }
        sentinels.awaitReplicas(2);

        assertThrows(LostHoldException.class, holder::unlock);
        Await.until("another client takes the lock on the new master", () -> {
            try {
                return other.tryLock(1, TimeUnit.SECONDS);
            } catch (SynchronizerUnavailableException | InterruptedException e) {
                return false;
            }
        });
        other.unlock();
    }

    /* --------------- a planned failover (SENTINEL FAILOVER) --------------- */

    /** A planned failover under 2 clients x 2 threads, without replica acknowledgement. */
    @Test
    void plannedFailover_twoClientsInALoop_noOverlapUnlessReportedAndTheyMoveBeforeTheOldMasterIsDemoted()
            throws Exception {
        plannedFailover(false);
    }

    /** The same with {@code replicaAcks(1, 100 ms)}. */
    @Test
    void plannedFailoverWithReplicaAcks_twoClientsInALoop_noOverlapUnlessReportedAndTheyMoveBeforeTheOldMasterIsDemoted()
            throws Exception {
        plannedFailover(true);
    }

    /**
     * {@code SENTINEL FAILOVER} while 2 clients x 2 threads take and release one lock in a loop
     * around a fencing-checked counter, and a third client, created once every sentinel has
     * announced the switch, joins them: the old master keeps {@code role:master} and accepts
     * writes until the sentinels demote it, about ten seconds later. No two threads are ever
     * inside the lock at once unless one of their holds was reported lost; every hold the counter
     * refused as stale was reported lost; and an old client holds the lock on the new master while
     * the old master still claims to be the master (it learnt of the switch from the sentinels,
     * not from being disconnected at the demotion). Prints the time from the first announcement
     * to the old clients' first hold on the new master, and the last hold granted on the old
     * master.
     */
    private void plannedFailover(boolean replicaAcks) throws Exception {
        RedisServer old = sentinels.master();
        RedisCommands<String, String> oldCommands = opened.commands(old.uri());
        String lockKey = LockKeys.of(prefix, name).lock();
        SwitchAnnouncements announcements = opened.add(new SwitchAnnouncements(sentinels));
        List<Queue<LostHold>> reported = new ArrayList<>();
        List<DistributedLock> locks = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            reported.add(new ConcurrentLinkedQueue<>());
        }
        for (int c = 0; c < 2; c++) {
            locks.add(plannedFailoverClient(replicaAcks, reported.get(c)).lock(name));
        }
        FencedCounter counter = new FencedCounter();
        Inside inside = new Inside();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean probingOld = new AtomicBoolean(true);
        AtomicLong lastOnOld = new AtomicLong();
        AtomicLong firstOnNew = new AtomicLong();
        AtomicBoolean oldStillMasterThen = new AtomicBoolean();
        List<Background<Void>> workers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int client = t % 2;
            DistributedLock lock = locks.get(client);
            workers.add(Background.start("worker-" + t, () -> {
                String field = ":" + Thread.currentThread().getId();
                while (!stop.get()) {
                    if (!lockQuietly(lock)) {
                        continue;
                    }
                    Held held = inside.enter(client, lock.fencingToken());
                    try {
                        if (probingOld.get() || firstOnNew.get() == 0) {
                            whereIsTheHold(oldCommands, announcements, lockKey, field, held.token(), lastOnOld,
                                    firstOnNew, oldStillMasterThen, probingOld);
                        }
                        long read = counter.read(held.token());
                        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                        counter.write(held.token(), read + 1);
                    } finally {
                        inside.exit(held);
                        unlockQuietly(lock);
                    }
                }
                return null;
            }));
        }
        Await.until("100 increments before the failover", () -> counter.accepted() >= 100);

        sentinels.awaitQuiet();   // so that the time below is the failover's, not an earlier one's end
        long failoverNanos = System.nanoTime();
        announcements.failover();
        Await.until("every sentinel announces +switch-master", () -> announcements.count() == 3);
        DistributedLock late = plannedFailoverClient(replicaAcks, reported.get(2)).lock(name);
        workers.add(Background.start("worker-late", () -> {
            while (!stop.get()) {
                if (!lockQuietly(late)) {
                    continue;
                }
                Held held = inside.enter(2, late.fencingToken());
                try {
                    long read = counter.read(held.token());
                    LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                    counter.write(held.token(), read + 1);
                } finally {
                    inside.exit(held);
                    unlockQuietly(late);
                }
            }
            return null;
        }));
        Await.until("an old client holds the lock on the new master", () -> firstOnNew.get() != 0);
        sentinels.awaitMasterChangedFrom(old, 2);
        probingOld.set(false);
        long afterDemotion = counter.accepted();
        Await.until("100 increments after the old master's demotion", () -> counter.accepted() >= afterDemotion + 100);
        stop.set(true);
        for (Background<Void> worker : workers) {
            worker.get();
        }

        long announced = announcements.firstNanos();
        System.out.printf("planned sentinel failover (replicaAcks %s): +switch-master %d ms after SENTINEL FAILOVER;"
                        + " old clients' first hold on the new master %d ms after it (old master still master: %s);"
                        + " last hold granted on the old master %d ms after it; %d increments, %d stale reads or writes"
                        + " refused, %d overlaps, %d holds reported lost%n",
                replicaAcks ? "on" : "off", TimeUnit.NANOSECONDS.toMillis(announced - failoverNanos),
                TimeUnit.NANOSECONDS.toMillis(firstOnNew.get() - announced), oldStillMasterThen.get(),
                lastOnOld.get() == 0 ? Long.MIN_VALUE : TimeUnit.NANOSECONDS.toMillis(lastOnOld.get() - announced),
                counter.accepted(), counter.refused(), inside.overlaps().size(),
                reported.stream().mapToInt(Queue::size).sum());
        List<List<Held>> unreported = new ArrayList<>();
        for (List<Held> overlap : inside.overlaps()) {
            if (overlap.stream().noneMatch(held -> reportedLost(held, reported))) {
                unreported.add(overlap);
            }
        }
        assertTrue(unreported.isEmpty(), unreported.size() + " times two holders at once, neither reported lost, e.g. "
                + unreported.subList(0, Math.min(5, unreported.size())));
        Set<Long> reportedTokens = new HashSet<>();
        reported.forEach(queue -> queue.forEach(hold -> reportedTokens.add(hold.fencingToken())));
        assertTrue(reportedTokens.containsAll(counter.refusedTokens()),
                "holds refused as stale but never reported lost: " + counter.refusedTokens() + " vs " + reportedTokens);
        assertTrue(oldStillMasterThen.get(), "the old clients moved to the new master only when the old one was demoted");
        assertEquals(counter.accepted(), counter.value(), "an update was lost");
    }

    /**
     * A planned failover while the first sentinel of the URI is down (paused) from before the
     * client starts: the client finds the master through the next one, hears the switch from the
     * others, and takes the lock on the new master while the old master still says it is the
     * master, with nothing reported lost.
     */
    @Test
    void plannedFailover_firstSentinelDown_theClientFollowsTheOthersAnnouncement() throws Exception {
        RedisServer down = sentinels.sentinels().get(0);
        RedisServer old = sentinels.master();
        RedisCommands<String, String> oldCommands = opened.commands(old.uri());
        String lockKey = LockKeys.of(prefix, name).lock();
        Queue<LostHold> lost = new ConcurrentLinkedQueue<>();
        AtomicBoolean oldWasMaster = new AtomicBoolean();
        down.pause();
        try {
            SwitchAnnouncements announcements = opened.add(new SwitchAnnouncements(sentinels,
                    sentinels.sentinels().subList(1, 3)));
            DistributedLock lock = plannedFailoverClient(false, lost).lock(name);
            lock.lock();
            lock.unlock();

            announcements.failover();
            Await.until("a sentinel announces +switch-master", () -> announcements.count() >= 1);
            String field = ":" + Thread.currentThread().getId();
            Await.until("the client holds the lock on the new master", () -> {
                if (!lockQuietly(lock)) {
                    return false;
                }
                try {
                    boolean onNew = holds(announcements.newMaster(), lockKey, field, lock.fencingToken());
                    if (onNew) {
                        oldWasMaster.set(stillMaster(oldCommands));
                    }
                    return onNew;
                } finally {
                    unlockQuietly(lock);
                }
            });
        } finally {
            down.resume();
            awaitOutOfTilt(down);
        }
        sentinels.awaitMasterChangedFrom(old, 2);

        assertTrue(oldWasMaster.get(), "the client reached the new master only once the old one was demoted");
        assertEquals(List.of(), List.copyOf(lost));
    }

    /**
     * Waits until a sentinel that was paused has left TILT mode, which a pause of more than two
     * seconds puts it in for 30 s: meanwhile it acts on nothing, so a {@code SENTINEL FAILOVER}
     * sent to it by a later test would start only then.
     */
    private static void awaitOutOfTilt(RedisServer sentinel) {
        // It enters TILT at its first timer after the resume (every 100 ms): let that happen first.
        long entered = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (!sentinel.info("sentinel").contains("sentinel_tilt:1") && System.nanoTime() - entered < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!sentinel.info("sentinel").contains("sentinel_tilt:0")) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("gave up after 90 s waiting until " + sentinel + " leaves TILT mode");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    private static boolean stillMaster(RedisCommands<String, String> server) {
        try {
            return "master".equals(String.valueOf(server.role().get(0)));
        } catch (io.lettuce.core.RedisException e) {
            return false;   // its clients are disconnected when it is demoted
        }
    }

    private RedisSynchronizers plannedFailoverClient(boolean replicaAcks, Queue<LostHold> lost) {
        // A lease far shorter than the ten seconds the old master stays one: a hold the new master
        // has from before the switch runs out there within the window, as a real one would.
        RedisSynchronizers.Builder builder = RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                .keyPrefix(prefix).lease(Duration.ofSeconds(3)).commandTimeout(Duration.ofSeconds(2))
                .lostHoldListener(lost::add, Runnable::run);
        if (replicaAcks) {
            builder.replicaAcks(1, Duration.ofMillis(100));
        }
        return opened.add(builder.build());
    }

    /**
     * Looks, from inside the lock, where the current thread's hold (this token) lives: on the old master while
     * it is still one (the hold checked first, the role after, so a demotion in between is seen),
     * and, until the first is found, on the announced new master.
     */
    private static void whereIsTheHold(RedisCommands<String, String> oldCommands, SwitchAnnouncements announcements,
            String lockKey, String field, long token, AtomicLong lastOnOld, AtomicLong firstOnNew,
            AtomicBoolean oldStillMaster, AtomicBoolean probingOld) {
        boolean oldIsMaster = false;
        if (probingOld.get()) {
            try {
                boolean onOld = holds(oldCommands, lockKey, field, token);
                oldIsMaster = "master".equals(String.valueOf(oldCommands.role().get(0)));
                if (!oldIsMaster) {
                    probingOld.set(false);
                } else if (onOld) {
                    lastOnOld.accumulateAndGet(System.nanoTime(), Math::max);
                    return;
                }
            } catch (io.lettuce.core.RedisException e) {
                // the old master's clients are disconnected when it is demoted: it is no master then
                probingOld.set(false);
            }
        }
        RedisCommands<String, String> now = announcements.newMaster();
        if (firstOnNew.get() == 0 && now != null
                && holds(now, lockKey, field, token)
                && firstOnNew.compareAndSet(0, System.nanoTime())) {
            oldStillMaster.set(oldIsMaster);
        }
    }

    /** Whether a server has the hold of this thread ({@code field}: ":<thread id>") with this token. */
    private static boolean holds(RedisCommands<String, String> server, String lockKey, String field, long token) {
        return server.hgetall(lockKey).entrySet().stream()
                .anyMatch(entry -> entry.getKey().endsWith(field) && entry.getValue().equals(Long.toString(token)));
    }

    private static boolean lockQuietly(DistributedLock lock) {
        try {
            lock.lock();
            return true;
        } catch (SynchronizerUnavailableException e) {
            return false;
        }
    }

    private static void unlockQuietly(DistributedLock lock) {
        try {
            lock.unlock();
        } catch (LostHoldException | SynchronizerUnavailableException e) {
            // reported to the listener as well (checked by the caller), or settled by the library
        }
    }

    private static boolean reportedLost(Held held, List<Queue<LostHold>> reported) {
        return reported.get(held.client()).stream()
                .anyMatch(hold -> hold.threadId() == held.threadId() && hold.fencingToken() == held.token());
    }

    /** One thread inside the lock: its client (0 and 1 old, 2 created after the switch), thread and token. */
    private record Held(int client, long threadId, long token) {
    }

    /** Who is inside the lock now, and every pair found inside at once. */
    private static final class Inside {
        private final java.util.Map<Thread, Held> now = new java.util.concurrent.ConcurrentHashMap<>();
        private final Queue<List<Held>> overlaps = new ConcurrentLinkedQueue<>();

        Held enter(int client, long token) {
            Held held = new Held(client, Thread.currentThread().getId(), token);
            now.put(Thread.currentThread(), held);
            // Entered first, then looked: of two threads inside at once, the later one sees the other.
            for (Held other : now.values()) {
                if (other != held) {
                    overlaps.add(List.of(held, other));
                }
            }
            return held;
        }

        void exit(Held held) {
            now.remove(Thread.currentThread(), held);
        }

        List<List<Held>> overlaps() {
            return List.copyOf(overlaps);
        }
    }

    /**
     * The test's own subscription to {@code +switch-master} on every sentinel: how many announced
     * the switch, when the first did, and a connection to the master they announced.
     */
    private static final class SwitchAnnouncements implements AutoCloseable {
        private final io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create();
        private final Set<Integer> announcedBy = java.util.concurrent.ConcurrentHashMap.newKeySet();
        private final AtomicLong firstNanos = new AtomicLong();
        private volatile String newAddress;
        /** Every data server by "host:port", connected up front so that probing costs no connection. */
        private final java.util.Map<String, RedisCommands<String, String>> servers = new java.util.HashMap<>();
        private final RedisSentinels set;
        private final RedisServer first;

        SwitchAnnouncements(RedisSentinels sentinels) {
            this(sentinels, sentinels.sentinels());
        }

        /** Listens to {@code listened} only (the others may be paused); the first of them is sent the failover. */
        SwitchAnnouncements(RedisSentinels sentinels, List<RedisServer> listened) {
            for (RedisServer server : sentinels.servers()) {
                servers.put(server.host() + ":" + server.port(), client.connect(io.lettuce.core.codec.StringCodec.UTF8,
                        io.lettuce.core.RedisURI.create(server.uri())).sync());
            }
            for (RedisServer sentinel : listened) {
                io.lettuce.core.pubsub.StatefulRedisPubSubConnection<String, String> connection = client.connectPubSub(
                        io.lettuce.core.codec.StringCodec.UTF8, io.lettuce.core.RedisURI.create(sentinel.uri()));
                connection.addListener(new io.lettuce.core.pubsub.RedisPubSubAdapter<>() {
                    @Override
                    public void message(String channel, String message) {
                        firstNanos.compareAndSet(0, System.nanoTime());
                        String[] parts = message.split(" ");
                        newAddress = parts[3] + ":" + parts[4];
                        announcedBy.add(sentinel.port());
                    }
                });
                connection.sync().subscribe("+switch-master");
            }
            set = sentinels;
            first = listened.get(0);
        }

        /**
         * Sends {@code SENTINEL FAILOVER} to the first sentinel listened to, once no sentinel is
         * in TILT mode or finishing an earlier failover, and returns once the master changed
         * ({@link RedisSentinels#requestFailover}).
         */
        void failover() {
            set.requestFailover(first);
        }

        int count() {
            return announcedBy.size();
        }

        long firstNanos() {
            return firstNanos.get();
        }

        /** A connection to the announced master; null before an announcement. */
        RedisCommands<String, String> newMaster() {
            String address = newAddress;
            return address == null ? null : servers.get(address);
        }

        @Override
        public void close() {
            client.shutdown();   // closes every connection it made
        }
    }

    /* --------------- a lagging sentinel --------------- */

    /**
     * A sentinel that lags behind hears the master's previous configuration late and announces a
     * switch back to it, naming the client's current master as the old one: the client asks that
     * sentinel before it moves, and stays, whether the sentinel still names the previous master
     * (with an epoch older than the client knows) or has caught up and names the current one. The
     * next real failover is then the client's only switch. The client listens to that one
     * sentinel, so its announcements reach the client in the order it sent them, and whatever the
     * stale one made the client do comes before the switch to the real new master, which ends the
     * wait.
     */
    @Test
    void switchMaster_laggingSentinelNamesTheCurrentMasterAsOld_theClientDoesNotMoveBack() throws Exception {
        RedisServer lagging = sentinels.sentinels().get(2);
        RedisServer peer = sentinels.sentinels().get(0);
        RedisSentinelCommands<String, String> laggingCommands = sentinelCommands(lagging);
        if (LaggingSentinel.configEpoch(laggingCommands) < 1) {
            sentinels.failover();   // a previous configuration must have an epoch above a forgetful sentinel's 0
        }
        RedisServer previous = sentinels.master();
        long previousEpoch = LaggingSentinel.configEpoch(laggingCommands);
        RedisServer current = sentinels.failover();
        Duration timeout = Duration.ofSeconds(2);
        SentinelTopology topology = opened.add(SentinelTopology.connect(null, null,
                io.lettuce.core.RedisURI.create("redis-sentinel://" + lagging.host() + ":" + lagging.port() + "#"
                        + RedisSentinels.MASTER_NAME),
                StandaloneTopology.clientOptions(timeout), timeout));
        Queue<io.lettuce.core.RedisFuture<String>> switches = new ConcurrentLinkedQueue<>();
        topology.onSwitch(() -> switches.add(topology.commands().info("server")));
        assertEquals(current.port(), port(topology.commands().info("server").get()));
        // The real new master of the failover below is not the previous one, so that a client
        // that went back there cannot pass for one that followed the failover.
        RedisCommands<String, String> previousCommands = opened.commands(previous.uri());
        String priority = previousCommands.configGet("replica-priority").get("replica-priority");
        previousCommands.configSet("replica-priority", "0");
        try {
            LaggingSentinel.announceTheOlderConfiguration(laggingCommands, peer, current, previous, previousEpoch);
            // Meanwhile it demotes nothing: the master it names reports itself a replica.
            Await.until("the lagging sentinel catches up from the others' hellos", () -> ((InetSocketAddress)
                    laggingCommands.getMasterAddrByName(RedisSentinels.MASTER_NAME)).getPort() == current.port());
            RedisSentinelCommands<String, String> peerCommands = sentinelCommands(peer);
            Await.until("the sentinels know that the previous master cannot be promoted", () -> peerCommands
                    .replicas(RedisSentinels.MASTER_NAME).stream().anyMatch(replica -> replica.get("port")
                            .equals(Integer.toString(previous.port())) && "0".equals(replica.get("slave-priority"))));

            RedisServer next = sentinels.requestFailover(peer);

            Await.until("the client follows the failover to " + next, () -> {
                List<Integer> ports = ports(switches);
                return !ports.isEmpty() && ports.get(ports.size() - 1) == next.port();
            });
            assertEquals(List.of(next.port()), ports(switches), "the masters the client switched to, in order; "
                    + previous.port() + " is the older master the lagging sentinel announced");
        } finally {
            previousCommands.configSet("replica-priority", priority);
        }
    }

    private RedisSentinelCommands<String, String> sentinelCommands(RedisServer sentinel) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create();
        opened.add(client::shutdown);
        return client.connectSentinel(io.lettuce.core.codec.StringCodec.UTF8,
                io.lettuce.core.RedisURI.create(sentinel.uri())).sync();
    }

    /** The ports of the servers the client switched to, in order, as their INFO replies name them. */
    private static List<Integer> ports(Queue<io.lettuce.core.RedisFuture<String>> switches) {
        List<Integer> ports = new ArrayList<>();
        for (io.lettuce.core.RedisFuture<String> info : switches) {
            ports.add(port(info.toCompletableFuture().join()));
        }
        return ports;
    }

    private static int port(String info) {
        return Integer.parseInt(LaggingSentinel.infoField(info, "tcp_port"));
    }

    /* --------------- replica acknowledgement --------------- */

    /**
     * With both replicas connected, an acquisition is acknowledged by one WAIT, which follows a
     * renewal of the new hold on the client's side connection: two script calls per acquisition
     * (the renewal by EVAL, as every renewal is sent), one per release.
     */
    @Test
    void replicaAcks_twoReplicasConnected_eachAcquisitionSendsOneWait() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                .keyPrefix(prefix).replicaAcks(2, Duration.ofMillis(500)).build());
        RedisCommands<String, String> master = opened.commands(sentinels.master().uri());
        DistributedLock lock = client.lock(name);
        DistributedSemaphore semaphore = client.semaphore(name);
        assertTrue(semaphore.trySetPermits(1));
        lock.lock();   // loads the scripts: a NOSCRIPT fall-back sends its WAIT again after the EVAL
        lock.unlock();
        assertTrue(semaphore.tryAcquire());
        semaphore.release();
        master.configResetstat();

        lock.lock();
        lock.unlock();
        assertTrue(semaphore.tryAcquire());
        semaphore.release();

        String stats = master.info("commandstats");
        assertEquals(2, RedisState.calls(stats, "wait"), "one WAIT per acquisition, none per release");
        assertEquals(4, RedisState.calls(stats, "evalsha"), "acquire, release; twice");
        assertEquals(2, RedisState.calls(stats, "eval"), "the renewal before each WAIT, sent with its text as every renewal is");
    }

    /**
     * Asking for more replicas than exist: nothing can be acquired, and what a try took is given
     * back at once, so nothing stays held and no permit is missing.
     */
    @Test
    void replicaAcks_moreReplicasThanExist_notAcquiredAndNothingLeftHeld() throws Exception {
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                .keyPrefix(prefix).replicaAcks(3, Duration.ofMillis(100)).build());
        RedisSynchronizers plain = opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                .keyPrefix(prefix).build());
        DistributedLock lock = client.lock(name);

        assertFalse(lock.tryLock());
        assertFalse(lock.tryLock(300, TimeUnit.MILLISECONDS));
        assertFalse(lock.isHeldByCurrentThread());
        assertFalse(plain.lock(name).isLocked(), "the unreplicated hold was given back");
        assertTrue(plain.semaphore(name).trySetPermits(2));
        assertFalse(client.semaphore(name).tryAcquire());
        assertFalse(client.semaphore(name).tryAcquire(300, TimeUnit.MILLISECONDS));
        assertEquals(2, plain.semaphore(name).availablePermits(), "every permit taken was given back");
        assertTrue(plain.lock(name).tryLock(), "another client without the requirement takes the lock");
        plain.lock(name).unlock();
    }

    /**
     * A fair lock handed over by another client's release: the new holder cannot WAIT for the
     * releaser's write, so it writes the hold once more and waits for that. With two replicas it
     * gets the lock; asking for three, the hand-over is given back and the lock is free again.
     */
    @Test
    void replicaAcks_fairLockHandedOverByAnotherClient_checkedByTheNewHolder() throws Exception {
        RedisSynchronizers plain = opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                .keyPrefix(prefix).build());
        DistributedLock holder = plain.fairLock(name);
        for (int replicas = 2; replicas <= 3; replicas++) {
            DistributedLock acked = opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                    .keyPrefix(prefix).replicaAcks(replicas, Duration.ofMillis(200)).build()).fairLock(name);
            holder.lock();
            Background<Boolean> waiter = Background.start("waiter-" + replicas, () -> {
                boolean got = acked.tryLock(2, TimeUnit.SECONDS);
                if (got) {
                    acked.unlock();
                }
                return got;
            });
            Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
            holder.unlock();
            assertEquals(replicas == 2, waiter.get(), "acquired with " + replicas + " replicas asked");
            assertFalse(plain.fairLock(name).isLocked(), "nothing left held");
        }
    }

    /**
     * A hand-over written while a replica is stalled: the new holder's own earlier writes are on
     * both replicas, the grant on one only. Its check must cover the grant, not its own older
     * writes: it gives the lock back and times out rather than hold a lock one failover could
     * forget.
     */
    @Test
    void replicaAcks_handOverWhileAReplicaStalls_givenBackAndNotAcquired() throws Exception {
        RedisSynchronizers plain = opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                .keyPrefix(prefix).build());
        DistributedLock holder = plain.fairLock(name);
        DistributedLock acked = opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri())
                .keyPrefix(prefix).replicaAcks(2, Duration.ofMillis(200)).build()).fairLock(name);
        RedisServer master = sentinels.master();
        RedisServer replica = sentinels.servers().stream().filter(server -> !server.equals(master)).findFirst()
                .orElseThrow();
        holder.lock();
        Background<Boolean> waiter = Background.start("waiter", () -> acked.tryLock(1, TimeUnit.SECONDS));
        Await.until("the waiter sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(waiter.thread()));
        replica.pause();
        try {
            holder.unlock();
            assertFalse(waiter.get(), "a hold on one replica of the two asked was taken");
        } finally {
            replica.resume();
        }
        assertFalse(plain.fairLock(name).isLocked(), "the hand-over was given back");
    }

    /** A server that refuses WAIT (a proxy, a managed service) fails the build, naming the setting. */
    @Test
    void replicaAcks_serverRefusesWait_buildFailsNamingTheSetting() {
        RedisServer server = opened.add(RedisServers.start(RedisServers.Options.defaults()
                .args("--rename-command", "WAIT", "")));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> RedisSynchronizers.builder()
                .uri(server.uri()).replicaAcks(1, Duration.ofMillis(100)).build());
        assertTrue(e.getMessage().contains("replicaAcks") && e.getMessage().contains("WAIT"), e.getMessage());
    }

    @Test
    void replicaAcks_badArguments_throwNamingThem() {
        IllegalArgumentException replicas = assertThrows(IllegalArgumentException.class,
                () -> RedisSynchronizers.builder().replicaAcks(0, Duration.ofMillis(100)));
        assertTrue(replicas.getMessage().contains("replicas"), replicas.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RedisSynchronizers.builder().replicaAcks(1, Duration.ZERO));
        IllegalStateException longer = assertThrows(IllegalStateException.class, () -> RedisSynchronizers.builder()
                .uri(sentinels.sentinelUri()).commandTimeout(Duration.ofSeconds(1))
                .replicaAcks(1, Duration.ofSeconds(1)).build());
        assertTrue(longer.getMessage().contains("commandTimeout"), longer.getMessage());
        IllegalStateException cluster = assertThrows(IllegalStateException.class, () -> RedisSynchronizers.builder()
                .cluster("redis://127.0.0.1:1").replicaAcks(1, Duration.ofMillis(100)).build());
        assertTrue(cluster.getMessage().contains("Cluster"), cluster.getMessage());
    }

    /**
     * Calls {@code call} until it does not fail with {@link SynchronizerUnavailableException}: a
     * waiter woken by the reconnect may try while its command connection is still reconnecting,
     * and a call fails at once then; a caller that must get through tries again, as this does.
     */
    private static <T> T throughFailover(java.util.concurrent.Callable<T> call) throws Exception {
        while (true) {
            try {
                return call.call();
            } catch (SynchronizerUnavailableException e) {
                // the failover is not over for this client yet
            }
        }
    }

    private RedisSynchronizers client(Queue<LostHold> lost) {
        return opened.add(RedisSynchronizers.builder().uri(sentinels.sentinelUri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(30)).commandTimeout(Duration.ofSeconds(2))
                .lostHoldListener(lost::add, Runnable::run).build());
    }
}
