package dev.synchronizers.redis.wakeup;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every wake-up subscription on several independent servers at once (a Redlock's nodes): a channel
 * is subscribed on each of them, and a message from any of them reaches the dispatcher. A release
 * publishes on every node it reaches, so a waiter hears it as long as one of its subscriptions is
 * live; nodes that are down are tolerated.
 *
 * <p>Each node's events pass through as they are: a node that drops its connection interrupts the
 * channels (waiters then try once more than needed, never one less), and its re-subscriptions make
 * them live again.
 */
public final class FanOutTransport implements PubSubTransport {

    private final List<PubSubTransport> nodes;

    /**
     * @param nodes one transport per server, each used only through this one
     */
    public FanOutTransport(List<PubSubTransport> nodes) {
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("no nodes");
        }
        this.nodes = List.copyOf(nodes);
    }

    @Override
    public void listen(Listener listener) {
        for (PubSubTransport node : nodes) {
            node.listen(listener);
        }
    }

    /**
     * Subscribes on every node; completes as soon as one node confirms (its releases' messages will
     * reach the dispatcher), exceptionally only if every node refuses.
     */
    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        CompletableFuture<Void> first = new CompletableFuture<>();
        AtomicInteger failed = new AtomicInteger();
        for (PubSubTransport node : nodes) {
            node.subscribe(channel).whenComplete((ok, failure) -> {
                if (failure == null) {
                    first.complete(null);
                } else if (failed.incrementAndGet() == nodes.size()) {
                    first.completeExceptionally(failure);
                }
            });
        }
        return first;
    }

    /** Unsubscribes on every node; completes exceptionally if any node could not be told. */
    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        CompletableFuture<?>[] all = nodes.stream().map(node -> node.unsubscribe(channel)).toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(all);
    }

    @Override
    public boolean isOpen(String channel) {
        return nodes.stream().anyMatch(node -> node.isOpen(channel));
    }

    @Override
    public void checkHealth(Duration timeout) {
        nodes.forEach(node -> node.checkHealth(timeout));
    }

    @Override
    public void close() {
        nodes.forEach(PubSubTransport::close);
    }
}
