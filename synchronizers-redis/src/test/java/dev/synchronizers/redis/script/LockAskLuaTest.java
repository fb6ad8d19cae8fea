package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code lock-ask.lua} against a real server: it publishes the lock's key on the cacher's channel. */
@Tag("redis")
class LockAskLuaTest extends LuaTestBase {

    @Test
    void ask_publishesTheLocksKeyOnTheChannelAndChangesNothing() throws Exception {
        String asks = base + ":asks";
        String lock = base + ":lock";

        lua.assertPublishes(asks, () -> assertEquals(1L, (Long) lua.run(Script.LOCK_ASK, new String[] {asks}, lock)),
                lock);

        assertEquals(0L, lua.redis.exists(asks, lock), "no key written");
    }
}
