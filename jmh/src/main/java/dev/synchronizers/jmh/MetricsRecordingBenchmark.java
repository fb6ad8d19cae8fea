package dev.synchronizers.jmh;

import dev.synchronizers.redis.metrics.MicrometerRecorder;
import dev.synchronizers.redis.metrics.Recorder;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.script.Script;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What metrics add to one uncontended {@code lock()} + {@code unlock()}, without Redis: the same
 * recording calls the lock makes (two clock reads, a wait, a hold started and ended, two script
 * calls counted), into a {@code SimpleMeterRegistry} or into nothing. Divided by the time of
 * {@link LockUncontendedBenchmark}'s operation, it is the overhead of metrics, measured apart from
 * the round trips' noise that an end-to-end comparison has to see through.
 *
 * <pre>java -jar jmh/target/benchmarks.jar MetricsRecordingBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MetricsRecordingBenchmark extends BenchmarkDefaults {

    /** {@code SIMPLE}: a {@code SimpleMeterRegistry}; {@code NONE}: no registry, as without {@code meterRegistry(...)}. */
    @Param({"NONE", "SIMPLE"})
    public String registry;

    private Recorder recorder;
    private SynchronizerMeters meters;

    @Setup
    public void setUp() {
        recorder = registry.equals("NONE")
                ? Recorder.NONE
                : new MicrometerRecorder(new SimpleMeterRegistry(), null, "bench");
        meters = recorder.synchronizer("lock", "bench");
    }

    /** The recording of one uncontended lock() and unlock(). */
    @Benchmark
    public void lockUnlockRecording() {
        long start = System.nanoTime();
        recorder.scriptCalled(Script.LOCK_ACQUIRE);
        Object hold = meters.holdStarted();
        meters.waited(Recorder.Outcome.ACQUIRED, System.nanoTime() - start);
        recorder.scriptCalled(Script.LOCK_RELEASE);
        meters.holdEnded(hold, true);
    }
}
