package dev.synchronizers.shedlock;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;

/**
 * ShedLock's own provider suite ({@code shedlock-test-support}) over one topology: a subclass gives
 * the provider under test (one client's) and the lock of a name as a second client sees it, which
 * {@link #assertLocked}/{@link #assertUnlocked} ask.
 */
abstract class ProviderSuite extends AbstractExtensibleLockProviderIntegrationTest {

    /** The lock called {@code name}, as a client other than the provider's sees it. */
    abstract DistributedLock observed(String name);

    @Override
    protected abstract ExtensibleLockProvider getLockProvider();

    @Override
    protected final void assertUnlocked(String lockName) {
        assertFalse(observed(lockName).isLocked(), lockName + " is free for another client");
    }

    @Override
    protected final void assertLocked(String lockName) {
        assertTrue(observed(lockName).isLocked(), lockName + " is held, as another client sees it");
    }
}
