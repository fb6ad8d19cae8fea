package dev.synchronizers.redis.script;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The reply of {@code rw-snapshot.lua}: a read-write lock's writer, readers and waiters at one
 * moment. Its header declares:
 * <pre>
 * {write_pttl, waiting_writers, readers_waiting, {writer, token, ...}, {reader, token, remaining_ms, ...}}
 *   write_pttl       the write hold's remaining lease in ms (-2: no writer, -1: no lease)
 *   waiting_writers  writers whose place in the queue is live
 *   readers_waiting  1 if a reader is marked as waiting, else 0
 *   readers          only those whose read lease is live
 * </pre>
 * The fourth element is the whole write hash: fields that begin with {@code :} are the hash's own
 * marks, not writers, and are left out of {@link #writers}. A reader whose token is missing has
 * token {@code -1}. Owner strings are kept as the script sent them.
 *
 * @param writePttl the write hold's remaining lease in ms; {@code -2} if there is no writer, {@code -1} if it has no lease
 * @param waitingWriters the writers whose place in the queue is live
 * @param readersWaiting whether a reader is marked as waiting
 * @param writers the owners in the write hash (at most one in a consistent lock), in the script's order
 * @param readers the readers whose read lease is live, in the script's order
 */
public record ReadWriteLockPicture(long writePttl, long waitingWriters, boolean readersWaiting, List<Writer> writers,
        List<Reader> readers) {

    /**
     * An owner in the write hash.
     *
     * @param owner the owner string
     * @param token the write hold's fencing token
     */
    public record Writer(String owner, long token) {
    }

    /**
     * A reader whose read lease is live.
     *
     * @param owner the owner string
     * @param token the read hold's fencing token, or {@code -1} if none is recorded
     * @param remainingMillis what is left of its read lease, in ms
     */
    public record Reader(String owner, long token, long remainingMillis) {
    }

    private static final Set<Script> DECODED = EnumSet.of(Script.RW_SNAPSHOT);

    private static final String EXPECTED =
            "{write_pttl, waiting_writers, readers_waiting, {writer, token, ...}, {reader, token, remaining_ms, ...}}";

    /** Copies the lists, so that the picture cannot change. */
    public ReadWriteLockPicture {
        writers = List.copyOf(writers);
        readers = List.copyOf(readers);
    }

    /**
     * Reads a reply of {@code rw-snapshot.lua}.
     *
     * @param script the script that answered: {@link Script#RW_SNAPSHOT}
     * @param reply its raw reply
     * @return the decoded picture
     * @throws IllegalArgumentException if {@code script} is another script
     * @throws UnexpectedReplyException if the reply does not have the declared shape
     */
    public static ReadWriteLockPicture of(Script script, List<Object> reply) {
        ReplyShape.requireOneOf(DECODED, script, "ReadWriteLockPicture");
        List<?> list = ReplyShape.list(script, reply, EXPECTED, 5);
        long writePttl = ReplyShape.integer(script, list, 0, EXPECTED);
        long waitingWriters = ReplyShape.integer(script, list, 1, EXPECTED);
        long readersWaiting = ReplyShape.integer(script, list, 2, EXPECTED);
        if (readersWaiting != 0L && readersWaiting != 1L) {
            throw new UnexpectedReplyException(script, reply, EXPECTED);
        }
        List<?> writeFields = ReplyShape.groups(script, list, 3, 2, EXPECTED);
        List<Writer> writers = new ArrayList<>();
        for (int i = 0; i < writeFields.size(); i += 2) {
            String field = ReplyShape.text(script, list, writeFields, i, EXPECTED);
            if (!field.startsWith(":")) {
                writers.add(new Writer(field, ReplyShape.number(script, list, writeFields, i + 1, EXPECTED)));
            }
        }
        List<?> readFields = ReplyShape.groups(script, list, 4, 3, EXPECTED);
        List<Reader> readers = new ArrayList<>();
        for (int i = 0; i < readFields.size(); i += 3) {
            if (!(readFields.get(i + 2) instanceof Long remaining)) {
                throw new UnexpectedReplyException(script, reply, EXPECTED);
            }
            readers.add(new Reader(ReplyShape.text(script, list, readFields, i, EXPECTED),
                    ReplyShape.number(script, list, readFields, i + 1, EXPECTED), remaining));
        }
        return new ReadWriteLockPicture(writePttl, waitingWriters, readersWaiting == 1L, writers, readers);
    }
}
