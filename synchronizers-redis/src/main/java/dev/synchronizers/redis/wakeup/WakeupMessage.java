package dev.synchronizers.redis.wakeup;

import java.util.Objects;
import java.util.Optional;

/**
 * One wake-up message, as published on a synchronizer's channel: the only writer and reader of
 * their text in Java. There are three forms:
 * <ul>
 *   <li>{@value #RELEASED}: wakes every waiter of the channel ({@link Form#EVERYONE});
 *   <li>{@code <owner>}: wakes the one waiter with that owner string ({@link Form#NAMED}), e.g. the
 *       next writer of a read-write lock;
 *   <li>{@value #GRANTED_PREFIX}{@code <owner>} or {@value #GRANTED_PREFIX}{@code <owner>=<detail>}:
 *       wakes that one waiter and tells it that what it waited for was handed to it in Redis
 *       ({@link Form#GRANTED}), with what it needs to know of it: the fair lock's new fencing token;
 *       a semaphore grant has no detail.
 * </ul>
 * The Lua scripts publish the same bytes ({@code 'released'}, {@code 'granted:' .. waiter},
 * {@code 'granted:' .. waiter .. '=' .. token}). An owner string contains no {@code '='}, so the
 * detail begins after the first one.
 *
 * <p>A grant handed over inside one client, never published, carries the detail
 * {@link LocalHandover}: {@code <token>@<sent-nanos>}.
 *
 * @param form which of the three forms
 * @param owner the waiter named; {@code ""} for {@link Form#EVERYONE}
 * @param detail what a grant says of itself; {@code ""} if nothing, and for the other forms
 */
public record WakeupMessage(Form form, String owner, String detail) {

    /** The text of the message that wakes every waiter of a channel. */
    public static final String RELEASED = "released";

    /** What the text of a grant begins with, before the owner string of the waiter served. */
    public static final String GRANTED_PREFIX = "granted:";

    private static final char DETAIL_SEPARATOR = '=';

    /** The three forms of a wake-up message. */
    public enum Form {
        /** {@value #RELEASED}: every waiter of the channel. */
        EVERYONE,
        /** An owner string: that waiter only. */
        NAMED,
        /** {@value #GRANTED_PREFIX} and an owner string: that waiter, served. */
        GRANTED
    }

    /**
     * Checks that the parts make a message of {@code form} that {@link #parse(String)} reads back
     * as it is. An empty owner is allowed: such a message, which only another program would
     * publish, names no waiter.
     *
     * @throws NullPointerException if a part is null
     * @throws IllegalArgumentException for an {@link Form#EVERYONE} message with an owner or a
     *     detail, a {@link Form#NAMED} message with a detail or whose owner reads as another form,
     *     or a {@link Form#GRANTED} message whose owner contains {@code '='}
     */
    public WakeupMessage {
        Objects.requireNonNull(form, "form");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(detail, "detail");
        if (form != Form.GRANTED && !detail.isEmpty()) {
            throw new IllegalArgumentException("only a GRANTED message has a detail: \"" + detail + "\"");
        }
        if (form == Form.EVERYONE && !owner.isEmpty()) {
            throw new IllegalArgumentException("an EVERYONE message names no owner: \"" + owner + "\"");
        }
        if (form == Form.NAMED && (owner.equals(RELEASED) || owner.startsWith(GRANTED_PREFIX))) {
            throw new IllegalArgumentException("not an owner string: \"" + owner + "\"");
        }
        if (form == Form.GRANTED && owner.indexOf(DETAIL_SEPARATOR) >= 0) {
            throw new IllegalArgumentException("an owner has no '" + DETAIL_SEPARATOR + "': \"" + owner + "\"");
        }
    }

    /** The message {@value #RELEASED}, which wakes every waiter. */
    public static WakeupMessage released() {
        return new WakeupMessage(Form.EVERYONE, "", "");
    }

    /** The message that wakes the waiter {@code owner} only. */
    public static WakeupMessage named(String owner) {
        return new WakeupMessage(Form.NAMED, owner, "");
    }

    /** The message that tells the waiter {@code owner} it was served, with {@code detail} ("" for none). */
    public static WakeupMessage granted(String owner, String detail) {
        return new WakeupMessage(Form.GRANTED, owner, detail);
    }

    /** The text, as published. {@link #parse(String)} reads it back to an equal message. */
    public String encode() {
        return switch (form) {
            case EVERYONE -> RELEASED;
            case NAMED -> owner;
            case GRANTED -> detail.isEmpty()
                    ? GRANTED_PREFIX + owner
                    : GRANTED_PREFIX + owner + DETAIL_SEPARATOR + detail;
        };
    }

    /**
     * Reads a message's text. Every text is a message, so that whatever is published on a channel
     * is read without failing: {@value #RELEASED}, a text beginning with {@value #GRANTED_PREFIX}
     * (the owner up to the first {@code '='}, the detail after it), or else the owner string of one
     * waiter (which may be no waiter of this client's, or none at all).
     *
     * @throws NullPointerException if {@code text} is null
     */
    public static WakeupMessage parse(String text) {
        Objects.requireNonNull(text, "text");
        if (text.equals(RELEASED)) {
            return released();
        }
        if (!text.startsWith(GRANTED_PREFIX)) {
            return named(text);
        }
        String named = text.substring(GRANTED_PREFIX.length());
        int separator = named.indexOf(DETAIL_SEPARATOR);
        return separator < 0
                ? granted(named, "")
                : granted(named.substring(0, separator), named.substring(separator + 1));
    }

    /**
     * The detail of a grant handed over inside this client (lock-handover.lua), never published:
     * the new hold's fencing token and when the release that handed it over was sent, as
     * {@code <token>@<sent-nanos>}.
     *
     * @param token the new hold's fencing token
     * @param sentNanos {@code System.nanoTime()} when the release was sent
     */
    public record LocalHandover(long token, long sentNanos) {

        private static final char AT = '@';

        /** The detail's text, {@code <token>@<sent-nanos>}. */
        public String encode() {
            return Long.toString(token) + AT + sentNanos;
        }

        /**
         * Reads a grant's detail: the hand-over, or empty if the detail is not one (a published
         * grant's token, or nothing).
         *
         * @throws NumberFormatException if the detail has an {@code '@'} but not two numbers around it
         */
        public static Optional<LocalHandover> parse(String detail) {
            int at = detail.indexOf(AT);
            if (at < 0) {
                return Optional.empty();
            }
            return Optional.of(new LocalHandover(Long.parseLong(detail.substring(0, at)),
                    Long.parseLong(detail.substring(at + 1))));
        }
    }
}
