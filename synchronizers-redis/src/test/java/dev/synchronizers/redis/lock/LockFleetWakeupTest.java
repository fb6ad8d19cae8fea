package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.child.FairWaiterMain;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The non-fair lock in a fleet: a release wakes one waiting client, not every one. Each client's
 * first waiter has one place in Redis's line, and a release hands the lock to the first place
 * whose client hears its own channel, with no try of the waiter's own; a client that is gone is
 * passed over at once, not after a lease.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class LockFleetWakeupTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final int CLIENTS = 6;

    private final Opened opened;
    private final String prefix;
    private final String name;

    LockFleetWakeupTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /** One waiting client: its thread takes the lock, records it, and holds it until let go. */
    private final class Waiter {
        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
        final DistributedLock lock;
        final CountDownLatch letGo = new CountDownLatch(1);
        final CountDownLatch holds = new CountDownLatch(1);
        Background<Void> thread;

        Waiter(Duration lease) {
            lock = opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix).lease(lease)
                    .meterRegistry(registry).build()).lock(name);
        }

        void start(String label, List<Waiter> order) {
            thread = Background.start(label, () -> {
                lock.lock();
                try {
                    order.add(this);
                    holds.countDown();
                    letGo.await();
                } finally {
                    lock.unlock();
                }
                return null;
            });
        }

        /** The tries this client's waiters sent: the failed first try, and any after a wake-up. */
        double tries() {
            return registry.find("synchronizers.script.calls").tags("script", "lock-acquire-waiting").counters()
                    .stream().mapToDouble(c -> c.count()).sum();
        }
    }

    /**
     * Six clients wait, one thread each, arriving one after the other. Each release hands the lock
     * to the client that has waited longest: one script call (the release) and one message, and
     * the five others neither wake nor try. Before, every release woke all of them, and each sent
     * a try to find the lock taken again.
     */
    @Test
    void unlock_sixClientsWaiting_eachReleaseHandsTheLockToTheNextClientInArrivalOrderWithOneMessage()
            throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        DistributedLock holder = opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .build()).lock(name);
        String queue = LockKeys.of(prefix, name).queue();
        holder.lock();
        List<Waiter> waiters = new ArrayList<>();
        List<Waiter> order = new CopyOnWriteArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            Waiter waiter = new Waiter(Duration.ofSeconds(30));
            waiter.start("client-" + i, order);
            waiters.add(waiter);
            int inLine = i + 1;
            Await.until("client " + i + " waits in line", () -> RedisState.sleepsOnWakeup(waiter.thread.thread())
                    && admin.zcard(queue) == inLine);
        }

        DistributedLock releasing = holder;
        Waiter releaser = null;
        for (int i = 0; i < CLIENTS; i++) {
            double[] triesBefore = waiters.stream().mapToDouble(Waiter::tries).toArray();
            admin.configResetstat();
            if (releaser == null) {
                releasing.unlock();
            } else {
                releaser.letGo.countDown();
            }
            Waiter next = waiters.get(i);
            assertTrue(next.holds.await(30, TimeUnit.SECONDS), "client " + i + " is handed the lock");
            if (releaser != null) {
                releaser.thread.get();
            }
            String stats = admin.info("commandstats");
            assertEquals(1, RedisState.publishes(stats), "one message, to the client handed the lock");
            for (int w = 0; w < CLIENTS; w++) {
                assertEquals(triesBefore[w], waiters.get(w).tries(), "client " + w + " sent no try of its own");
            }
            for (int w = i + 1; w < CLIENTS; w++) {
                assertTrue(RedisState.sleepsOnWakeup(waiters.get(w).thread.thread()), "client " + w + " sleeps on");
            }
            releaser = next;
        }
        releaser.letGo.countDown();
        releaser.thread.get();
        assertEquals(waiters, order, "the clients were handed the lock in the order they came");
        assertFalse(holder.isLocked(), "the last unlock freed it");
        assertEquals(0, admin.exists(queue), "nobody is left in line");
    }

    /**
     * A grant whose waiter leaves before it learns of it is an unknown outcome the waiter settles:
     * the first client in line goes silent (its replies and messages are held), the release hands
     * it the lock, its wait times out, and its leave — which runs in Redis although its reply is
     * held — gives the lock back and hands it to the next client in line. Nobody holds a lock nobody
     * knows of for a lease.
     */
    @Test
    void grantToAWaiterThatTimesOutUnaware_itsLeaveHandsTheLockToTheNextClient() throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        Duration lease = Duration.ofSeconds(60);
        DistributedLock holder = opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lease(lease).build()).lock(name);
        String queue = LockKeys.of(prefix, name).queue();
        FaultProxy proxy = opened.add(FaultProxy.start(redis.server().port()));
        DistributedLock silent = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix).lease(lease)
                .commandTimeout(Duration.ofSeconds(1)).build()).lock(name);
        holder.lock();
        Background<Boolean> first = Background.start("first", () -> silent.tryLock(3, TimeUnit.SECONDS));
        Await.until("the first client waits in line", () -> RedisState.sleepsOnWakeup(first.thread())
                && admin.zcard(queue) == 1);
        Waiter next = new Waiter(lease);
        next.start("next", new CopyOnWriteArrayList<>());
        Await.until("the next client waits behind it", () -> admin.zcard(queue) == 2);
        proxy.holdReplies();

        holder.unlock();

        // Its wait ends without the lock: timed out, or failed on a try Redis did not answer (a
        // reconnect of its silent Pub/Sub connection wakes it to try).
        boolean got;
        try {
            got = first.get();
        } catch (ExecutionException e) {
            assertInstanceOf(SynchronizerUnavailableException.class, e.getCause());
            got = false;
        }
        assertFalse(got, "the first client's wait ended without learning of the grant");
        assertTrue(next.holds.await(30, TimeUnit.SECONDS), "its leave handed the lock to the next client");
        proxy.pass();
        next.letGo.countDown();
        next.thread.get();
        assertFalse(holder.isLocked(), "nobody holds it now");
    }

    /**
     * The client first in line dies (SIGKILL) while it waits: its channel has no subscriber, so
     * the release passes it over and hands the lock to the next client in line at once, although
     * the dead client's place is leased for a minute.
     */
    @Test
    void unlock_firstClientInLineDied_theNextClientIsHandedTheLockAtOnce() throws Exception {
        RedisCommands<String, String> admin = opened.commands(redis.server().uri());
        Duration lease = Duration.ofSeconds(60);
        DistributedLock holder = opened.add(RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix)
                .lease(lease).build()).lock(name);
        String queue = LockKeys.of(prefix, name).queue();
        holder.lock();
        try (ChildJvm child = ChildJvm.start(FairWaiterMain.class, redis.server().uri(), prefix, name,
                Long.toString(lease.toMillis()), "lock")) {
            String clientId = child.awaitLine("WAITING", Duration.ofSeconds(60)).substring("WAITING ".length()).trim();
            Await.until("the child waits first in line", () -> admin.zcard(queue) == 1);
            Waiter next = new Waiter(lease);
            next.start("next", new CopyOnWriteArrayList<>());
            Await.until("the next client waits behind it", () -> admin.zcard(queue) == 2);
            assertTrue(admin.zrange(queue, 0, 0).get(0).startsWith(clientId + ":"), "the child is first");
            child.kill();
            Await.until("the child's subscription is gone",
                    () -> RedisState.subscribers(admin, LockKeys.of(prefix, name).clientWakeups(clientId)) == 0);

            holder.unlock();

            assertTrue(next.holds.await(30, TimeUnit.SECONDS), "handed the lock long before the dead client's minute");
            next.letGo.countDown();
            next.thread.get();
            assertFalse(holder.isLocked(), "the dead client was not handed the lock");
            assertEquals(0, admin.exists(queue), "the dead client's place is gone with it");
        }
    }
}
