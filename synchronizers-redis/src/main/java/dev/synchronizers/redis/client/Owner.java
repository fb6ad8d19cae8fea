package dev.synchronizers.redis.client;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Who holds or waits for a synchronizer in Redis: a client, one of its threads, and for some
 * records one acquisition attempt of that thread. This record is the only writer and reader of
 * the owner strings that the scripts store and compare, in one of two forms:
 * <ul>
 *   <li>{@code <client-id>:<thread-id>}: a thread's hold of a lock, read lock or write lock, and a
 *       latch waiter;
 *   <li>{@code <client-id>:<thread-id>:<attempt>}: one attempt of a thread, unique in its client: a
 *       semaphore grant, and a Redlock hold (a grant meant for an earlier attempt is never taken by a
 *       later one).
 * </ul>
 *
 * <p><b>The rule the Lua scripts read:</b> the client is the part of an owner string before its first
 * {@code ':'} ({@link #clientOf(String)}), whichever form it has. A client id therefore never contains
 * {@code ':'} (it is a UUID), and is never empty, since hash fields that begin with {@code ':'} are the
 * scripts' own marks, not owners. Thread ids and attempt numbers are written in canonical decimal,
 * so that a string read back compares equal to the one written.
 *
 * @param clientId the client's id, as {@code RedisSynchronizers.clientId()} and
 *     {@code Redlock.clientId()} return it: not empty, without {@code ':'}
 * @param threadId the thread's id in the client's JVM ({@code Thread.getId()}): {@code >= 0}
 * @param attempt the attempt number, unique in the client, if the string names one: {@code >= 1}
 */
public record Owner(String clientId, long threadId, OptionalLong attempt) {

    /** What separates the parts of an owner string. */
    private static final char SEPARATOR = ':';
    /** What follows the client in a cache's owner string ({@link #cacheOf}). */
    private static final String CACHE = "cache";

    /**
     * Checks the parts.
     *
     * @throws NullPointerException if {@code clientId} or {@code attempt} is null
     * @throws IllegalArgumentException if {@code clientId} is empty or contains {@code ':'},
     *     {@code threadId} is negative, or {@code attempt} is present and below 1
     */
    public Owner {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(attempt, "attempt");
        if (clientId.isEmpty() || clientId.indexOf(SEPARATOR) >= 0) {
            throw new IllegalArgumentException("clientId must be non-empty and without ':': \"" + clientId + "\"");
        }
        if (threadId < 0) {
            throw new IllegalArgumentException("threadId must be >= 0: " + threadId);
        }
        if (attempt.isPresent() && attempt.getAsLong() < 1) {
            throw new IllegalArgumentException("attempt must be >= 1: " + attempt.getAsLong());
        }
    }

    /** The owner {@code <client-id>:<thread-id>}: a thread of a client. */
    public static Owner ofThread(String clientId, long threadId) {
        return new Owner(clientId, threadId, OptionalLong.empty());
    }

    /** The owner {@code <client-id>:<thread-id>:<attempt>}: one acquisition attempt of a thread. */
    public static Owner ofAttempt(String clientId, long threadId, long attempt) {
        return new Owner(clientId, threadId, OptionalLong.of(attempt));
    }

    /**
     * The owner string, as the scripts store it: {@code <client-id>:<thread-id>} or
     * {@code <client-id>:<thread-id>:<attempt>}. {@link #parse(String)} reads it back to an equal
     * owner.
     */
    public String encode() {
        String thread = clientId + SEPARATOR + threadId;
        return attempt.isPresent() ? thread + SEPARATOR + attempt.getAsLong() : thread;
    }

    /**
     * Reads an owner string in either form.
     *
     * @throws NullPointerException if {@code owner} is null
     * @throws IllegalArgumentException if {@code owner} is in neither form, naming it and the forms
     */
    public static Owner parse(String owner) {
        Objects.requireNonNull(owner, "owner");
        return tryParse(owner).orElseThrow(() -> new IllegalArgumentException(
                "not an owner string (<client-id>:<thread-id> or <client-id>:<thread-id>:<attempt>, with a"
                        + " non-empty client id and numbers in plain decimal): \"" + owner + "\""));
    }

    /**
     * Reads an owner string in either form, or tells that it is not one: for strings read from
     * Redis that another program may have written.
     *
     * @return the owner, or empty if {@code owner} is null or in neither form
     */
    public static Optional<Owner> tryParse(String owner) {
        if (owner == null) {
            return Optional.empty();
        }
        int first = owner.indexOf(SEPARATOR);
        if (first <= 0) {
            return Optional.empty();
        }
        int second = owner.indexOf(SEPARATOR, first + 1);
        long threadId = decimal(owner, first + 1, second < 0 ? owner.length() : second);
        long attempt = second < 0 ? 0 : decimal(owner, second + 1, owner.length());
        if (threadId < 0 || attempt < 0 || (second >= 0 && attempt == 0)) {
            return Optional.empty();
        }
        String clientId = owner.substring(0, first);
        return Optional.of(second < 0 ? ofThread(clientId, threadId) : ofAttempt(clientId, threadId, attempt));
    }

    /**
     * The client part of an owner string, by the rule the Lua scripts follow: the part before the
     * first {@code ':'}, or the whole string if it has none. Defined for any string, so that a record
     * another program wrote still has a client; for an owner string it is {@link #clientId()}.
     */
    public static String clientOf(String owner) {
        int first = owner.indexOf(SEPARATOR);
        return first < 0 ? owner : owner.substring(0, first);
    }

    /**
     * The owner string of the client's cache of a lock, {@code <client-id>:cache}
     * (docs/design/lock-caching.md): the client holds the lock in Redis, and any of its threads may
     * take it locally. A third form beside the two above, which {@link #tryParse} does not read as
     * a thread's ({@code cache} is no number); its client is {@link #clientOf} as for every form.
     *
     * @throws IllegalArgumentException if {@code clientId} could not be an owner's
     */
    public static String cacheOf(String clientId) {
        return prefixOf(clientId) + CACHE;
    }

    /** Whether {@code owner} is a cache's owner string ({@link #cacheOf}), of any client. */
    static boolean isCache(String owner) {
        int first = owner.indexOf(SEPARATOR);
        return first > 0 && owner.length() == first + 1 + CACHE.length() && owner.endsWith(SEPARATOR + CACHE);
    }

    /**
     * What every owner string of the client {@code clientId} begins with, in either form: the
     * client id and the separator. A wake-up that names an owner of another client does not begin
     * with it.
     *
     * @throws IllegalArgumentException if {@code clientId} could not be an owner's
     */
    public static String prefixOf(String clientId) {
        return ofThread(clientId, 0).clientId() + SEPARATOR;   // checks the id as an owner's would be
    }

    /**
     * The number written in {@code text[from, to)}, or -1 if that is not a non-negative {@code long}
     * in canonical decimal (digits only, no sign, no leading zero but in "0").
     */
    private static long decimal(String text, int from, int to) {
        if (from >= to || to - from > 19 || (text.charAt(from) == '0' && to - from > 1)) {
            return -1;
        }
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
        }
        try {
            return Long.parseLong(text, from, to, 10);
        } catch (NumberFormatException e) {
            return -1;   // 19 digits beyond Long.MAX_VALUE
        }
    }
}
