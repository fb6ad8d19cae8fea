/**
 * Internal: may change without notice. The Redlock's lock: {@link dev.synchronizers.redis.quorum.QuorumLockBackend}
 * over the client's {@link dev.synchronizers.redis.quorum.QuorumNodes}, each a
 * {@link dev.synchronizers.redis.quorum.RedlockNode}; {@link dev.synchronizers.redis.quorum.Tally}
 * sends one call's replies from every node to a single decision, taken once a quorum agrees or can no
 * longer agree, and {@link dev.synchronizers.redis.quorum.QuorumLease} keeps a hold's lease on them.
 */
package dev.synchronizers.redis.quorum;
