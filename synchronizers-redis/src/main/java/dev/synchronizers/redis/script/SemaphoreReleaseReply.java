package dev.synchronizers.redis.script;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of {@code semaphore-release.lua}: how many permits the call released, and which named
 * grants held none. Its header declares:
 * <pre>
 * {released, missing}  released: permits released by this call; missing: space-separated grants that
 *                      held no permits (lost: their lease ran out, or they were given up), "" if none
 * </pre>
 *
 * @param released the permits this call released ({@code 0} when a second run of the same release)
 * @param missing the grants that held no permits, in the script's order; empty if none
 */
public record SemaphoreReleaseReply(long released, List<String> missing) {

    private static final Set<Script> DECODED = EnumSet.of(Script.SEMAPHORE_RELEASE);

    private static final String EXPECTED = "{released, missing}";

    /** Copies the list, so that the reply cannot change. */
    public SemaphoreReleaseReply {
        missing = List.copyOf(missing);
    }

    /**
     * Reads a reply of {@code semaphore-release.lua}.
     *
     * @param script the script that answered: {@link Script#SEMAPHORE_RELEASE}
     * @param reply its raw reply
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is another script
     * @throws UnexpectedReplyException if the reply does not have the declared shape
     */
    public static SemaphoreReleaseReply of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "SemaphoreReleaseReply");
        List<?> list = ReplyShape.list(script, reply, EXPECTED, 2);
        long released = ReplyShape.integer(script, list, 0, EXPECTED);
        String missing = ReplyShape.string(script, list, 1, EXPECTED);
        if (released < 0) {
            throw new UnexpectedReplyException(script, reply, EXPECTED);
        }
        if (missing.isEmpty()) {
            return new SemaphoreReleaseReply(released, List.of());
        }
        List<String> grants = List.of(missing.split(" ", -1));
        if (grants.contains("")) {
            throw new UnexpectedReplyException(script, reply, EXPECTED);
        }
        return new SemaphoreReleaseReply(released, grants);
    }
}
