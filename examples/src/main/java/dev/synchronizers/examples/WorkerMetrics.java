package dev.synchronizers.examples;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The meter registry of one demo worker JVM: the synchronizers record their meters in it (see
 * {@code RedisSynchronizers.Builder.meterRegistry}), and the rounds without them (the naive lock,
 * the per-JVM semaphore) time their waits in a {@value #BASELINE_WAIT} timer of their own, so that
 * every round's percentiles come from the same place. Waits are published with their median and
 * 99th percentile, as a registry's configuration asks of any timer.
 */
final class WorkerMetrics {

    /** The timer of waits that no synchronizer of ours records. */
    static final String BASELINE_WAIT = "demo.wait";

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    WorkerMetrics() {
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                return id.getName().equals("synchronizers.wait") || id.getName().equals(BASELINE_WAIT)
                        ? DistributionStatisticConfig.builder().percentiles(0.5, 0.99).build().merge(config)
                        : config;
            }
        });
    }

    /** The timer a baseline round records its waits in. */
    Timer baselineWait() {
        return registry.timer(BASELINE_WAIT);
    }

    /**
     * Reads a wait timer back: {@code wait_count=<n> wait_p50=<ms> wait_p99=<ms>}.
     *
     * @param timer the timer
     */
    static String waits(Timer timer) {
        double p50 = 0;
        double p99 = 0;
        for (ValueAtPercentile value : timer.takeSnapshot().percentileValues()) {
            if (value.percentile() == 0.5) {
                p50 = value.value(TimeUnit.MILLISECONDS);
            } else if (value.percentile() == 0.99) {
                p99 = value.value(TimeUnit.MILLISECONDS);
            }
        }
        return String.format(Locale.ROOT, "wait_count=%d wait_p50=%.2f wait_p99=%.2f", timer.count(), p50, p99);
    }

    /** The waits of our synchronizer {@code kind} that ended with it acquired. */
    Timer acquiredWaits(String kind) {
        return registry.get("synchronizers.wait").tags("kind", kind, "outcome", "acquired").timer();
    }

    /** Lost holds of every kind and cause: {@code synchronizers.hold.lost}, summed. */
    long lostHolds() {
        return (long) registry.find("synchronizers.hold.lost").counters().stream().mapToDouble(Counter::count).sum();
    }
}
