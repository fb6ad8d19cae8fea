/**
 * The synchronizers API: {@code java.util.concurrent}-style lock, read-write lock, semaphore and
 * latch interfaces whose state lives outside the JVM, with their exceptions and listener types.
 *
 * <p>Exports {@link dev.synchronizers} only and requires nothing but {@code java.base}. An
 * implementation such as {@code synchronizers-redis} (automatic module {@code dev.synchronizers.redis})
 * provides the {@link dev.synchronizers.Synchronizers} that callers use; callers never name its
 * classes.
 */
module dev.synchronizers {
    exports dev.synchronizers;
}
