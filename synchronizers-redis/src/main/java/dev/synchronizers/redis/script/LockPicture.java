package dev.synchronizers.redis.script;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of {@code lock-snapshot.lua}: a lock's holders and waiters at one moment. Its header
 * declares:
 * <pre>
 * {pttl, queued, {owner, token, ...}, {client, count, ...}}
 *   pttl     the hold's remaining lease in ms (-2: no hold, -1: no lease)
 *   queued   waiters of the fair queue whose place is live
 *   holders  the owners in the lock hash, with their tokens
 *   waiting  the non-fair waiting counts per client that still count at this moment
 * </pre>
 * Owner strings are kept as the script sent them; reading them is not this type's job.
 *
 * @param pttl the hold's remaining lease in ms; {@code -2} if there is no hold, {@code -1} if it has no lease
 * @param queued the waiters of the fair queue whose place is live
 * @param holders the owners in the lock hash, in the script's order
 * @param waiting the non-fair waiting counts per client, in the script's order
 */
public record LockPicture(long pttl, long queued, List<Holder> holders, List<Waiting> waiting) {

    /**
     * An owner in the lock hash.
     *
     * @param owner the owner string, as written by the acquiring client
     * @param token its hold's fencing token
     */
    public record Holder(String owner, long token) {
    }

    /**
     * A client's count of non-fair waiters.
     *
     * @param client the client's id
     * @param count how many of its threads wait
     */
    public record Waiting(String client, long count) {
    }

    private static final Set<Script> DECODED = EnumSet.of(Script.LOCK_SNAPSHOT);

    private static final String EXPECTED = "{pttl, queued, {owner, token, ...}, {client, count, ...}}";

    /** Copies the lists, so that the picture cannot change. */
    public LockPicture {
        holders = List.copyOf(holders);
        waiting = List.copyOf(waiting);
    }

    /**
     * Reads a reply of {@code lock-snapshot.lua}.
     *
     * @param script the script that answered: {@link Script#LOCK_SNAPSHOT}
     * @param reply its raw reply
     * @return the decoded picture
     * @throws IllegalArgumentException if {@code script} is another script
     * @throws UnexpectedReplyException if the reply does not have the declared shape
     */
    public static LockPicture of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "LockPicture");
        List<?> list = ReplyShape.list(script, reply, EXPECTED, 4);
        long pttl = ReplyShape.integer(script, list, 0, EXPECTED);
        long queued = ReplyShape.integer(script, list, 1, EXPECTED);
        List<?> owners = ReplyShape.groups(script, list, 2, 2, EXPECTED);
        List<Holder> holders = new ArrayList<>();
        for (int i = 0; i < owners.size(); i += 2) {
            holders.add(new Holder(ReplyShape.text(script, list, owners, i, EXPECTED),
                    ReplyShape.number(script, list, owners, i + 1, EXPECTED)));
        }
        List<?> counts = ReplyShape.groups(script, list, 3, 2, EXPECTED);
        List<Waiting> waiting = new ArrayList<>();
        for (int i = 0; i < counts.size(); i += 2) {
            if (!(counts.get(i + 1) instanceof Long count)) {
                throw new UnexpectedReplyException(script, reply, EXPECTED);
            }
            waiting.add(new Waiting(ReplyShape.text(script, list, counts, i, EXPECTED), count));
        }
        return new LockPicture(pttl, queued, holders, waiting);
    }
}
