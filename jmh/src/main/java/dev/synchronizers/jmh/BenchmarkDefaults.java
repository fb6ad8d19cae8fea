package dev.synchronizers.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The one place that sets the run defaults of every benchmark in this module, which all extend
 * it (JMH reads these annotations from superclasses): throughput in operations per second, one
 * fork, 2 warm-up iterations of 5 s, 3 measured iterations of 5 s. Override them on the command
 * line ({@code -f -wi -w -i -r}), never per class.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 5, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 3, time = 5, timeUnit = TimeUnit.SECONDS)
public abstract class BenchmarkDefaults {
}
