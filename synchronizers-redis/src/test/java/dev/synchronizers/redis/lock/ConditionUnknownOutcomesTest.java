package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisInternals;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.script.Script;
import dev.synchronizers.redis.script.ScriptRegistry;
import dev.synchronizers.testkit.FaultProxy;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A condition when a reply is lost or late (an unknown outcome), through a {@link FaultProxy}: a
 * signal is repeated with its id and runs once, so no signal wakes two waiters; a registration
 * whose reply is lost is withdrawn and the await fails with the lock still held; a timed await
 * whose replies are held returns (by failing) instead of sleeping past its deadline, and leaves
 * nothing behind once Redis answers again.
 *
 * <p>Every script is loaded beforehand, so that a dropped or held reply is the script's own, never a
 * NOSCRIPT answer.
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class ConditionUnknownOutcomesTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;

    ConditionUnknownOutcomesTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    private RedisSynchronizers client(String uri, Duration commandTimeout) {
        return opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix).lease(Duration.ofSeconds(30))
                .commandTimeout(commandTimeout).build());
    }

    private String conditionKey(String part) {
        return prefix + ":lock:{" + name + "}:cond:0:" + part;
    }

    private RedisCommands<String, String> adminWithScripts(RedisServer server) {
        RedisCommands<String, String> admin = opened.commands(server.uri());
        for (Script script : Script.values()) {
            admin.scriptLoad(ScriptRegistry.text(script));
        }
        return admin;
    }

    /* --------------- signal --------------- */

    /**
     * A signal whose reply is lost (it ran; then the connection broke) is sent again with its id
     * once the connection is back: the repeat signals nobody, so of two waiters exactly one is
     * woken, and signal() returns normally.
     */
    @Test
    void signal_replyLost_repeatedWithItsIdAndWakesExactlyOne() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = adminWithScripts(server);
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        DistributedLock signallerLock = client(proxy.uri(), Duration.ofSeconds(2)).lock(name);
        Condition signaller = signallerLock.newCondition();
        List<Background<Boolean>> waiters = twoWaiters(server.uri(), admin);

        Background<Void> signal = Background.start("signaller", () -> {
            signallerLock.lock();
            try {
                proxy.dropReplies(1, "EVALSHA");
                signaller.signal();
            } finally {
                signallerLock.unlock();
            }
            return null;
        });
        Await.until("the signal's reply is dropped", () -> proxy.droppedReplies() == 1);
        proxy.cutAll();
        signal.get();
        Await.until("one waiter returned", () -> waiters.stream().filter(w -> !w.thread().isAlive()).count() == 1);
        assertEquals(1, admin.zcard(conditionKey("queue")), "the other still waits: the repeat signalled nobody");
        assertEquals(0, admin.zcard(conditionKey("signalled")), "no second signal outstanding");
        wakeTheRest(server.uri(), waiters);
    }

    /**
     * A signal whose replies are all late throws SynchronizerUnavailableException once it gave up
     * (after its command timeout and as long again of repeats), yet Redis ran it exactly once: of
     * two waiters, one is woken once Redis answers again, the other still waits.
     */
    @Test
    void signal_repliesLate_throwsAndRanOnce() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = adminWithScripts(server);
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        DistributedLock signallerLock = client(proxy.uri(), Duration.ofMillis(500)).lock(name);
        Condition signaller = signallerLock.newCondition();
        List<Background<Boolean>> waiters = twoWaiters(server.uri(), admin);

        signallerLock.lock();
        proxy.holdReplies();
        assertThrows(SynchronizerUnavailableException.class, signaller::signal);
        // unlock() gets no reply either; its release ran, and is retried until answered.
        assertThrows(SynchronizerUnavailableException.class, signallerLock::unlock);
        proxy.cutAll();
        proxy.pass();
        Await.until("one waiter returned", () -> waiters.stream().filter(w -> !w.thread().isAlive()).count() == 1);
        assertEquals(1, admin.zcard(conditionKey("queue")), "the other still waits: the signal ran once");
        wakeTheRest(server.uri(), waiters);
    }

    /* --------------- await --------------- */

    /**
     * An await whose registration reply is lost throws SynchronizerUnavailableException with the
     * lock still held (it never released it), and its registration is withdrawn: no waiter is left
     * in Redis for a signal to choose.
     */
    @Test
    void await_registrationReplyLost_throwsWithTheLockHeldAndIsWithdrawn() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = adminWithScripts(server);
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        RedisSynchronizers client = client(proxy.uri(), Duration.ofSeconds(2));
        DistributedLock lock = client.lock(name);
        Condition condition = lock.newCondition();
        Background<Throwable> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                proxy.dropReplies(1, "EVALSHA");
                condition.await();
                return null;
            } catch (SynchronizerUnavailableException e) {
                return lock.isHeldByCurrentThread() && lock.getHoldCount() == 1 ? e : new AssertionError("not held", e);
            } finally {
                try {
                    lock.unlock();
                } catch (SynchronizerUnavailableException stillReconnecting) {
                    // Its release is retried until Redis answers.
                }
            }
        });
        Await.until("the registration's reply is dropped", () -> proxy.droppedReplies() == 1);
        proxy.cutAll();
        assertInstanceOf(SynchronizerUnavailableException.class, waiter.get());
        Await.until("the registration is withdrawn", () -> {
            RedisInternals.renewNow(client);
            return admin.exists(conditionKey("queue")) == 0 && RedisInternals.pendingRetries(client) == 0;
        });
    }

    /**
     * A timed await whose replies are held from the moment it waits: at its deadline it leaves (no
     * reply), tries to take the lock again (no reply) and fails with SynchronizerUnavailableException
     * rather than sleep on; once Redis answers, its leave is retried and nothing is left of it.
     */
    @Test
    void awaitNanos_repliesHeldWhileWaiting_doesNotSleepPastItsDeadline() throws Exception {
        RedisServer server = redis.startManaged();
        RedisCommands<String, String> admin = adminWithScripts(server);
        FaultProxy proxy = opened.add(FaultProxy.start(server.port()));
        // A short lease: a re-take that ran in Redis while its reply was held ends within it at the latest.
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(proxy.uri()).keyPrefix(prefix)
                .lease(Duration.ofSeconds(3)).commandTimeout(Duration.ofMillis(500)).build());
        DistributedLock lock = client.lock(name);
        Condition condition = lock.newCondition();
        Background<Throwable> waiter = Background.start("waiter", () -> {
            lock.lock();
            try {
                condition.awaitNanos(TimeUnit.SECONDS.toNanos(2));
                return null;
            } catch (SynchronizerUnavailableException e) {
                return e;
            }
        });
        Await.until("it waits", () -> admin.zcard(conditionKey("queue")) == 1);
        Await.until("the lock is free", () -> admin.exists(prefix + ":lock:{" + name + "}") == 0);
        proxy.holdReplies();
        assertInstanceOf(SynchronizerUnavailableException.class, waiter.get(), "failed instead of sleeping on");
        proxy.pass();
        Await.until("its leave was retried", () -> {
            RedisInternals.renewNow(client);
            return admin.exists(conditionKey("queue")) == 0 && RedisInternals.pendingRetries(client) == 0;
        });
        DistributedLock other = client(server.uri(), Duration.ofSeconds(2)).lock(name);
        assertTrue(other.tryLock(30, TimeUnit.SECONDS), "a re-take that ran late was given back, or ran out");
        other.unlock();
    }

    /* --------------- helpers --------------- */

    /** Two waiters on condition 0, in a client of their own, both registered when this returns. */
    private List<Background<Boolean>> twoWaiters(String uri, RedisCommands<String, String> admin) {
        DistributedLock lock = client(uri, Duration.ofSeconds(2)).lock(name);
        Condition condition = lock.newCondition();
        List<Background<Boolean>> waiters = List.of(awaiting("waiter-1", lock, condition),
                awaiting("waiter-2", lock, condition));
        Await.until("both wait", () -> admin.zcard(conditionKey("queue")) == 2);
        return waiters;
    }

    private static Background<Boolean> awaiting(String thread, DistributedLock lock, Condition condition) {
        return Background.start(thread, () -> {
            lock.lock();
            try {
                condition.await();
                return true;
            } finally {
                lock.unlock();
            }
        });
    }

    /** Signals every waiter left from a client without faults, and checks that all returned. */
    private void wakeTheRest(String uri, List<Background<Boolean>> waiters) throws Exception {
        DistributedLock lock = client(uri, Duration.ofSeconds(2)).lock(name);
        Condition condition = lock.newCondition();
        lock.lock();
        try {
            condition.signalAll();
        } finally {
            lock.unlock();
        }
        for (Background<Boolean> waiter : waiters) {
            assertTrue(waiter.get());
        }
    }
}
