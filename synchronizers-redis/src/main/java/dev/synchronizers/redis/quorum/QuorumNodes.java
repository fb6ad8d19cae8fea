package dev.synchronizers.redis.quorum;

import java.util.List;

/**
 * The nodes of one Redlock client and the arithmetic of their majority: what a quorum lock needs of
 * the client that made it, handed to it at construction so that this package never reaches back up
 * to the entry point. Immutable.
 */
public final class QuorumNodes {

    /** The nodes, in node order (a node's index is its place here). */
    public final List<RedlockNode> nodes;
    /** How many nodes must hold a lock for it to be held: {@code N/2 + 1}. */
    public final int quorum;
    private final double clockDriftFactor;

    /**
     * @param nodes the client's nodes, in node order
     * @param clockDriftFactor the share of a lease that the nodes' clocks may drift apart by
     */
    public QuorumNodes(List<RedlockNode> nodes, double clockDriftFactor) {
        this.nodes = List.copyOf(nodes);
        this.quorum = quorumOf(nodes.size());
        this.clockDriftFactor = clockDriftFactor;
    }

    /** The quorum of {@code n} nodes: a strict majority. */
    public static int quorumOf(int n) {
        return n / 2 + 1;
    }

    /** How much earlier than the local clock says a lease of {@code millis} may end on some node. */
    public long driftMillis(long millis) {
        return driftMillis(millis, clockDriftFactor);
    }

    /** The drift allowance of a lease: {@code millis × clockDriftFactor + 2 ms}, rounded up. */
    public static long driftMillis(long millis, double clockDriftFactor) {
        return (long) Math.ceil(millis * clockDriftFactor) + 2;
    }
}
