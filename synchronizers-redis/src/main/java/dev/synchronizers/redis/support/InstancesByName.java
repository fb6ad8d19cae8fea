package dev.synchronizers.redis.support;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import java.util.Objects;
import java.util.function.Function;

/**
 * One synchronizer object per name while anyone uses it, as the entry point hands them out: the
 * name is checked, then that the client is open, then the object for the name is returned, made
 * if none is in use. Weak values: holds keep theirs reachable. Thread-safe.
 *
 * @param <T> the synchronizer's class
 */
public final class InstancesByName<T> {

    private final LoadingCache<String, T> instances;
    private final Runnable checkOpen;

    /**
     * @param make makes the object for a name
     * @param checkOpen throws {@link IllegalStateException} if the client is closed
     */
    public InstancesByName(Function<String, T> make, Runnable checkOpen) {
        this.instances = Caffeine.newBuilder().weakValues().build(make::apply);
        this.checkOpen = checkOpen;
    }

    /**
     * Returns the object for {@code name}.
     *
     * @param name the synchronizer's name, non-empty
     * @return the object in use for that name, or a new one
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if it is empty
     * @throws IllegalStateException if the client is closed
     */
    public T get(String name) {
        Objects.requireNonNull(name, "name must not be null");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("name must not be empty");
        }
        checkOpen.run();
        return instances.get(name);
    }
}
