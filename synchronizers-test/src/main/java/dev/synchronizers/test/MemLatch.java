package dev.synchronizers.test;

import dev.synchronizers.DistributedCountDownLatch;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/** {@code countDownLatch(name)} in memory. */
final class MemLatch implements DistributedCountDownLatch {

    private final InMemorySynchronizers client;
    private final LatchState state;
    private final InMemorySynchronizers.Store store;

    MemLatch(InMemorySynchronizers client, LatchState state) {
        this.client = client;
        this.state = state;
        this.store = client.store;
    }

    @Override
    public String name() {
        return state.name;
    }

    @Override
    public boolean trySetCount(long count) {
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0: " + count);
        }
        store.mutex.lock();
        try {
            client.check();
            if (count == 0) {
                return state.count == 0;
            }
            if (state.count > 0) {
                return false;
            }
            state.count = count;
            return true;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public void countDown() {
        store.mutex.lock();
        try {
            client.check();
            if (state.count > 0 && --state.count == 0) {
                state.openings++;
                store.changed.signalAll();
            }
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public boolean delete() {
        store.mutex.lock();
        try {
            client.check();
            if (state.count == 0) {
                return false;
            }
            state.count = 0;
            state.openings++;
            store.changed.signalAll();
            return true;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public long getCount() {
        store.mutex.lock();
        try {
            client.check();
            return state.count;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public void await() throws InterruptedException {
        await(false, 0);
    }

    @Override
    public boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        return await(true, unit.toNanos(timeout));
    }

    private boolean await(boolean timed, long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        store.mutex.lock();
        try {
            client.check();
            long seen = state.openings;
            long remaining = nanos;
            while (state.count > 0 && state.openings == seen) {
                if (timed) {
                    if (remaining <= 0) {
                        return false;
                    }
                    remaining = store.changed.awaitNanos(remaining);
                } else {
                    store.changed.await();
                }
                client.check();
            }
            return true;
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public CompletionStage<Void> awaitAsync() {
        return Async.<Void>run(store, () -> {
            await();
            return null;
        }, ignored -> { });
    }

    @Override
    public String toString() {
        return "InMemory latch '" + name() + "'";
    }
}
