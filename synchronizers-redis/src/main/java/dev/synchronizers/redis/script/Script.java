package dev.synchronizers.redis.script;

import io.lettuce.core.ScriptOutputType;

/**
 * Every Lua script, by file. The registry loads each once and runs it by SHA1 (EVALSHA).
 *
 * <p>{@link #keys} and {@link #args} are the arity the script's header declares. A batched script
 * ({@link #batched()}) takes one key per item and, besides its {@link #args} fixed arguments, one
 * argument per key.
 */
public enum Script {
    LOCK_ACQUIRE("lock-acquire.lua", 2, 2, ScriptOutputType.MULTI),
    LOCK_ACQUIRE_WAITING("lock-acquire-waiting.lua", 2, 2, ScriptOutputType.MULTI),
    LOCK_RELEASE("lock-release.lua", 2, 2, ScriptOutputType.INTEGER),
    LOCK_RENEW("lock-renew.lua", Script.BATCHED, 1, ScriptOutputType.MULTI),
    LOCK_FORCE_UNLOCK("lock-force-unlock.lua", 2, 0, ScriptOutputType.INTEGER);

    /** Marks a script that takes any number of keys, one argument per key after the fixed ones. */
    public static final int BATCHED = -1;

    /** The classpath folder that holds the scripts (the {@code synchronizers-lua} artifact). */
    public static final String RESOURCE_FOLDER = "dev/synchronizers/lua/";

    /** The file name under {@link #RESOURCE_FOLDER}. */
    public final String file;
    /** The number of keys, or {@link #BATCHED}. */
    public final int keys;
    /** The number of arguments; for a batched script, the fixed arguments before the per-key ones. */
    public final int args;
    /** How Lettuce decodes the reply. */
    public final ScriptOutputType output;

    Script(String file, int keys, int args, ScriptOutputType output) {
        this.file = file;
        this.keys = keys;
        this.args = args;
        this.output = output;
    }

    /**
     * Tells whether this script takes a variable number of keys.
     *
     * @return true for a batched script
     */
    public boolean batched() {
        return keys == BATCHED;
    }

    /**
     * Checks that a call passes the arity this script declares.
     *
     * @param keyCount the number of keys passed
     * @param argCount the number of arguments passed
     * @throws IllegalArgumentException if they do not match the script's header
     */
    void checkArity(int keyCount, int argCount) {
        boolean ok = batched()
                ? keyCount >= 1 && argCount == args + keyCount
                : keyCount == keys && argCount == args;
        if (!ok) {
            throw new IllegalArgumentException(file + " takes " + describeArity() + ", not "
                    + keyCount + " keys and " + argCount + " args");
        }
    }

    private String describeArity() {
        return batched()
                ? "n >= 1 keys and " + args + " + n args"
                : keys + " keys and " + args + " args";
    }
}
