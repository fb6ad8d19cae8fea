package dev.synchronizers.redis.script;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of {@code semaphore-snapshot.lua}: a semaphore's total, grants and waiters at one
 * moment. Its header declares:
 * <pre>
 * {total, queued, {grant, permits, remaining_ms, ...}}
 *   total    the total (0 if never set)
 *   queued   waiters whose place is live
 *   grants   only those whose lease is live and that hold permits
 * </pre>
 * Grant names are kept as the script sent them.
 *
 * @param total the total number of permits; {@code 0} if never set
 * @param queued the waiters whose place is live
 * @param grants the live grants that hold permits, in the script's order
 */
public record SemaphorePicture(long total, long queued, List<Grant> grants) {

    /**
     * A live grant.
     *
     * @param grant the grant's name, as its acquiring client wrote it
     * @param permits the permits it holds
     * @param remainingMillis what is left of its lease, in ms
     */
    public record Grant(String grant, long permits, long remainingMillis) {
    }

    private static final Set<Script> DECODED = EnumSet.of(Script.SEMAPHORE_SNAPSHOT);

    private static final String EXPECTED = "{total, queued, {grant, permits, remaining_ms, ...}}";

    /** Copies the list, so that the picture cannot change. */
    public SemaphorePicture {
        grants = List.copyOf(grants);
    }

    /**
     * Reads a reply of {@code semaphore-snapshot.lua}.
     *
     * @param script the script that answered: {@link Script#SEMAPHORE_SNAPSHOT}
     * @param reply its raw reply
     * @return the decoded picture
     * @throws IllegalArgumentException if {@code script} is another script
     * @throws UnexpectedReplyException if the reply does not have the declared shape
     */
    public static SemaphorePicture of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "SemaphorePicture");
        List<?> list = ReplyShape.list(script, reply, EXPECTED, 3);
        long total = ReplyShape.integer(script, list, 0, EXPECTED);
        long queued = ReplyShape.integer(script, list, 1, EXPECTED);
        List<?> fields = ReplyShape.groups(script, list, 2, 3, EXPECTED);
        List<Grant> grants = new ArrayList<>();
        for (int i = 0; i < fields.size(); i += 3) {
            if (!(fields.get(i + 1) instanceof Long permits) || !(fields.get(i + 2) instanceof Long remaining)) {
                throw new UnexpectedReplyException(script, reply, EXPECTED);
            }
            grants.add(new Grant(ReplyShape.text(script, list, fields, i, EXPECTED), permits, remaining));
        }
        return new SemaphorePicture(total, queued, grants);
    }
}
