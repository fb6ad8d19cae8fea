/**
 * Internal: may change without notice. The watchdog: one scheduler per client that renews every
 * held lease of a tick in one round trip per script, and reports the holds it finds gone as lost.
 */
package dev.synchronizers.redis.watchdog;
