/**
 * Internal: may change without notice. The topology seam: where a client's commands, scripts,
 * watchdog batches and wake-ups go, one {@link dev.synchronizers.redis.topology.Topology} per kind
 * of deployment (a standalone server, a Sentinel-managed master, a Redis Cluster). The
 * synchronizers never know which one they run on. The options of the Lettuce clients created for
 * each kind live here too ({@link dev.synchronizers.redis.topology.StandaloneTopology#clientOptions},
 * {@link dev.synchronizers.redis.topology.ClusterTopology#clientOptions}).
 */
package dev.synchronizers.redis.topology;
