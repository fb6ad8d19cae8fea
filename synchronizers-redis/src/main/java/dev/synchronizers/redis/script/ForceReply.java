package dev.synchronizers.redis.script;

import java.util.List;

/**
 * The reply of {@code lock-force-unlock.lua}, whose header declares:
 * <pre>
 * {1, ''}      the lock was held, and is released
 * {1, client}  the lock was held, among others by the cache of that client id, and is released
 * {0, ''}      the lock was not held
 * </pre>
 *
 * @param released whether the lock was held and is now released
 * @param cacher the id of the client whose cache of the lock the force ended, so that it can be
 *     told at once; {@code ""} if none
 */
public record ForceReply(boolean released, String cacher) {

    private static final String EXPECTED = "{1, ''}, {1, client} or {0, ''}";

    /**
     * Reads the script's reply.
     *
     * @param script the script that answered: {@link Script#LOCK_FORCE_UNLOCK}
     * @param reply its raw reply
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is another script
     * @throws UnexpectedReplyException if the reply has none of the declared shapes
     */
    public static ForceReply of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(java.util.EnumSet.of(Script.LOCK_FORCE_UNLOCK), script, "ForceReply");
        List<?> list = ReplyShape.list(script, reply, EXPECTED, new int[] {2});
        long code = ReplyShape.integer(script, list, 0, EXPECTED);
        String cacher = ReplyShape.string(script, list, 1, EXPECTED);
        if (code == 1L || code == 0L && cacher.isEmpty()) {
            return new ForceReply(code == 1L, cacher);
        }
        throw new UnexpectedReplyException(script, reply, EXPECTED);
    }
}
