/**
 * Internal: may change without notice. Quorum machinery for the Redlock: {@link
 * dev.synchronizers.redis.quorum.Tally} sends one call's replies from every node to a single
 * decision, taken once a quorum agrees or can no longer agree.
 */
package dev.synchronizers.redis.quorum;
