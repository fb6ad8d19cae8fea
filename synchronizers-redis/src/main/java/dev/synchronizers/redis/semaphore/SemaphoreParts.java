package dev.synchronizers.redis.semaphore;

import dev.synchronizers.redis.client.Machinery;
import dev.synchronizers.redis.metrics.SynchronizerMeters;
import dev.synchronizers.redis.watchdog.HoldLease;
import dev.synchronizers.redis.watchdog.Watchdog;

/**
 * What the parts of one {@link RedisSemaphore} object share: its name, its keys, the client's
 * machinery, its meters and this client's books of its grants. Made once per semaphore object;
 * the facade, its {@link Acquisitions}, its {@link GrantEnds} and its handles all read the same one.
 *
 * @param name the semaphore's name
 * @param keys its key and channel names
 * @param machinery the client's scripts, watchdog, wake-ups and follow-ups
 * @param meters its meters
 * @param grants this client's grants of it, live or lost
 */
record SemaphoreParts(String name, SemaphoreKeys keys, Machinery machinery, SynchronizerMeters meters,
        Grants grants) {

    /** The kind of synchronizer, as lost-hold reports, meters and messages name it. */
    static final String KIND = "semaphore";

    /** The parts of the semaphore {@code name}, with empty books whose leases the watchdog keeps. */
    static SemaphoreParts of(String name, Machinery machinery) {
        SynchronizerMeters meters = machinery.metrics.synchronizer(KIND, name);
        Grants grants = new Grants(what("", name), new Grants.Keeper() {
            @Override
            public boolean stopRenewing(HoldLease lease) {
                // Every lease in the books is one this semaphore registered with the watchdog.
                return machinery.watchdog.unregister((Watchdog.Lease) lease);
            }

            @Override
            public void holdEnded(Object metric, boolean released) {
                meters.holdEnded(metric, released);
            }
        });
        return new SemaphoreParts(name, SemaphoreKeys.of(machinery.keyPrefix, name), machinery, meters, grants);
    }

    /** The semaphore as messages name it, after {@code verb} if there is one: {@code acquire semaphore 'orders'}. */
    String what(String verb) {
        return what(verb, name);
    }

    private static String what(String verb, String name) {
        return (verb.isEmpty() ? "" : verb + " ") + KIND + " '" + name + "'";
    }
}
