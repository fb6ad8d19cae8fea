/**
 * Internal: may change without notice. The watchdog: one scheduler per client that renews every
 * held lease of a tick in one round trip per script, and reports the holds it finds gone as lost
 * ({@link dev.synchronizers.redis.watchdog.Watchdog}, told what to renew by a
 * {@link dev.synchronizers.redis.watchdog.Renewal}); and the follow-ups of unknown outcomes that its
 * ticks send again until Redis answers ({@link dev.synchronizers.redis.watchdog.FollowUps}).
 */
package dev.synchronizers.redis.watchdog;
