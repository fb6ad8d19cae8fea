package dev.synchronizers.test;

import java.util.ArrayDeque;
import java.util.Date;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/** A condition of a lock, shared by every client that makes it (by index or by name). */
final class MemCondition implements Condition {

    /** The waiters of one condition, oldest first. Guarded by the store's lock. */
    static final class Waiters {
        final ArrayDeque<Node> nodes = new ArrayDeque<>();
    }

    static final class Node {
        boolean signalled;
    }

    private final MemLock lock;
    private final String key;
    private final InMemorySynchronizers.Store store;

    MemCondition(MemLock lock, String key) {
        this.lock = lock;
        this.key = key;
        this.store = lock.client.store;
    }

    private Waiters waiters() {
        return lock.state.conditions.computeIfAbsent(key, k -> new Waiters());
    }

    /** Returns the nanoseconds left (above 0) if signalled, else at most 0. */
    private long doAwait(boolean timed, long nanos, boolean interruptible) throws InterruptedException {
        LockState state = lock.state;
        store.mutex.lock();
        try {
            LockState.ThreadKey me = lock.me();
            Hold hold = state.find(me, false);
            if (hold == null) {
                LockState.LostKey lostKey = new LockState.LostKey(me, false);
                Hold lost = state.lost.remove(lostKey);
                if (lost == null) {
                    throw new IllegalMonitorStateException(state.kind(false) + " '" + state.name
                            + "' is not held by the current thread");
                }
                // as the library: take the lock again with the same count, so that finally { unlock(); } holds
                lock.client.check();
                lock.waitFor(me, me.threadId(), lost.leaseNanos, -1, false, false, lost.count);
                throw state.lostException(lost);
            }
            if (interruptible && Thread.interrupted()) {
                throw new InterruptedException();
            }
            lock.client.check();
            int count = hold.count;
            long leaseNanos = hold.leaseNanos;
            Node node = new Node();
            Waiters waiters = waiters();
            waiters.nodes.addLast(node);
            state.end(hold);
            boolean interrupted = false;
            long remaining = nanos;
            try {
                while (!node.signalled) {
                    if (timed) {
                        if (remaining <= 0) {
                            break;
                        }
                        remaining = store.changed.awaitNanos(remaining);
                    } else if (interruptible) {
                        store.changed.await();
                    } else {
                        store.changed.awaitUninterruptibly();
                    }
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
            if (!node.signalled) {
                waiters.nodes.remove(node);
            }
            lock.waitFor(me, me.threadId(), leaseNanos, -1, false, false, count);
            if (interrupted) {
                if (!node.signalled) {
                    throw new InterruptedException();
                }
                Thread.currentThread().interrupt();
            }
            return node.signalled ? Math.max(1, remaining) : Math.min(0, remaining);
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public void await() throws InterruptedException {
        doAwait(false, 0, true);
    }

    @Override
    public void awaitUninterruptibly() {
        try {
            doAwait(false, 0, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible await was interrupted", e);
        }
    }

    @Override
    public long awaitNanos(long nanosTimeout) throws InterruptedException {
        return doAwait(true, nanosTimeout, true);
    }

    @Override
    public boolean await(long time, TimeUnit unit) throws InterruptedException {
        return doAwait(true, unit.toNanos(time), true) > 0;
    }

    @Override
    public boolean awaitUntil(Date deadline) throws InterruptedException {
        long millis = deadline.getTime() - System.currentTimeMillis();
        return doAwait(true, TimeUnit.MILLISECONDS.toNanos(millis), true) > 0;
    }

    private void checkHeld() {
        LockState.ThreadKey me = lock.me();
        if (lock.state.find(me, false) == null) {
            lock.state.throwIfLost(new LockState.LostKey(me, false), false);
            throw new IllegalMonitorStateException(lock.state.kind(false) + " '" + lock.state.name
                    + "' is not held by the current thread");
        }
        lock.client.check();
    }

    @Override
    public void signal() {
        store.mutex.lock();
        try {
            checkHeld();
            Node first = waiters().nodes.pollFirst();
            if (first != null) {
                first.signalled = true;
                store.changed.signalAll();
            }
        } finally {
            store.mutex.unlock();
        }
    }

    @Override
    public void signalAll() {
        store.mutex.lock();
        try {
            checkHeld();
            Waiters waiters = waiters();
            for (Node node : waiters.nodes) {
                node.signalled = true;
            }
            waiters.nodes.clear();
            store.changed.signalAll();
        } finally {
            store.mutex.unlock();
        }
    }
}
