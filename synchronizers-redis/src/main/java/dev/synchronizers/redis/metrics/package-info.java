/**
 * Internal: may change without notice. Where the synchronizers and the machinery report what they
 * do: a {@link dev.synchronizers.redis.metrics.Recorder} that does nothing unless the user gave the
 * builder a Micrometer {@code MeterRegistry}, in which case {@link
 * dev.synchronizers.redis.metrics.MicrometerRecorder} turns the reports into meters. Only that class
 * refers to Micrometer, so a client without Micrometer on its classpath never loads it.
 */
package dev.synchronizers.redis.metrics;
