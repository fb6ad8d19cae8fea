package dev.synchronizers.redis.metrics;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.script.Script;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntSupplier;

/**
 * Turns a client's reports into Micrometer meters: the only class that refers to Micrometer, so
 * that it is loaded only when the user passed a registry. The meters and their tags are listed in
 * {@code docs/observability.md}; every name starts with {@code synchronizers.}.
 *
 * <p>Meters are resolved up front (per script, per follow-up) or once per synchronizer kind (and
 * name group, if opted in), so that recording is a field read and an increment. Several clients
 * may share one registry: their meters add up, except the gauges, which carry a {@code client} tag
 * and are removed when their client closes.
 */
public final class MicrometerRecorder implements Recorder {

    private final MeterRegistry registry;
    /** Maps a synchronizer's name to the value of its {@code name} tag; null: no name tag. */
    private final Function<String, String> nameTag;
    private final String clientId;
    private final Map<Script, Counter> calls = new EnumMap<>(Script.class);
    private final Map<Script, Counter> noScripts = new EnumMap<>(Script.class);
    private final Map<FollowUp, Counter> followUps = new EnumMap<>(FollowUp.class);
    private final Timer tick;
    private final DistributionSummary renewed;
    private final Counter renewalsFailed;
    private final Counter wakeups;
    /** Per kind and name group: one meter set each, shared by every synchronizer object in it. */
    private final Map<List<String>, Meters> synchronizers = new ConcurrentHashMap<>();
    private final List<Meter> gauges = new ArrayList<>();

    /** The kinds of a {@code RedisSynchronizers}: its meters are registered for these up front. */
    public static final List<String> CLIENT_KINDS = List.of("lock", "fair_lock", "read_lock", "write_lock",
            "semaphore", "latch");
    /** The kinds of a {@code Redlock}. */
    public static final List<String> REDLOCK_KINDS = List.of("redlock");
    /** The kinds whose holds can be lost; a latch holds nothing. */
    private static final List<String> HOLDLESS_KINDS = List.of("latch");

    /**
     * Registers the meters of a {@code RedisSynchronizers} client: see
     * {@link #MicrometerRecorder(Object, Function, String, List)} with {@link #CLIENT_KINDS}.
     *
     * @param registry where the meters live
     * @param nameTag maps a synchronizer's name to a bounded {@code name} tag value, or null for no
     *     name tag
     * @param clientId the client's id, the {@code client} tag of its gauges
     */
    public MicrometerRecorder(Object registry, Function<String, String> nameTag, String clientId) {
        this(registry, nameTag, clientId, CLIENT_KINDS);
    }

