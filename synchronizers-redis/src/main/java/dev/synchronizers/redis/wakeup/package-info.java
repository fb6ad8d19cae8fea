/**
 * Internal: may change without notice. The wake-up dispatcher: one Pub/Sub connection per client,
 * subscriptions counted per channel, every waiter woken after a reconnect.
 */
package dev.synchronizers.redis.wakeup;
