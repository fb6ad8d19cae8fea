package dev.synchronizers.redis.script;

import io.lettuce.core.ScriptOutputType;

/**
 * Every Lua script, by file. The registry loads each once and runs it by SHA1 (EVALSHA).
 *
 * <p>{@link #keys} and {@link #args} are the arity the script's header declares. A batched script
 * ({@link #batched()}) works on any number of items: it takes {@link #keysPerItem} keys and
 * {@link #argsPerItem} arguments per item, after its {@link #args} fixed arguments.
 */
public enum Script {
    LOCK_ACQUIRE("lock-acquire.lua", 2, 2, ScriptOutputType.MULTI),
    LOCK_ACQUIRE_WAITING("lock-acquire-waiting.lua", 2, 4, ScriptOutputType.MULTI),
    LOCK_RELEASE("lock-release.lua", 2, 2, ScriptOutputType.MULTI),
    LOCK_HANDOVER("lock-handover.lua", 2, 5, ScriptOutputType.MULTI),
    LOCK_GIVE_BACK("lock-give-back.lua", 2, 1, ScriptOutputType.INTEGER),
    FAIR_LOCK_RELEASE("fair-lock-release.lua", 5, 2, ScriptOutputType.MULTI),
    LOCK_RENEW("lock-renew.lua", 1, 1, 2, ScriptOutputType.MULTI),
    LOCK_FORCE_UNLOCK("lock-force-unlock.lua", 4, 0, ScriptOutputType.INTEGER),
    FAIR_LOCK_ACQUIRE("fair-lock-acquire.lua", 4, 3, ScriptOutputType.MULTI),
    FAIR_LOCK_LEAVE("fair-lock-leave.lua", 5, 1, ScriptOutputType.INTEGER),
    FAIR_LOCK_RENEW_PLACE("fair-lock-renew-place.lua", 2, 1, 1, ScriptOutputType.MULTI),
    RW_READ_ACQUIRE("rw-read-acquire.lua", 7, 2, ScriptOutputType.MULTI),
    RW_READ_TRY("rw-read-try.lua", 4, 2, ScriptOutputType.MULTI),
    RW_READ_RELEASE("rw-read-release.lua", 6, 2, ScriptOutputType.MULTI),
    RW_READ_RENEW("rw-read-renew.lua", 2, 1, 2, ScriptOutputType.MULTI),
    RW_WRITE_ACQUIRE("rw-write-acquire.lua", 6, 3, ScriptOutputType.MULTI),
    RW_WRITE_TRY("rw-write-try.lua", 3, 2, ScriptOutputType.MULTI),
    RW_WRITE_RELEASE("rw-write-release.lua", 5, 2, ScriptOutputType.MULTI),
    RW_WRITE_LEAVE("rw-write-leave.lua", 5, 1, ScriptOutputType.INTEGER),
    RW_FORCE_UNLOCK("rw-force-unlock.lua", 7, 0, ScriptOutputType.INTEGER),
    SEMAPHORE_SET("semaphore-set.lua", 1, 1, ScriptOutputType.INTEGER),
    SEMAPHORE_ADD("semaphore-add.lua", 7, 1, ScriptOutputType.MULTI),
    SEMAPHORE_ACQUIRE("semaphore-acquire.lua", 7, 4, ScriptOutputType.MULTI),
    SEMAPHORE_TRY("semaphore-try.lua", 3, 3, ScriptOutputType.MULTI),
    SEMAPHORE_RELEASE("semaphore-release.lua", 7, 1, ScriptOutputType.MULTI),
    SEMAPHORE_LEAVE("semaphore-leave.lua", 7, 2, ScriptOutputType.INTEGER),
    SEMAPHORE_RENEW_PLACE("semaphore-renew-place.lua", 3, 1, 1, ScriptOutputType.MULTI),
    SEMAPHORE_RENEW("semaphore-renew.lua", 2, 1, 1, ScriptOutputType.MULTI),
    SEMAPHORE_AVAILABLE("semaphore-available.lua", 3, 0, ScriptOutputType.INTEGER),
    LATCH_SET("latch-set.lua", 1, 1, ScriptOutputType.INTEGER),
    LATCH_COUNT_DOWN("latch-count-down.lua", 3, 1, ScriptOutputType.INTEGER),
    LATCH_DELETE("latch-delete.lua", 3, 1, ScriptOutputType.INTEGER),
    LOCK_SNAPSHOT("lock-snapshot.lua", 2, 0, ScriptOutputType.MULTI),
    RW_SNAPSHOT("rw-snapshot.lua", 5, 0, ScriptOutputType.MULTI),
    SEMAPHORE_SNAPSHOT("semaphore-snapshot.lua", 4, 0, ScriptOutputType.MULTI),
    REDLOCK_SETTLE("redlock-settle.lua", 2, 2, ScriptOutputType.INTEGER),
    REDLOCK_RENEW("redlock-renew.lua", 2, 1, 2, ScriptOutputType.MULTI),
    REDLOCK_FORCE_UNLOCK("redlock-force-unlock.lua", 3, 1, ScriptOutputType.INTEGER);

    /** The {@link #keys} of a batched script: it takes any number of items. */
    public static final int BATCHED = -1;

    /** The classpath folder that holds the scripts (the {@code synchronizers-lua} artifact). */
    public static final String RESOURCE_FOLDER = "dev/synchronizers/lua/";

    /** The file name under {@link #RESOURCE_FOLDER}. */
    public final String file;
    /** The number of keys, or {@link #BATCHED}. */
    public final int keys;
    /** For a batched script, the keys of one item; otherwise 0. */
    public final int keysPerItem;
    /** For a batched script, the arguments of one item; otherwise 0. */
    public final int argsPerItem;
    /** The number of arguments; for a batched script, the fixed arguments before the per-key ones. */
    public final int args;
    /** How Lettuce decodes the reply. */
    public final ScriptOutputType output;

    Script(String file, int keys, int args, ScriptOutputType output) {
        this.file = file;
        this.keys = keys;
        this.keysPerItem = 0;
        this.argsPerItem = 0;
        this.args = args;
        this.output = output;
    }

    /** A batched script: {@code keysPerItem} keys and {@code argsPerItem} arguments per item, after {@code fixedArgs}. */
    Script(String file, int keysPerItem, int fixedArgs, int argsPerItem, ScriptOutputType output) {
        this.file = file;
        this.keys = BATCHED;
        this.keysPerItem = keysPerItem;
        this.argsPerItem = argsPerItem;
        this.args = fixedArgs;
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
                ? keyCount >= keysPerItem && keyCount % keysPerItem == 0
                        && argCount == args + keyCount / keysPerItem * argsPerItem
                : keyCount == keys && argCount == args;
        if (!ok) {
            throw new IllegalArgumentException(file + " takes " + describeArity() + ", not "
                    + keyCount + " keys and " + argCount + " args");
        }
    }

    private String describeArity() {
        return batched()
                ? args + " args, then " + keysPerItem + " keys and " + argsPerItem + " args per item"
                : keys + " keys and " + args + " args";
    }
}