    /**
     * Registers the client's meters, at zero, before anything happens: so that a dashboard or an
     * alert on a counter (e.g. {@code synchronizers.hold.lost}) sees the series from start-up, not
     * from its first event. Without a name tag, that is every meter of every kind in {@code kinds},
     * with every {@code cause} of {@code synchronizers.hold.lost}, and both {@code call}s of
     * {@code synchronizers.replica.acks.short}; with a name tag, the per-kind meters come with the
     * first synchronizer of each name group (the groups are not known before).
     *
     * @param registry where the meters live
     * @param nameTag maps a synchronizer's name to a bounded {@code name} tag value, or null for no
     *     name tag
     * @param clientId the client's id, the {@code client} tag of its gauges
     * @param kinds the {@code kind} tag values this client records
     */
    public MicrometerRecorder(Object registry, Function<String, String> nameTag, String clientId, List<String> kinds) {
        this.registry = (MeterRegistry) registry;
        this.nameTag = nameTag;
        this.clientId = clientId;
        for (Script script : Script.values()) {
            String file = script.file.substring(0, script.file.length() - ".lua".length());
            calls.put(script, Counter.builder("synchronizers.script.calls")
                    .description("Script calls sent to Redis (EVALSHA, or EVAL for those always sent with their text), by script")
                    .tag("script", file).register(this.registry));
            noScripts.put(script, Counter.builder("synchronizers.script.noscript")
                    .description("Script calls that met NOSCRIPT: sent again with the script's text, or failed past the command timeout")
                    .tag("script", file).register(this.registry));
        }
        for (FollowUp action : FollowUp.values()) {
            followUps.put(action, Counter.builder("synchronizers.followups")
                    .description("Follow-ups that settle a call whose outcome is unknown or end a wait cleanly")
                    .tag("action", action.tag).register(this.registry));
        }
        this.tick = Timer.builder("synchronizers.watchdog.tick")
                .description("Duration of a watchdog tick: retries, one batched renewal per script in use, chores")
                .register(this.registry);
        this.renewed = DistributionSummary.builder("synchronizers.watchdog.renewed")
                .description("Leases renewed per watchdog tick").baseUnit("leases")
                .register(this.registry);
        this.renewalsFailed = Counter.builder("synchronizers.watchdog.renewals.failed")
                .description("Lease renewals a tick could not make because Redis did not answer in time")
                .register(this.registry);
        this.wakeups = Counter.builder("synchronizers.wakeups")
                .description("Wake-up messages received on the Pub/Sub connection")
                .register(this.registry);
        replicaAcksShort("acquire", 0);
        replicaAcksShort("renew", 0);
        if (nameTag == null) {
            for (String kind : kinds) {
                synchronizers.computeIfAbsent(List.of(kind), key -> new Meters(kind, null));
                if (!HOLDLESS_KINDS.contains(kind)) {
                    for (LostHold.Cause cause : LostHold.Cause.values()) {
                        lost(kind, cause, null, 0);
                    }
                }
            }
        }
    }

    @Override
    public SynchronizerMeters synchronizer(String kind, String name) {
        String group = group(name);
        return synchronizers.computeIfAbsent(group == null ? List.of(kind) : List.of(kind, group),
                key -> new Meters(kind, group));
    }

    @Override
    public void lost(LostHold hold) {
        lost(hold.kind().replace(' ', '_'), hold.cause(), group(hold.name()), 1);
    }

    /** Adds {@code count} (0: only registers) to the lost holds of {@code kind} and {@code cause}. */
    private void lost(String kind, LostHold.Cause cause, String group, int count) {
        Tags tags = Tags.of("kind", kind, "cause", cause.name().toLowerCase(Locale.ROOT));
        Counter.builder("synchronizers.hold.lost")
                .description("Holds that ended without unlock() or release(), by cause")
                .tags(group == null ? tags : tags.and("name", group))
                .register(registry).increment(count);
    }

    @Override
    public void scriptCalled(Script script) {
        calls.get(script).increment();
    }

    @Override
    public void noScript(Script script) {
        noScripts.get(script).increment();
    }

    @Override
    public void tick(long nanos, int renewedLeases, int failed) {
        tick.record(nanos, TimeUnit.NANOSECONDS);
        renewed.record(renewedLeases);
        if (failed > 0) {
            renewalsFailed.increment(failed);
        }
    }

    @Override
    public void replicaAcksShort(String call) {
        replicaAcksShort(call, 1);
    }

    /** Adds {@code count} (0: only registers) to the short replica checks of {@code call}. */
    private void replicaAcksShort(String call, int count) {
        Counter.builder("synchronizers.replica.acks.short")
                .description("WAITs that reported fewer replicas than replicaAcks asks, by call")
                .tag("call", call).register(registry).increment(count);
    }

    @Override
    public void wakeupReceived() {
        wakeups.increment();
    }

    @Override
    public void followUp(FollowUp action) {
        followUps.get(action).increment();
    }

