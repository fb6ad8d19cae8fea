package dev.synchronizers.redis.script;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of a script that gives a client's lock cache a block of fencing tokens
 * (docs/design/lock-caching.md): the cache was taken, or its next block reserved, or neither.
 *
 * <p>Decodes the replies of {@code lock-cache-acquire.lua} and {@code lock-cache-reserve.lua},
 * whose headers declare:
 * <pre>
 * {1, lo, hi, waiting}  taken or reserved: [lo, hi] is the block; lo is the cache's base token when
 *                       taken; waiting is 1 if another client asks the cache back (every script)
 * {0, pttl}             not taken: held by another owner that is no cache (lock-cache-acquire.lua)
 * {0, pttl, client}     not taken: held by the cache of another client, named, now asked back
 *                       (lock-cache-acquire.lua)
 * {0, 0, 0, 0}          not reserved: the cache is gone (lock-cache-reserve.lua)
 * </pre>
 *
 * @param granted whether the block was given
 * @param lo the block's first token if granted; otherwise {@code -1}
 * @param hi the block's last token if granted; otherwise {@code -1}
 * @param askedBack if granted, whether another client waits for the lock
 * @param waitMillis if the take failed, the holder's remaining lease in ms ({@code -1}: it has
 *     none); otherwise {@code 0}
 * @param cacher if the take failed because another client's cache holds the lock, that client's
 *     id; otherwise {@code ""}
 */
public record CacheBlockReply(boolean granted, long lo, long hi, boolean askedBack, long waitMillis, String cacher) {

    private static final Set<Script> DECODED = EnumSet.of(Script.LOCK_CACHE_ACQUIRE, Script.LOCK_CACHE_RESERVE);

    /**
     * Reads one of the scripts' replies above.
     *
     * @param script the script that answered
     * @param reply its raw reply
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is not one of the scripts above
     * @throws UnexpectedReplyException if the reply has none of the script's declared shapes
     */
    public static CacheBlockReply of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "CacheBlockReply");
        boolean taking = script == Script.LOCK_CACHE_ACQUIRE;
        String expected = taking
                ? "{1, lo, hi, waiting}, {0, pttl} or {0, pttl, client}"
                : "{1, lo, hi, waiting} or {0, 0, 0, 0}";
        List<?> list = ReplyShape.list(script, reply, expected, 2, 3, 4);
        long code = ReplyShape.integer(script, list, 0, expected);
        if (code == 1L && list.size() == 4) {
            long lo = ReplyShape.integer(script, list, 1, expected);
            long hi = ReplyShape.integer(script, list, 2, expected);
            long waiting = ReplyShape.integer(script, list, 3, expected);
            if (hi >= lo && (waiting == 0L || waiting == 1L)) {
                return new CacheBlockReply(true, lo, hi, waiting == 1L, 0, "");
            }
        } else if (code == 0L && taking && list.size() == 2) {
            return new CacheBlockReply(false, -1, -1, false, ReplyShape.integer(script, list, 1, expected), "");
        } else if (code == 0L && taking && list.size() == 3) {
            long pttl = ReplyShape.integer(script, list, 1, expected);
            String client = ReplyShape.string(script, list, 2, expected);
            if (!client.isEmpty()) {
                return new CacheBlockReply(false, -1, -1, false, pttl, client);
            }
        } else if (code == 0L && !taking && list.size() == 4) {
            return new CacheBlockReply(false, -1, -1, false, 0, "");
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }
}
