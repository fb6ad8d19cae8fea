package dev.synchronizers.redis.script;

import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The reply of a lock acquire or try: the caller took the lock, or learns how long to wait.
 *
 * <p>Decodes the replies of {@code lock-acquire.lua}, {@code lock-acquire-waiting.lua},
 * {@code fair-lock-acquire.lua}, {@code rw-read-acquire.lua}, {@code rw-read-try.lua},
 * {@code rw-write-acquire.lua} and {@code rw-write-try.lua}, whose headers declare:
 * <pre>
 * {1, token}           acquired; token is the new hold's fencing token (every script)
 * {0, wait_ms}         not acquired; wait_ms is the holder's remaining lease, or how long until the
 *                      lock can change hands without a wake-up; -1: the holder has no lease
 *                      (every script but fair-lock-acquire.lua)
 * {0, wait_ms, floor}  not acquired (fair-lock-acquire.lua only, which queues the caller); floor is
 *                      at least every token issued so far, so a grant message with a token at or
 *                      below it is an old one
 * {0, wait_ms, client} not acquired (lock-acquire.lua only): another client's cache holds the lock
 *                      (docs/design/lock-caching.md); client is that client's id, to be told that
 *                      it is asked back
 * {0, wait_ms, client, floor}
 *                      not acquired (lock-acquire-waiting.lua only, which puts the caller in line):
 *                      client as above, or '' if no cache holds the lock; floor as above
 * </pre>
 *
 * @param acquired whether the caller now holds the lock
 * @param token if acquired, the new hold's fencing token; otherwise {@code -1}
 * @param waitMillis if not acquired, the wait the script reported ({@code -1}: the holder has no
 *     lease); {@code 0} if acquired
 * @param grantFloor if not acquired and the script reports one, the grant floor; otherwise {@code -1}
 * @param cacher if not acquired because another client's cache holds the lock, that client's id;
 *     otherwise {@code ""}
 */
public record AcquireReply(boolean acquired, long token, long waitMillis, long grantFloor, String cacher) {

    /** Checks that {@code cacher} is present. */
    public AcquireReply {
        Objects.requireNonNull(cacher, "cacher");
    }

    /**
     * A reply that names no cacher.
     *
     * @param acquired whether the caller now holds the lock
     * @param token if acquired, the new hold's fencing token; otherwise {@code -1}
     * @param waitMillis if not acquired, the wait the script reported; {@code 0} if acquired
     * @param grantFloor if not acquired and the script reports one, the grant floor; otherwise {@code -1}
     */
    public AcquireReply(boolean acquired, long token, long waitMillis, long grantFloor) {
        this(acquired, token, waitMillis, grantFloor, "");
    }

    private static final Set<Script> DECODED = EnumSet.of(Script.LOCK_ACQUIRE, Script.LOCK_ACQUIRE_WAITING,
            Script.FAIR_LOCK_ACQUIRE, Script.RW_READ_ACQUIRE, Script.RW_READ_TRY, Script.RW_WRITE_ACQUIRE,
            Script.RW_WRITE_TRY);

    /**
     * Reads one of the scripts' replies above.
     *
     * @param script the script that answered
     * @param reply its raw reply
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is not one of the scripts above
     * @throws UnexpectedReplyException if the reply has none of the script's declared shapes
     */
    public static AcquireReply of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "AcquireReply");
        boolean floored = script == Script.FAIR_LOCK_ACQUIRE;
        boolean named = script == Script.LOCK_ACQUIRE;
        if (script == Script.LOCK_ACQUIRE_WAITING) {
            return lined(reply);
        }
        String expected = floored ? "{1, token} or {0, wait_ms, floor}"
                : named ? "{1, token}, {0, wait_ms} or {0, wait_ms, client}" : "{1, token} or {0, wait_ms}";
        List<?> list = ReplyShape.list(script, reply, expected, 2, 3);
        long code = ReplyShape.integer(script, list, 0, expected);
        long value = ReplyShape.integer(script, list, 1, expected);
        if (code == 1L && list.size() == 2) {
            return new AcquireReply(true, value, 0, -1);
        }
        if (code == 0L && list.size() == (floored ? 3 : 2)) {
            return new AcquireReply(false, -1, value, floored ? ReplyShape.integer(script, list, 2, expected) : -1);
        }
        if (code == 0L && named && list.size() == 3) {
            String client = ReplyShape.string(script, list, 2, expected);
            if (!client.isEmpty()) {
                return new AcquireReply(false, -1, value, -1, client);
            }
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }

    /** Reads the reply of lock-acquire-waiting.lua. */
    private static AcquireReply lined(List<Object> reply) {
        Script script = Script.LOCK_ACQUIRE_WAITING;
        String expected = "{1, token} or {0, wait_ms, client, floor}";
        List<?> list = ReplyShape.list(script, reply, expected, 2, 4);
        long code = ReplyShape.integer(script, list, 0, expected);
        long value = ReplyShape.integer(script, list, 1, expected);
        if (code == 1L && list.size() == 2) {
            return new AcquireReply(true, value, 0, -1);
        }
        if (code == 0L && list.size() == 4) {
            return new AcquireReply(false, -1, value, ReplyShape.integer(script, list, 3, expected),
                    ReplyShape.string(script, list, 2, expected));
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }
}
