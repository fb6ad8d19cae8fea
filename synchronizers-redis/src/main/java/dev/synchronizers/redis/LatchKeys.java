package dev.synchronizers.redis;

/**
 * Key and channel names for one countdown latch, under the name's hash tag. No other class builds
 * key names for a latch.
 *
 * @param latch the count; exists only while it is above zero, and then has no TTL
 * @param wakeups the channel reaching zero publishes to
 */
record LatchKeys(String latch, String wakeups) {

    static LatchKeys of(String prefix, String name) {
        String base = HashTag.base(prefix, "latch", name);
        return new LatchKeys(base, base + ":wake");
    }

    String[] both() {
        return new String[] {latch, wakeups};
    }
}
