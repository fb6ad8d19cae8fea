/**
 * Internal: may change without notice. The topology seam: where a client's commands, scripts,
 * watchdog batches and wake-ups go, one {@link dev.synchronizers.redis.topology.Topology} per kind
 * of deployment (a standalone server, a Sentinel-managed master, a Redis Cluster). The
 * synchronizers never know which one they run on.
 */
package dev.synchronizers.redis.topology;
