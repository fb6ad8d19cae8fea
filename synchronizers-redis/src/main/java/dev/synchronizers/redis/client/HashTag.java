package dev.synchronizers.redis.client;

/**
 * The one place that puts a synchronizer's name into its keys' Redis Cluster hash tag.
 *
 * <p>Redis Cluster hashes only the text between the first <code>{</code> of a key and the first
 * <code>}</code> after it, and the whole key when that text is empty. A name containing
 * <code>}</code> would cut the tag short (a name starting with it would leave it empty), and the
 * keys of one synchronizer would scatter over slots. So inside the tag {@code %} is written
 * {@code %25} and <code>}</code> is written {@code %7D}: the tag never contains <code>}</code>,
 * is never empty for a non-empty name, and two different names always give different tags,
 * because the escaping can be undone.
 */
public final class HashTag {

    private HashTag() {
    }

    /**
     * Returns the base of every key of one synchronizer: {@code <prefix>:<kind>:{<escaped name>}}.
     *
     * @param prefix the client's key prefix, free of braces (checked by the builder)
     * @param kind the kind of synchronizer, e.g. {@code "lock"}
     * @param name the synchronizer's name, non-empty (checked by the factory)
     * @return the key base; every key and channel of the synchronizer starts with it
     */
    public static String base(String prefix, String kind, String name) {
        StringBuilder base = new StringBuilder(prefix.length() + kind.length() + name.length() + 8);
        base.append(prefix).append(':').append(kind).append(":{");
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '%') {
                base.append("%25");
            } else if (c == '}') {
                base.append("%7D");
            } else {
                base.append(c);
            }
        }
        return base.append('}').toString();
    }
}
