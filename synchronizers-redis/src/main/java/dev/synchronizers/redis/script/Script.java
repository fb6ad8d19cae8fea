package dev.synchronizers.redis.script;

import io.lettuce.core.ScriptOutputType;

/**
 * Every Lua script, by file. The registry loads each once and runs it as its {@link #sending} says:
 * by SHA1 (EVALSHA), or with its text (EVAL).
 *
 * <p>{@link #keys} and {@link #args} are the arity the script's header declares. A batched script
 * ({@link #batched()}) works on any number of items: it takes {@link #keysPerItem} keys and
 * {@link #argsPerItem} arguments per item, after its {@link #args} fixed arguments.
 *
 * <p><b>Overtaken after NOSCRIPT.</b> A call sent by SHA1 that meets NOSCRIPT did not run; it is
 * sent again with its text once that answer arrives, so it runs after every command this client
 * queued behind it on the connection meanwhile. Each script is therefore one of two kinds (the
 * rule is in the semantics document, "Unknown outcomes"):
 * <ul>
 *   <li>{@link Sending#BY_SHA}: <em>safe when overtaken</em>. Its callers send what must come after
 *       it only once its reply (or its failure) is in, and a call whose outcome is settled is never
 *       sent again; where a caller decides without the reply (a Redlock attempt that gives back on a
 *       node still pending), it gives back whatever the late reply says was granted. Each constant
 *       below says why the script is safe.</li>
 *   <li>{@link Sending#WITH_TEXT}: sent with its text every time, so it never meets NOSCRIPT and runs
 *       where it was sent. The watchdog's renewals: a tick is in flight while the holder's own
 *       thread releases or leaves, and a renewal that ran after that would change its outcome (the
 *       Redlock renewal takes a released hold back). One call per node per tick, so the text costs
 *       nothing that matters. And the follow-ups named by owner that the watchdog retries while
 *       the owner's thread may acquire again: rare, and a run after that acquire would end the new
 *       hold. The per-call scripts stay on EVALSHA, which costs Redis about half the CPU of an EVAL
 *       of the same script (measured: docs/semantics.md, "Unknown outcomes").</li>
 * </ul>
 */
