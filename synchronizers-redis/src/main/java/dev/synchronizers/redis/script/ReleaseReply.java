package dev.synchronizers.redis.script;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of a token-checked lock release: whether the hold was still there to end, and whom
 * the release woke or handed the lock to.
 *
 * <p>Decodes the replies of {@code lock-release.lua}, {@code fair-lock-release.lua},
 * {@code rw-read-release.lua} and {@code rw-write-release.lua}, whose headers declare:
 * <pre>
 * {1, ''}           released; no one named to wake (every script)
 * {1, woken}        released; woken is the writer woken by name, or 'released' if the readers were
 *                   (rw-read-release.lua: a writer only; rw-write-release.lua)
 * {1, next, token}  released and handed to the waiter next in line, whose hold has that fencing
 *                   token (lock-release.lua, fair-lock-release.lua)
 * {0, ''}           the owner does not hold this hold: its lease ran out, it was forced, or it never
 *                   held it (every script)
 * </pre>
 *
 * @param released whether the owner's hold was there and is now ended
 * @param woken whom the release woke or handed the lock to, as the script named it; {@code ""} if
 *     no one by name
 * @param grantedToken if the lock was handed to {@code woken}, that hold's fencing token; otherwise
 *     {@code -1}
 */
public record ReleaseReply(boolean released, String woken, long grantedToken) {

    private static final Set<Script> DECODED = EnumSet.of(Script.LOCK_RELEASE, Script.FAIR_LOCK_RELEASE,
            Script.RW_READ_RELEASE, Script.RW_WRITE_RELEASE);

    /** Whether the lock was handed to {@link #woken}, with {@link #grantedToken}, rather than woken. */
    public boolean handedOver() {
        return grantedToken >= 0;
    }

    /**
     * Reads one of the scripts' replies above.
     *
     * @param script the script that answered
     * @param reply its raw reply
     * @return the decoded reply
     * @throws IllegalArgumentException if {@code script} is not one of the scripts above
     * @throws UnexpectedReplyException if the reply has none of the script's declared shapes
     */
    public static ReleaseReply of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "ReleaseReply");
        boolean fair = script == Script.FAIR_LOCK_RELEASE || script == Script.LOCK_RELEASE;
        boolean named = script == Script.RW_READ_RELEASE || script == Script.RW_WRITE_RELEASE;
        String expected = fair ? "{1, ''}, {1, next, token} or {0, ''}"
                : named ? "{1, woken} or {0, ''}" : "{1, ''} or {0, ''}";
        List<?> list = ReplyShape.list(script, reply, expected, fair ? new int[] {2, 3} : new int[] {2});
        long code = ReplyShape.integer(script, list, 0, expected);
        String woken = ReplyShape.string(script, list, 1, expected);
        if (code == 0L && woken.isEmpty() && list.size() == 2) {
            return new ReleaseReply(false, "", -1);
        }
        if (code == 1L && list.size() == 2 && (named || woken.isEmpty())) {
            return new ReleaseReply(true, woken, -1);
        }
        if (code == 1L && list.size() == 3 && !woken.isEmpty()) {
            long token = ReplyShape.integer(script, list, 2, expected);
            if (token >= 0) {
                return new ReleaseReply(true, woken, token);
            }
        }
        throw new UnexpectedReplyException(script, reply, expected);
    }
}
