package dev.synchronizers.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.testkit.RedisExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.annotation.ServiceActivator;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.handler.advice.LockRequestHandlerAdvice;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.messaging.MessageChannel;

/**
 * Spring Integration's {@link LockRequestHandlerAdvice} over {@link SynchronizersLockRegistry}: the
 * same flow (a service activator under the advice, keyed by a constant) in two application
 * contexts, each with its own client, sending from several threads at once, into one store that
 * checks fencing tokens and counts. No two handlers run at once, no write is refused, none is lost.
 */
@Tag("redis")
class LockRequestHandlerAdviceTest {

    private static final int THREADS_PER_CONTEXT = 3;
    private static final int MESSAGES_PER_THREAD = 20;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final String prefix = "si-advice-" + UUID.randomUUID();
    private final List<AnnotationConfigApplicationContext> contexts = new ArrayList<>();
    private final ExecutorService senders = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        senders.shutdownNow();
        contexts.forEach(AnnotationConfigApplicationContext::close);
    }

    /**
     * The downstream store, shared by both applications: it keeps the highest fencing token it has
     * seen and refuses a lower one, and counts with a read and a later write, so that two writers
     * at once would lose an update (and are counted).
     */
    static final class FencedCounter {
        private final AtomicInteger inside = new AtomicInteger();
        private final AtomicInteger mostInside = new AtomicInteger();
        private final AtomicInteger refused = new AtomicInteger();
        private final AtomicInteger notIncreasing = new AtomicInteger();
        private volatile long highestToken = Long.MIN_VALUE;
        private volatile long value;

        void increment(long token) throws InterruptedException {
            mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                if (token < highestToken) {
                    refused.incrementAndGet();
                    return;
                }
                if (token == highestToken) {
                    notIncreasing.incrementAndGet();   // every message is a fresh hold: a new token
                }
                highestToken = token;
                long read = value;
                Thread.sleep(1);   // widens the window in which an overlapping writer would lose an update
                value = read + 1;
            } finally {
                inside.decrementAndGet();
            }
        }
    }

    /** The handler: increments the counter with the token of the hold the advice took. */
    public static final class Worker {
        private final SynchronizersLockRegistry registry;
        private final FencedCounter counter;

        Worker(SynchronizersLockRegistry registry, FencedCounter counter) {
            this.registry = registry;
            this.counter = counter;
        }

        @ServiceActivator(inputChannel = "input", adviceChain = "lockAdvice")
        public void handle(String payload) throws InterruptedException {
            counter.increment(registry.fencingToken("counter"));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIntegration
    static class Flow {

        @Bean
        SynchronizersLockRegistry lockRegistry(RedisSynchronizers synchronizers) {
            return new SynchronizersLockRegistry(synchronizers);
        }

        @Bean
        LockRequestHandlerAdvice lockAdvice(SynchronizersLockRegistry lockRegistry) {
            return new LockRequestHandlerAdvice(lockRegistry, "counter");
        }

        @Bean
        Worker worker(SynchronizersLockRegistry lockRegistry, FencedCounter counter) {
            return new Worker(lockRegistry, counter);
        }
    }

    private AnnotationConfigApplicationContext application(FencedCounter counter) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean("synchronizers", RedisSynchronizers.class,
                () -> RedisSynchronizers.builder().uri(redis.server().uri()).keyPrefix(prefix).build(),
                definition -> definition.setDestroyMethodName("close"));
        context.registerBean(FencedCounter.class, () -> counter);
        context.register(Flow.class);
        contexts.add(context);
        context.refresh();
        return context;
    }

    @Test
    void twoApplications_neverRunTheHandlerAtOnce() throws Exception {
        FencedCounter counter = new FencedCounter();
        List<MessageChannel> inputs = List.of(
                application(counter).getBean("input", MessageChannel.class),
                application(counter).getBean("input", MessageChannel.class));

        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> sent = new ArrayList<>();
        for (MessageChannel input : inputs) {
            for (int t = 0; t < THREADS_PER_CONTEXT; t++) {
                sent.add(senders.submit(() -> {
                    start.await();
                    for (int m = 0; m < MESSAGES_PER_THREAD; m++) {
                        assertTrue(input.send(MessageBuilder.withPayload("tick").build()));
                    }
                    return null;
                }));
            }
        }
        long started = System.nanoTime();
        start.countDown();
        for (Future<?> f : sent) {
            f.get(60, TimeUnit.SECONDS);
        }
        System.out.printf("%d messages through the advice in %d ms%n", inputs.size() * THREADS_PER_CONTEXT
                * MESSAGES_PER_THREAD, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));

        int total = inputs.size() * THREADS_PER_CONTEXT * MESSAGES_PER_THREAD;
        assertEquals(1, counter.mostInside.get(), "two handlers ran at once");
        assertEquals(0, counter.refused.get(), "a write carried a token lower than one seen before");
        assertEquals(0, counter.notIncreasing.get(), "a fresh hold reused a token");
        assertEquals(total, counter.value, "updates lost");
    }
}
