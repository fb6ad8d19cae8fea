package dev.synchronizers.redis.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.synchronizers.redis.latch.LatchKeys;
import dev.synchronizers.redis.lock.LockKeys;
import dev.synchronizers.redis.semaphore.SemaphoreKeys;
import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every key and channel of one synchronizer lives in one Redis Cluster slot, whatever its name,
 * and two names never share keys. No Redis: the slot is computed as Redis Cluster computes it.
 */
class KeyNamesTest {

    private static final String PREFIX = "sync";

    /** "All keys of one synchronizer share the hash tag of its name, so it lives in one Redis Cluster slot." */
    @ParameterizedTest
    @ValueSource(strings = {"orders", "}", "}abc", "a}b", "{x}", "{", "{}", "%7D", "a%b", "%", "x}{y", "注文-42", " "})
    void keys_anyName_allInOneSlot(String name) {
        for (List<String> keys : everyKeyOf(name)) {
            Set<Integer> slots = new TreeSet<>();
            for (String key : keys) {
                slots.add(SlotHash.getSlot(key));
            }
            assertEquals(1, slots.size(), "keys of '" + name + "' span slots " + slots + ": " + keys);
        }
    }

    /** Two different names never map to the same keys, however they are escaped. */
    @ParameterizedTest
    @ValueSource(strings = {"}|%7D", "%|%25", "a}b|a%7Db", "%25|%2525", "{x}|%7Bx%7D"})
    void keys_differentNames_differentKeys(String pair) {
        String[] names = pair.split("\\|");
        List<List<String>> first = everyKeyOf(names[0]);
        List<List<String>> second = everyKeyOf(names[1]);
        for (int i = 0; i < first.size(); i++) {
            for (String key : first.get(i)) {
                assertFalse(second.get(i).contains(key),
                        "'" + names[0] + "' and '" + names[1] + "' share the key " + key);
            }
        }
    }

    private static List<List<String>> everyKeyOf(String name) {
        List<List<String>> all = new ArrayList<>();
        for (LockKeys keys : List.of(LockKeys.of(PREFIX, name), LockKeys.fair(PREFIX, name),
                LockKeys.readWrite(PREFIX, name))) {
            List<String> lockKeys = new ArrayList<>(List.of(keys.lock(), keys.token(), keys.queue(), keys.places(),
                    keys.readers(), keys.readTokens(), keys.readersWaiting(), keys.wakeups()));
            // Its conditions, by index and by a name with braces of its own: still the lock's slot.
            for (String id : List.of("0", "n=" + name, "n={other}")) {
                LockKeys.ConditionKeys condition = keys.condition(id);
                lockKeys.addAll(List.of(condition.lock(), condition.queue(), condition.places(), condition.signalled(),
                        condition.signals(), condition.wakeups()));
            }
            all.add(lockKeys);
        }
        SemaphoreKeys semaphore = SemaphoreKeys.of(PREFIX, name);
        all.add(List.of(semaphore.total(), semaphore.holds(), semaphore.leases(), semaphore.queue(),
                semaphore.places(), semaphore.asks(), semaphore.wakeups()));
        all.add(Arrays.asList(LatchKeys.of(PREFIX, name).all()));
        return all;
    }
}
