package dev.synchronizers.redis.latch;

import dev.synchronizers.redis.client.HashTag;

/**
 * Key and channel names for one countdown latch, under the name's hash tag. No other class builds
 * key names for a latch.
 *
 * @param latch the count; exists only while it is above zero, and then has no TTL
 * @param epoch when the count last reached zero (server time in microseconds); leased
 * @param wakeups the channel reaching zero publishes to
 */
public record LatchKeys(String latch, String epoch, String wakeups) {

    public static LatchKeys of(String prefix, String name) {
        String base = HashTag.base(prefix, "latch", name);
        return new LatchKeys(base, base + ":epoch", base + ":wake");
    }

    /** The keys of latch-count-down.lua and latch-delete.lua. */
    public String[] all() {
        return new String[] {latch, epoch, wakeups};
    }
}
