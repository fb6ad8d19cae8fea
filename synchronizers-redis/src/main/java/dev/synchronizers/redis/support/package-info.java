/**
 * Internal: may change without notice. Small pieces shared by the synchronizers and the machinery:
 * waiting for a reply within a bound, turning the client's failures into this library's
 * exceptions, and the client's refusal of a command while disconnected ({@link
 * dev.synchronizers.redis.support.Disconnected}).
 */
package dev.synchronizers.redis.support;
