package dev.synchronizers.test;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.LockSnapshot;
import dev.synchronizers.ReadWriteLockSnapshot;
import java.util.ArrayList;
import java.util.List;

/** {@code readWriteLock(name)}: two halves over one state. */
final class MemReadWriteLock implements DistributedReadWriteLock {

    private final InMemorySynchronizers client;
    private final LockState state;
    private final MemLock readLock;
    private final MemLock writeLock;

    MemReadWriteLock(InMemorySynchronizers client, LockState state) {
        this.client = client;
        this.state = state;
        this.readLock = new MemLock(client, state, true);
        this.writeLock = new MemLock(client, state, false);
    }

    @Override
    public String name() {
        return state.name;
    }

    @Override
    public DistributedLock readLock() {
        return readLock;
    }

    @Override
    public DistributedLock writeLock() {
        return writeLock;
    }

    @Override
    public ReadWriteLockSnapshot snapshot() {
        client.store.mutex.lock();
        try {
            client.check();
            LockSnapshot.Holder writer = null;
            List<LockSnapshot.Holder> readers = new ArrayList<>();
            for (Hold hold : state.holds) {
                if (hold.read) {
                    readers.add(MemLock.holder(hold, client));
                } else {
                    writer = MemLock.holder(hold, client);
                }
            }
            return new ReadWriteLockSnapshot(name(), writer, readers, state.waiting(false), state.waiting(true) > 0);
        } finally {
            client.store.mutex.unlock();
        }
    }
}