    @Override
    public void clientGauges(IntSupplier leases, IntSupplier pendingRetries, IntSupplier channels) {
        // Strong references: the suppliers are method references nobody else holds, and a gauge's
        // weak reference would let them be collected (the gauge then reads NaN). close() removes them.
        synchronized (gauges) {
            gauges.add(Gauge.builder("synchronizers.watchdog.leases", leases, IntSupplier::getAsInt)
                    .description("Leases the client's watchdog tracks: holds, and queue places of waiters")
                    .tag("client", clientId).strongReference(true).register(registry));
            gauges.add(Gauge.builder("synchronizers.followups.pending", pendingRetries, IntSupplier::getAsInt)
                    .description("Follow-ups and releases Redis did not answer, waiting to be retried")
                    .tag("client", clientId).strongReference(true).register(registry));
            gauges.add(Gauge.builder("synchronizers.wakeup.channels", channels, IntSupplier::getAsInt)
                    .description("Channels the client is subscribed to for wake-ups")
                    .tag("client", clientId).strongReference(true).register(registry));
        }
    }

    @Override
    public void close() {
        synchronized (gauges) {
            gauges.forEach(registry::remove);
            gauges.clear();
        }
    }

    /** The name tag's value for {@code name}, or null without a name tag. */
    private String group(String name) {
        if (nameTag == null) {
            return null;
        }
        return Objects.requireNonNull(nameTag.apply(name),
                () -> "meterNameTag returned null for the name \"" + name + "\"");
    }

    /** The meters of one kind (and name group). */
    private final class Meters implements SynchronizerMeters {
        private final Map<Outcome, Timer> waits = new EnumMap<>(Outcome.class);
        private final Timer held;
        private final LongTaskTimer active;
        private final Counter handedOverLocally;
        private final Counter handedOverInRedis;
        private final Counter cacheTakes;
        private final Counter asks;
        private final Map<String, Counter> cacheEnds = new ConcurrentHashMap<>();
        private final Tags tags;

        Meters(String kind, String group) {
            Tags tags = group == null ? Tags.of("kind", kind) : Tags.of("kind", kind, "name", group);
            for (Outcome outcome : Outcome.values()) {
                waits.put(outcome, Timer.builder("synchronizers.wait")
                        .description("Time a caller waited for an acquisition that went to Redis, by outcome")
                        .tags(tags).tag("outcome", outcome.tag).register(registry));
            }
            this.held = Timer.builder("synchronizers.hold")
                    .description("Time from acquisition to the unlock() or release() that ended the hold")
                    .tags(tags).register(registry);
            this.active = LongTaskTimer.builder("synchronizers.hold.active")
                    .description("Holds this client has now, and how long they have lasted")
                    .tags(tags).register(registry);
            this.handedOverLocally = Counter.builder("synchronizers.handovers")
                    .description("Waiters handed what they waited for without a try of their own")
                    .tags(tags).tag("via", "local").register(registry);
            this.handedOverInRedis = Counter.builder("synchronizers.handovers")
                    .description("Waiters handed what they waited for without a try of their own")
                    .tags(tags).tag("via", "redis").register(registry);
            this.cacheTakes = Counter.builder("synchronizers.cache.takes")
                    .description("Holds taken from a lock the client caches, with no round trip (but one per block of reserved tokens)")
                    .tags(tags).register(registry);
            this.asks = Counter.builder("synchronizers.cache.asks")
                    .description("Messages asking another client to give back a lock it caches")
                    .tags(tags).register(registry);
            this.tags = tags;
        }

        @Override
        public void waited(Outcome outcome, long nanos) {
            waits.get(outcome).record(nanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public Object holdStarted() {
            return active.start();
        }

        @Override
        public void holdEnded(Object handle, boolean released) {
            long nanos = ((LongTaskTimer.Sample) handle).stop();
            if (released) {
                held.record(nanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void handedOver(boolean local) {
            (local ? handedOverLocally : handedOverInRedis).increment();
        }

        @Override
        public void cacheTaken() {
            cacheTakes.increment();
        }

        @Override
        public void cacheEnded(String cause) {
            cacheEnds.computeIfAbsent(cause, c -> Counter.builder("synchronizers.cache.ends")
                    .description("Times the client stopped caching a lock, by cause")
                    .tags(tags).tag("cause", c).register(registry)).increment();
        }

        @Override
        public void askSent() {
            asks.increment();
        }
    }
}
