/**
 * The Redis implementation of the synchronizers API: {@link dev.synchronizers.redis.RedisSynchronizers}
 * for one server, a Sentinel set or a Cluster, and {@link dev.synchronizers.redis.Redlock} for a quorum
 * of independent servers.
 *
 * <p>Exports {@link dev.synchronizers.redis} only. Its sub-packages (the lock, semaphore and latch
 * families, the client context, the quorum, topology, watchdog, wake-up, metrics, script and support
 * machinery) are internal: unreachable on the module path, and free to change without notice on the
 * class path too. Lettuce and Micrometer types appear in the builders' signatures, so both are read
 * transitively; Micrometer is needed only by a client built with a meter registry.
 */
module dev.synchronizers.redis {
    requires transitive dev.synchronizers;
    requires transitive lettuce.core;
    requires static transitive micrometer.core;
    requires com.github.benmanes.caffeine;
    requires org.slf4j;

    exports dev.synchronizers.redis;
}
