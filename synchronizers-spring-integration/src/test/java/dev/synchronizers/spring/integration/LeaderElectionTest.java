package dev.synchronizers.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.OnFailedToAcquireMutexEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Leader election with Spring Integration's {@link LockRegistryLeaderInitiator} over
 * {@link SynchronizersLockRegistry}: two real application contexts, each with its own
 * {@link RedisSynchronizers} client (two processes, as far as the store can tell), on a real
 * redis-server. One leader at a time; a leader whose hold is lost (forced by a third client) is
 * revoked at its next heartbeat and the other takes over; a leader whose context stops hands over at
 * once. The times are measured and written to {@code target/leader-election.txt}; the assertions on
 * them are loose bounds, not timing thresholds.
 */
@Tag("redis")
class LeaderElectionTest {

    /** The initiators' heartbeat (SI's default is 500 ms). */
    private static final long HEARTBEAT_MILLIS = 500;
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);
    /** A generous bound for what should take about a heartbeat: a busy 2-core machine must not fail it. */
    private static final long BOUND_SECONDS = 30;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final String prefix = "si-leader-" + UUID.randomUUID();
    private final String role = "role-" + UUID.randomUUID();
    private final List<Node> nodes = new ArrayList<>();
    /** How many candidates think they lead right now, and the most there ever were. */
    private final AtomicInteger leaders = new AtomicInteger();
    private final AtomicInteger mostLeaders = new AtomicInteger();

    @AfterEach
    void closeNodes() {
        nodes.forEach(node -> node.context.close());
    }

    /** One application: a client, a registry and a leader initiator in a context of its own. */
    private final class Node {
        final String id;
        final GenericApplicationContext context = new GenericApplicationContext();
        final RecordingCandidate candidate;
        final AtomicInteger failedToAcquire = new AtomicInteger();

        Node(String id) {
            this.id = id;
            this.candidate = new RecordingCandidate(id);
            context.registerBean("synchronizers", RedisSynchronizers.class,
                    () -> RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                            .commandTimeout(COMMAND_TIMEOUT).build(),
                    definition -> definition.setDestroyMethodName("close"));
            context.registerBean("lockRegistry", SynchronizersLockRegistry.class,
                    () -> new SynchronizersLockRegistry(context.getBean(RedisSynchronizers.class)));
            context.registerBean("leaderInitiator", LockRegistryLeaderInitiator.class, () -> {
                LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(
                        context.getBean(SynchronizersLockRegistry.class), candidate);
                initiator.setHeartBeatMillis(HEARTBEAT_MILLIS);
                initiator.setPublishFailedEvents(true);
                return initiator;
            });
            context.addApplicationListener((ApplicationListener<ApplicationEvent>) event -> {
                if (event instanceof OnFailedToAcquireMutexEvent) {
                    failedToAcquire.incrementAndGet();
                }
            });
        }

        Node start() {
            nodes.add(this);
            context.refresh();
            return this;
        }

        boolean isLeader() {
            return context.getBean(LockRegistryLeaderInitiator.class).getContext().isLeader();
        }
    }

    private final class RecordingCandidate extends DefaultCandidate {
        final AtomicLong grantedAt = new AtomicLong();
        final AtomicLong revokedAt = new AtomicLong();
        volatile CountDownLatch granted = new CountDownLatch(1);
        volatile CountDownLatch revoked = new CountDownLatch(1);

        RecordingCandidate(String id) {
            super(id, role);
        }

        @Override
        public void onGranted(Context ctx) {
            grantedAt.set(System.nanoTime());
            mostLeaders.accumulateAndGet(leaders.incrementAndGet(), Math::max);
            granted.countDown();
        }

        @Override
        public void onRevoked(Context ctx) {
            revokedAt.set(System.nanoTime());
            leaders.decrementAndGet();
            revoked.countDown();
        }

        void rearm() {
            granted = new CountDownLatch(1);
            revoked = new CountDownLatch(1);
        }
    }

    private static void awaitLatch(String what, CountDownLatch latch) throws InterruptedException {
        assertTrue(latch.await(BOUND_SECONDS, TimeUnit.SECONDS), "timed out waiting until " + what);
    }

    /** Starts two nodes and returns {leader, follower} once one leads and the other has failed to take over. */
    private Node[] electOne() throws InterruptedException {
        Node a = new Node("a").start();
        Node b = new Node("b").start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
        while (a.candidate.granted.getCount() > 0 && b.candidate.granted.getCount() > 0) {
            assertTrue(System.nanoTime() < deadline, "nobody was elected");
            Thread.sleep(10);
        }
        Node leader = a.candidate.granted.getCount() == 0 ? a : b;
        Node follower = leader == a ? b : a;
        awaitFailures(follower, 3);
        return new Node[] {leader, follower};
    }

    private static void awaitFailures(Node follower, int count) throws InterruptedException {
        int start = follower.failedToAcquire.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
        while (follower.failedToAcquire.get() < start + count) {
            assertTrue(System.nanoTime() < deadline, "the follower did not try again");
            Thread.sleep(10);
        }
    }

    private static void report(String line) throws IOException {
        System.out.println(line);
        Files.writeString(Path.of("target", "leader-election.txt"), line + System.lineSeparator(),
                StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }

    @Test
    void exactlyOneLeader_whileTheFollowerKeepsTrying() throws InterruptedException {
        Node[] elected = electOne();
        Node leader = elected[0];
        Node follower = elected[1];

        awaitFailures(follower, 5);   // several more heartbeats of the follower, about 2.5 s
        assertEquals(1, mostLeaders.get(), "never two leaders");
        assertEquals(1, leaders.get());
        assertTrue(leader.isLeader());
        assertFalse(follower.isLeader());
        assertEquals(1, leader.candidate.granted.getCount() + follower.candidate.granted.getCount());
    }

    @Test
    void lostHold_theOldLeaderIsRevokedAtItsNextHeartbeat_andTheOtherTakesOver() throws Exception {
        Node[] elected = electOne();
        try (RedisSynchronizers third = RedisSynchronizers.builder().uri(redis.server().uri())
                .keyPrefix(prefix).build()) {
            List<Long> revokeDelays = new ArrayList<>();
            List<Long> overlaps = new ArrayList<>();
            int handovers = 0;
            for (int round = 0; round < 4; round++) {
                Node leader = elected[0];
                Node follower = elected[1];
                leader.candidate.rearm();
                follower.candidate.rearm();

                long forcedAt = System.nanoTime();
                assertTrue(third.lock(role).forceUnlock(), "the leader's hold was there to force");

                awaitLatch("the old leader is revoked", leader.candidate.revoked);
                long revokedAfter = leader.candidate.revokedAt.get() - forcedAt;
                revokeDelays.add(revokedAfter);
                // Loose: the old leader learns within a heartbeat plus the command timeout, with slack
                // for a busy machine; the number itself goes to the report.
                assertTrue(revokedAfter < TimeUnit.SECONDS.toNanos(BOUND_SECONDS), "revoked after " + ms(revokedAfter));

                // Someone leads again: normally the follower, which waits in the store and is woken by
                // the force; the old leader may win it back if the follower is slower than its next
                // try (a heartbeat and a busy wait later), which is legitimate.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
                while (follower.candidate.granted.getCount() > 0 && leader.candidate.granted.getCount() > 0) {
                    assertTrue(System.nanoTime() < deadline, "nobody leads after the force");
                    Thread.sleep(5);
                }
                Node now = follower.candidate.granted.getCount() == 0 ? follower : leader;
                Node other = now == follower ? leader : follower;
                if (now == follower) {
                    handovers++;
                    long grantedAfter = follower.candidate.grantedAt.get() - forcedAt;
                    long overlap = Math.max(0, leader.candidate.revokedAt.get() - follower.candidate.grantedAt.get());
                    overlaps.add(overlap);
                    report("forceUnlock round " + round + ": new leader granted after " + ms(grantedAfter)
                            + ", old leader revoked after " + ms(revokedAfter) + ", two leaders for " + ms(overlap)
                            + " (heartbeat " + HEARTBEAT_MILLIS + " ms, command timeout "
                            + COMMAND_TIMEOUT.toMillis() + " ms)");
                } else {
                    report("forceUnlock round " + round + ": old leader revoked after " + ms(revokedAfter)
                            + " and won the lock back");
                }
                assertTrue(now.isLeader());
                awaitFailures(other, 2);   // the other is a follower, and keeps trying
                assertEquals(1, leaders.get(), "one leader again");
                assertFalse(other.isLeader());
                elected = new Node[] {now, other};
            }
            assertTrue(handovers > 0, "the follower never took over in 4 rounds");
            report("forceUnlock: old leader revoked after " + summary(revokeDelays) + "; overlap " + summary(overlaps)
                    + " (" + handovers + " handovers)");
        }
    }

    private static String summary(List<Long> nanos) {
        List<Long> sorted = new ArrayList<>(nanos);
        sorted.sort(null);
        return "min " + ms(sorted.get(0)) + ", median " + ms(sorted.get(sorted.size() / 2)) + ", max "
                + ms(sorted.get(sorted.size() - 1)) + " over " + sorted.size() + " rounds";
    }

    @Test
    void leaderContextStopped_theOtherIsGranted() throws Exception {
        Node[] elected = electOne();
        Node leader = elected[0];
        Node follower = elected[1];

        long closedAt = System.nanoTime();
        leader.context.close();
        awaitLatch("the follower is granted after the leader's context closed", follower.candidate.granted);
        long grantedAfter = follower.candidate.grantedAt.get() - closedAt;
        report("leader context closed: the other granted after " + ms(grantedAfter));
        assertTrue(follower.isLeader());
        awaitLatch("the old leader was revoked", leader.candidate.revoked);
        assertNotSame(leader, follower);
    }
}
