package dev.synchronizers.redis.watchdog;

import dev.synchronizers.LostHold;
import dev.synchronizers.redis.script.Script;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * What the watchdog keeps for one hold ({@link Watchdog#register}): how to renew its lease, since
 * when it runs, whose it is, and whom to tell if it is lost. A renewable lease ({@code
 * fixedLeaseMillis == 0}) is renewed every tick; a fixed lease is only tracked, so that its end and
 * its owning thread's end are noticed.
 *
 * <p>The arrays are copied when the renewal is made; the accessors return those copies, which must
 * not be changed.
 *
 * @param script the batched script that renews this kind of hold
 * @param keys the keys of one item of that script, which hold the lease
 * @param itemArgs the arguments of one item of that script, e.g. owner and token
 * @param fixedLeaseMillis the fixed lease, or {@code 0} for a hold the watchdog renews
 * @param startNanos {@link System#nanoTime()} just before the acquiring command was sent (or when
 *     the lease last began there): the lease started in Redis after it, so local expiry counted
 *     from it is never late
 * @param owner the thread that holds it, whose end ends the lease as {@link LostHold.Cause#ABANDONED};
 *     null for a hold of the client (semaphore permits), renewed whichever threads come and go
 * @param onLost told once, on the watchdog thread, if the lease ends other than by
 *     {@link Watchdog#unregister}
 * @param takeBack for a renew script that may take the hold back where it was gone (reply 2, as
 *     {@code redlock-renew.lua} does): asked, on the watchdog thread, whether such a renewal counts,
 *     the lease being otherwise lost as {@link LostHold.Cause#GONE}; null to count every one. A hold
 *     that lives on several servers must not be taken back on one of them once it may have been
 *     free long enough for someone else to hold it: only the owner knows whether it was.
 * @param notice for a renew script whose reply 2 renews the item and has news for its owner (another
 *     client asks a lock cache back, {@code lock-cache-renew.lua}; a condition waiter is signalled,
 *     {@code cond-renew-place.lua}): told, on the watchdog thread, each time a renewal says so (the
 *     renewal counts); null for every other script
 */
public record Renewal(Script script, String[] keys, String[] itemArgs, long fixedLeaseMillis, long startNanos,
        Thread owner, Consumer<LostHold.Cause> onLost, BooleanSupplier takeBack, Runnable notice) {

    /**
     * Checks the item against the script and copies its arrays.
     *
     * @throws IllegalArgumentException if the keys or arguments do not fit one item of the script
     */
    public Renewal {
        Objects.requireNonNull(onLost, "onLost");
        if (keys.length != script.keysPerItem || itemArgs.length != script.argsPerItem) {
            throw new IllegalArgumentException(script.file + " renews items of " + script.keysPerItem
                    + " keys and " + script.argsPerItem + " args, not " + keys.length + " and " + itemArgs.length);
        }
        keys = keys.clone();
        itemArgs = itemArgs.clone();
    }

    /**
     * A hold of {@code owner}, whose renewals all count.
     *
     * @param script the batched script that renews this kind of hold
     * @param keys the keys of one item of that script
     * @param itemArgs the arguments of one item of that script
     * @param fixedLeaseMillis the fixed lease, or {@code 0} for a hold the watchdog renews
     * @param sentNanos {@link System#nanoTime()} just before the acquiring command was sent
     * @param owner the thread that holds it
     * @param onLost told once, on the watchdog thread, if the lease ends other than by
     *     {@link Watchdog#unregister}
     * @return the renewal
     * @throws IllegalArgumentException if the keys or arguments do not fit one item of the script
     */
    public static Renewal ofThread(Script script, String[] keys, String[] itemArgs, long fixedLeaseMillis,
            long sentNanos, Thread owner, Consumer<LostHold.Cause> onLost) {
        return new Renewal(script, keys, itemArgs, fixedLeaseMillis, sentNanos, Objects.requireNonNull(owner, "owner"),
                onLost, null, null);
    }

    /**
     * A renewable hold of the client rather than of a thread (semaphore permits): renewed every
     * tick until unregistered or lost, whichever threads come and go.
     *
     * @param script the batched script that renews this kind of hold
     * @param keys the keys of one item of that script
     * @param itemArgs the arguments of one item of that script
     * @param sentNanos {@link System#nanoTime()} just before the acquiring command was sent
     * @param onLost told once, on the watchdog thread, if the lease is lost
     * @return the renewal
     * @throws IllegalArgumentException if the keys or arguments do not fit one item of the script
     */
    public static Renewal ofClient(Script script, String[] keys, String[] itemArgs, long sentNanos,
            Consumer<LostHold.Cause> onLost) {
        return new Renewal(script, keys, itemArgs, 0, sentNanos, null, onLost, null, null);
    }

    /**
     * A condition waiter's place, owned by the waiting thread: renewed every tick while the waiter
     * waits, and, once it is signalled, its signal until it takes it up or leaves (both end with
     * {@link Watchdog#unregister}); {@code signalled} is told whenever a renewal finds the waiter
     * signalled, the backstop of a wake-up message that was lost.
     *
     * @param script the batched script that renews places ({@code cond-renew-place.lua})
     * @param keys the keys of one item of that script
     * @param itemArgs the arguments of one item of that script: the waiter
     * @param sentNanos {@link System#nanoTime()} just before the registering command was sent
     * @param owner the waiting thread
     * @param onLost told once, on the watchdog thread, if the place ends other than by
     *     {@link Watchdog#unregister}
     * @param signalled told, on the watchdog thread, for each renewal that finds the waiter signalled
     * @return the renewal
     * @throws IllegalArgumentException if the keys or arguments do not fit one item of the script
     */
    public static Renewal ofWaiter(Script script, String[] keys, String[] itemArgs, long sentNanos, Thread owner,
            Consumer<LostHold.Cause> onLost, Runnable signalled) {
        return new Renewal(script, keys, itemArgs, 0, sentNanos, Objects.requireNonNull(owner, "owner"), onLost, null,
                Objects.requireNonNull(signalled, "signalled"));
    }

    /**
     * A client's cache of a lock (docs/design/lock-caching.md): renewed every tick until
     * unregistered or lost, whichever threads come and go; {@code askedBack} is told whenever a
     * renewal says that another client asks for the lock.
     *
     * @param script the batched script that renews caches ({@code lock-cache-renew.lua})
     * @param keys the keys of one item of that script
     * @param itemArgs the arguments of one item of that script: the cache's owner and base token
     * @param sentNanos {@link System#nanoTime()} just before the taking command was sent
     * @param onLost told once, on the watchdog thread, if the cache is lost
     * @param askedBack told, on the watchdog thread, for each renewal that says the cache is asked back
     * @return the renewal
     * @throws IllegalArgumentException if the keys or arguments do not fit one item of the script
     */
    public static Renewal ofCache(Script script, String[] keys, String[] itemArgs, long sentNanos,
            Consumer<LostHold.Cause> onLost, Runnable askedBack) {
        return new Renewal(script, keys, itemArgs, 0, sentNanos, null, onLost, null,
                Objects.requireNonNull(askedBack, "askedBack"));
    }

    /**
     * Tells whether this is a fixed lease, which the watchdog tracks without renewing it.
     *
     * @return true if {@link #fixedLeaseMillis} is positive
     */
    public boolean fixed() {
        return fixedLeaseMillis > 0;
    }
}