public enum Script {
    /** Safe when overtaken: a late grant is released by token (RedisLock) or given back by attempt (QuorumLockBackend). */
    LOCK_ACQUIRE("lock-acquire.lua", 2, 2, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: as {@link #LOCK_ACQUIRE}; a late waiting mark costs one wake-up at most. */
    LOCK_ACQUIRE_WAITING("lock-acquire-waiting.lua", 4, 5, ScriptOutputType.MULTI, Sending.BY_SHA),
    /**
     * Safe when overtaken: names the token of the hold it ends, so it never ends a newer one. Safe to
     * repeat: token-checked, a second run finds that hold gone and changes nothing.
     */
    LOCK_RELEASE("lock-release.lua", 5, 2, ScriptOutputType.MULTI, Sending.BY_SHA, true),
    /**
     * Safe when overtaken: a late cache is given back by its base (lock-release.lua on the cache's
     * owner), and a second take by the same client replaces a cache it does not know of.
     */
    LOCK_CACHE_ACQUIRE("lock-cache-acquire.lua", 2, 3, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: base-checked, and a block reserved late only raises the last token (gaps are allowed). */
    LOCK_CACHE_RESERVE("lock-cache-reserve.lua", 2, 3, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: only publishes; an ask that comes late makes its cacher give back a cache, no more. */
    LOCK_ASK("lock-ask.lua", 1, 1, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /** With its text: as {@link #LOCK_RENEW}, for caches their client may give back meanwhile. */
    LOCK_CACHE_RENEW("lock-cache-renew.lua", 1, 1, 2, ScriptOutputType.MULTI, Sending.WITH_TEXT),
    /** Safe when overtaken: names the token of the hold it passes on; its doubt is settled only after it failed. */
    LOCK_HANDOVER("lock-handover.lua", 4, 5, ScriptOutputType.MULTI, Sending.BY_SHA),
    /**
     * With its text: named by owner, not token, and retried by the watchdog only while that owner's
     * thread neither holds nor acquires; run after the thread's next acquire, it would end that hold.
     * Safe to repeat within that rule: a second run finds the owner holding nothing and changes nothing.
     */
    LOCK_GIVE_BACK("lock-give-back.lua", 5, 1, ScriptOutputType.INTEGER, Sending.WITH_TEXT, true),
    /** Safe when overtaken: names the token of the hold it ends. Safe to repeat: as {@link #LOCK_RELEASE}. */
    FAIR_LOCK_RELEASE("fair-lock-release.lua", 5, 2, ScriptOutputType.MULTI, Sending.BY_SHA, true),
    /** With its text: a tick's renewal must not run after the holder's later release, extend or re-lease. */
    LOCK_RENEW("lock-renew.lua", 1, 1, 2, ScriptOutputType.MULTI, Sending.WITH_TEXT),
    /** Safe when overtaken: administrative, ends whatever is held when it runs. */
    LOCK_FORCE_UNLOCK("lock-force-unlock.lua", 4, 0, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: its leave is sent only after it failed or answered; a late grant is released by token. */
    FAIR_LOCK_ACQUIRE("fair-lock-acquire.lua", 4, 3, ScriptOutputType.MULTI, Sending.BY_SHA),
    /**
     * With its text: as {@link #LOCK_GIVE_BACK}; a leave gives back a lock handed to the owner. Safe
     * to repeat within that rule: a second run finds no place and no lock of the owner.
     */
    FAIR_LOCK_LEAVE("fair-lock-leave.lua", 5, 1, ScriptOutputType.INTEGER, Sending.WITH_TEXT, true),
    /** With its text: as {@link #LOCK_RENEW}, for the places of waiters that may leave meanwhile. */
    FAIR_LOCK_RENEW_PLACE("fair-lock-renew-place.lua", 2, 1, 1, ScriptOutputType.MULTI, Sending.WITH_TEXT),
    /** Safe when overtaken: as {@link #FAIR_LOCK_ACQUIRE}. */
    RW_READ_ACQUIRE("rw-read-acquire.lua", 7, 2, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: as {@link #LOCK_ACQUIRE}. */
    RW_READ_TRY("rw-read-try.lua", 4, 2, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: names the token of the read hold it ends. Safe to repeat: as {@link #LOCK_RELEASE}. */
    RW_READ_RELEASE("rw-read-release.lua", 6, 2, ScriptOutputType.MULTI, Sending.BY_SHA, true),
    /** With its text: as {@link #LOCK_RENEW}. */
    RW_READ_RENEW("rw-read-renew.lua", 2, 1, 2, ScriptOutputType.MULTI, Sending.WITH_TEXT),
    /** Safe when overtaken: as {@link #FAIR_LOCK_ACQUIRE}. */
    RW_WRITE_ACQUIRE("rw-write-acquire.lua", 6, 3, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: as {@link #LOCK_ACQUIRE}. */
    RW_WRITE_TRY("rw-write-try.lua", 3, 2, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: names the token of the write hold it ends. Safe to repeat: as {@link #LOCK_RELEASE}. */
    RW_WRITE_RELEASE("rw-write-release.lua", 5, 2, ScriptOutputType.MULTI, Sending.BY_SHA, true),
    /** With its text: as {@link #FAIR_LOCK_LEAVE}. Safe to repeat: as {@link #FAIR_LOCK_LEAVE}. */
    RW_WRITE_LEAVE("rw-write-leave.lua", 5, 1, ScriptOutputType.INTEGER, Sending.WITH_TEXT, true),
    /** Safe when overtaken: as {@link #LOCK_FORCE_UNLOCK}. */
    RW_FORCE_UNLOCK("rw-force-unlock.lua", 7, 0, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /** Safe when overtaken: as {@link #SEMAPHORE_ADD}; it sets the total once. */
    SEMAPHORE_SET("semaphore-set.lua", 3, 1, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /** Safe when overtaken: its caller waits for its reply, or its failure, before it sends anything else. */
    SEMAPHORE_ADD("semaphore-add.lua", 7, 1, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: once its acquisition is given up, a late run changes nothing (semaphore-leave.lua's mark). */
    SEMAPHORE_ACQUIRE("semaphore-acquire.lua", 7, 5, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: as {@link #SEMAPHORE_ACQUIRE}. */
    SEMAPHORE_TRY("semaphore-try.lua", 3, 3, ScriptOutputType.MULTI, Sending.BY_SHA),
    /**
     * Safe when overtaken: sets what each named grant keeps, so it releases those grants once,
     * whenever it runs. Safe to repeat for the same reason.
     */
    SEMAPHORE_RELEASE("semaphore-release.lua", 7, 1, ScriptOutputType.MULTI, Sending.BY_SHA, true),
    /**
     * Safe when overtaken: idempotent, and safe before its acquisition's own call (its mark). Safe to
     * repeat: idempotent.
     */
    SEMAPHORE_LEAVE("semaphore-leave.lua", 7, 2, ScriptOutputType.INTEGER, Sending.BY_SHA, true),
    /** With its text: as {@link #FAIR_LOCK_RENEW_PLACE}. */
    SEMAPHORE_RENEW_PLACE("semaphore-renew-place.lua", 3, 1, 1, ScriptOutputType.MULTI, Sending.WITH_TEXT),
    /** With its text: as {@link #LOCK_RENEW}, for grants their holders may release meanwhile. */
    SEMAPHORE_RENEW("semaphore-renew.lua", 2, 1, 1, ScriptOutputType.MULTI, Sending.WITH_TEXT),
    /** Safe when overtaken: only returns expired grants to the pool and reads. */
    SEMAPHORE_AVAILABLE("semaphore-available.lua", 3, 0, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /** Safe when overtaken: as {@link #SEMAPHORE_ADD}. */
    LATCH_SET("latch-set.lua", 1, 1, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /** Safe when overtaken: as {@link #SEMAPHORE_ADD}; count-downs of other threads commute with it. */
    LATCH_COUNT_DOWN("latch-count-down.lua", 3, 1, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /** Safe when overtaken: as {@link #SEMAPHORE_ADD}. */
    LATCH_DELETE("latch-delete.lua", 3, 1, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /**
     * Safe when overtaken: hold-checked, and its caller releases the lock only after its reply; run
     * after that release it finds no hold and changes nothing. One whose reply is lost is withdrawn
     * by {@link #COND_LEAVE}, sent after it on the same connection.
     */
    COND_AWAIT("cond-await.lua", 5, 4, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /**
     * Safe when overtaken: hold-checked, so it signals only while its caller holds the lock, and
     * named by a signal id that it remembers for a lease, so a repeat (its reply lost) signals
     * nobody again.
     */
    COND_SIGNAL("cond-signal.lua", 6, 5, ScriptOutputType.MULTI, Sending.BY_SHA),
    /**
     * Safe when overtaken: named by a waiter unique to one wait, so a late run touches nothing of
     * another wait. Safe to repeat: a second run finds the waiter nowhere and changes nothing.
     */
    COND_LEAVE("cond-leave.lua", 4, 3, ScriptOutputType.INTEGER, Sending.BY_SHA, true),
    /** With its text: as {@link #FAIR_LOCK_RENEW_PLACE}, for waiters that may leave meanwhile. */
    COND_RENEW_PLACE("cond-renew-place.lua", 4, 1, 1, ScriptOutputType.MULTI, Sending.WITH_TEXT),
    /** Safe when overtaken: changes nothing. */
    LOCK_SNAPSHOT("lock-snapshot.lua", 2, 0, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: changes nothing. */
    RW_SNAPSHOT("rw-snapshot.lua", 5, 0, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: changes nothing. */
    SEMAPHORE_SNAPSHOT("semaphore-snapshot.lua", 4, 0, ScriptOutputType.MULTI, Sending.BY_SHA),
    /** Safe when overtaken: changes only a hold its owner still has there; a give-back before it leaves it nothing to change. */
    REDLOCK_SETTLE("redlock-settle.lua", 2, 2, ScriptOutputType.INTEGER, Sending.BY_SHA),
    /** With its text: run after unlock()'s release it would take the released hold back (reply 2) for a lease. */
    REDLOCK_RENEW("redlock-renew.lua", 2, 1, 2, ScriptOutputType.MULTI, Sending.WITH_TEXT),
    /** Safe when overtaken: as {@link #LOCK_FORCE_UNLOCK}. */
    REDLOCK_FORCE_UNLOCK("redlock-force-unlock.lua", 3, 1, ScriptOutputType.INTEGER, Sending.BY_SHA);

    /**
     * How the registry sends a script: what decides it is whether a run that comes after commands
     * this client sent later could change their outcome (see the class comment).
     */
    public enum Sending {
        /** EVALSHA; on NOSCRIPT, EVAL with the text once that answer is in. The script is safe when overtaken. */
        BY_SHA,
        /** EVAL with the text every time: never NOSCRIPT, so it runs in the order it was sent. */
        WITH_TEXT
    }

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
    /** By SHA1 (safe when overtaken after NOSCRIPT) or always with its text (kept in order). */
    public final Sending sending;
    /**
     * Whether the script may settle another call's unknown outcome as a follow-up that is sent again
     * until Redis answers (Hazelcast's {@code isRetryableOnIndeterminateOperationState}): run twice,
     * it ends in the state one run would, so a send whose reply was lost may be repeated. The
     * watchdog's follow-ups refuse any other script. Each constant above says why it is safe.
     */
    public final boolean safeToRepeat;

    Script(String file, int keys, int args, ScriptOutputType output, Sending sending) {
        this(file, keys, args, output, sending, false);
    }

    /** A script that is {@link #safeToRepeat} if {@code safeToRepeat} says so. */
    Script(String file, int keys, int args, ScriptOutputType output, Sending sending, boolean safeToRepeat) {
        this.file = file;
        this.sending = sending;
        this.keys = keys;
        this.keysPerItem = 0;
        this.argsPerItem = 0;
        this.args = args;
        this.output = output;
        this.safeToRepeat = safeToRepeat;
    }

    /** A batched script: {@code keysPerItem} keys and {@code argsPerItem} arguments per item, after {@code fixedArgs}. */
    Script(String file, int keysPerItem, int fixedArgs, int argsPerItem, ScriptOutputType output, Sending sending) {
        this.file = file;
        this.sending = sending;
        this.keys = BATCHED;
        this.keysPerItem = keysPerItem;
        this.argsPerItem = argsPerItem;
        this.args = fixedArgs;
        this.output = output;
        this.safeToRepeat = false;
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
