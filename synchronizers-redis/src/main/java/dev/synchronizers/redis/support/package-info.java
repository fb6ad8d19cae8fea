/**
 * Internal: may change without notice. Small pieces shared by the synchronizers and the machinery:
 * waiting for a reply within a bound, and turning the client's failures into this library's
 * exceptions.
 */
package dev.synchronizers.redis.support;
