package dev.synchronizers.testkit;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Finds where one RESP2 or RESP3 frame ends in a buffer, without decoding it: enough for
 * {@link FaultProxy} to tell commands and replies apart. Also reads inline commands ({@code
 * PING\r\n}), which only clients send. Streamed RESP3 aggregates ({@code *?}, {@code $?}) are not
 * understood; Redis never sends them.
 */
final class RespFrames {

    /** The type byte of a RESP3 push, which answers no command. */
    static final byte PUSH = '>';
    /** The type byte of a RESP3 map, the reply of {@code HELLO 3}. */
    static final byte MAP = '%';

    private RespFrames() {
    }

    /**
     * Returns the index just after the frame that starts at {@code start}, or -1 if the buffer
     * (up to its writer index) does not hold all of it yet. An attribute ({@code |}) counts as
     * part of the frame it annotates.
     */
    static int end(ByteBuf buf, int start) {
        int limit = buf.writerIndex();
        if (start >= limit) {
            return -1;
        }
        byte type = buf.getByte(start);
        int lf = buf.indexOf(start, limit, (byte) '\n');
        if (lf < 0) {
            return -1;
        }
        int next = lf + 1;
        switch (type) {
            case '$': case '!': case '=': {
                long length = number(buf, start + 1, lf);
                if (length < 0) {
                    return next;   // a null bulk string
                }
                long end = next + length + 2;
                return end <= limit ? (int) end : -1;
            }
            case '*': case '~': case '>': case '%': case '|': {
                long count = number(buf, start + 1, lf);
                if (type == '%' || type == '|') {
                    count *= 2;
                }
                int at = next;
                for (long i = 0; i < count && at >= 0; i++) {
                    at = end(buf, at);
                }
                return type == '|' && at >= 0 ? end(buf, at) : at;
            }
            default:
                // Simple types (+ - : _ , # ( and their kin) and inline commands: one line.
                return next;
        }
    }

    /**
     * Returns the upper-case name of the command in the client frame {@code [start, end)}, or
     * null if the frame holds no command (an empty inline line or an empty array, which Redis
     * ignores without a reply).
     */
    static String commandName(ByteBuf buf, int start, int end) {
        int lf = buf.indexOf(start, end, (byte) '\n');
        if (buf.getByte(start) != '*') {
            String line = buf.toString(start, lf - start, StandardCharsets.UTF_8).trim();
            return line.isEmpty() ? null : line.split("\\s+", 2)[0].toUpperCase(Locale.ROOT);
        }
        if (number(buf, start + 1, lf) < 1) {
            return null;
        }
        int first = lf + 1;
        int firstLf = buf.indexOf(first, end, (byte) '\n');
        if (buf.getByte(first) != '$') {
            return buf.toString(first + 1, firstLf - 1 - (first + 1), StandardCharsets.UTF_8).toUpperCase(Locale.ROOT);
        }
        int length = (int) number(buf, first + 1, firstLf);
        return buf.toString(firstLf + 1, Math.max(0, length), StandardCharsets.UTF_8).toUpperCase(Locale.ROOT);
    }

    /** Parses the decimal number in {@code [from, lf)}, ignoring the {@code \r} before {@code lf}. */
    private static long number(ByteBuf buf, int from, int lf) {
        int to = lf > from && buf.getByte(lf - 1) == '\r' ? lf - 1 : lf;
        boolean negative = to > from && buf.getByte(from) == '-';
        long value = 0;
        for (int i = negative ? from + 1 : from; i < to; i++) {
            byte digit = buf.getByte(i);
            if (digit < '0' || digit > '9') {
                throw new IllegalArgumentException("not a RESP length: '" + buf.toString(from, to - from,
                        StandardCharsets.US_ASCII) + "'");
            }
            value = value * 10 + (digit - '0');
        }
        return negative ? -value : value;
    }
}
