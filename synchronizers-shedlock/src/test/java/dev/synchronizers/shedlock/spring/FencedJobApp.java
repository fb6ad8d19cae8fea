package dev.synchronizers.shedlock.spring;

import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.shedlock.SynchronizersLockProvider;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A Spring application with one {@code @Scheduled @SchedulerLock} job over
 * {@link SynchronizersLockProvider} in keep-alive mode, as a service would have it. Every run of the
 * job writes to a {@link FencedStore} with {@link SynchronizersLockProvider#currentFencingToken()}
 * and reports {@code WROTE <token>} or {@code REFUSED <token>}; a lost hold is reported as
 * {@code LOST <name>}. A <em>freezable</em> application, when the store's {@code freeze} flag is set,
 * reports {@code HOLDING <token>} inside the run and waits there until the flag is cleared: a test
 * stops its JVM at that point.
 *
 * <p>Run in the test's JVM with {@link #start}, or in a child JVM with {@link #main}, which prints
 * the reports on standard output.
 */
public final class FencedJobApp {

    static final String JOB = "fenced-job";

    private FencedJobApp() {
    }

    /** Settings of one application: its Redis, key prefix, client lease and how it reports. */
    record Settings(String uri, String prefix, Duration lease, boolean freezable, Consumer<String> reports) {
    }

    /**
     * {@code main(uri, prefix, leaseMillis, freezable)}: runs the application until the JVM is
     * killed, printing its reports, after {@code STARTED} once the context is up.
     */
    public static void main(String[] args) throws InterruptedException {
        Settings settings = new Settings(args[0], args[1], Duration.ofMillis(Long.parseLong(args[2])),
                Boolean.parseBoolean(args[3]), line -> {
                    System.out.println(line);
                    System.out.flush();
                });
        AnnotationConfigApplicationContext context = start(settings);
        context.registerShutdownHook();
        settings.reports().accept("STARTED");
        new CountDownLatch(1).await();   // until killed
    }

    /** Starts the application; closing the context stops its scheduler and closes its client. */
    static AnnotationConfigApplicationContext start(Settings settings) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean(Settings.class, () -> settings);
        context.register(Config.class);
        context.refresh();
        return context;
    }

    /** The application's configuration. */
    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
    static class Config {

        @Bean(destroyMethod = "close")
        RedisSynchronizers synchronizers(Settings settings) {
            return RedisSynchronizers.builder().uri(settings.uri()).keyPrefix(settings.prefix())
                    .lease(settings.lease())
                    .lostHoldListener(lost -> settings.reports().accept("LOST " + lost.name()))
                    .build();
        }

        @Bean
        LockProvider lockProvider(RedisSynchronizers synchronizers) {
            return new SynchronizersLockProvider(synchronizers).withKeepAlive();
        }

        @Bean(destroyMethod = "close")
        FencedStore store(Settings settings) {
            return new FencedStore(settings.uri(), settings.prefix());
        }

        @Bean
        Job job(Settings settings, FencedStore store) {
            return new Job(settings, store);
        }
    }

    /** The scheduled job. Public and not final: ShedLock's proxy subclasses it. */
    public static class Job {

        private final Settings settings;
        private final FencedStore store;

        Job(Settings settings, FencedStore store) {
            this.settings = settings;
            this.store = store;
        }

        /** Writes once to the store with the run's fencing token. */
        @Scheduled(fixedDelay = 5)
        @SchedulerLock(name = JOB)
        public void run() throws InterruptedException {
            long token = SynchronizersLockProvider.currentFencingToken();
            store.begin();
            try {
                if (settings.freezable() && store.exists("freeze")) {
                    settings.reports().accept("HOLDING " + token);
                    awaitThaw();
                } else {
                    Thread.sleep(10);   // the job's work, so that the other application's runs find it held
                }
                settings.reports().accept((store.write(token) ? "WROTE " : "REFUSED ") + token);
            } finally {
                store.end();
            }
        }

        /** Polls the freeze flag (a test's switch, not synchronisation of the code under test). */
        private void awaitThaw() throws InterruptedException {
            while (true) {
                try {
                    if (!store.exists("freeze")) {
                        return;
                    }
                } catch (RuntimeException e) {
                    // a command that timed out while the JVM was stopped: ask again
                }
                Thread.sleep(20);
            }
        }
    }
}
