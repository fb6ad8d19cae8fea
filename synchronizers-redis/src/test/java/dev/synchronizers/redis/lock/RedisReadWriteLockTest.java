package dev.synchronizers.redis.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedReadWriteLock;
import dev.synchronizers.fixture.Await;
import dev.synchronizers.fixture.Background;
import dev.synchronizers.fixture.Opened;
import dev.synchronizers.fixture.RedisState;
import dev.synchronizers.fixture.SynchronizersExtension;
import dev.synchronizers.fixture.TestNames;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.child.ReadLockHolderMain;
import dev.synchronizers.testkit.ChildJvm;
import dev.synchronizers.testkit.RedisExtension;
import dev.synchronizers.testkit.RedisServer;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What only the read-write lock promises: shared reads, exclusive writes, downgrade without a gap,
 * no upgrade deadlock, per-reader leases, writers not starved, and its wake-ups. (Each half's
 * {@code DistributedLock} contract runs in DistributedLockContractTest.)
 */
@Tag("redis")
@ExtendWith(SynchronizersExtension.class)
class RedisReadWriteLockTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Opened opened;
    private final String prefix;
    private final String name;
    private RedisCommands<String, String> admin;

    RedisReadWriteLockTest(TestNames names, Opened opened) {
        this.prefix = names.prefix();
        this.name = names.name();
        this.opened = opened;
    }

    /** Before what the test opened is closed: no key of the test is left without a TTL, and no waiter in a queue. */
    @AfterEach
    void noKeyLeftBehind() {
        if (admin != null) {
            for (String key : admin.keys(prefix + ":*")) {
                assertTrue(admin.pttl(key) >= 0 || admin.exists(key) == 0, "key without a TTL: " + key);
                assertFalse(key.endsWith(":queue"), "a waiter left in the queue: " + key);
            }
        }
    }

    /* --------------- sharing and exclusion --------------- */

    /** 8 readers in 2 clients hold the read lock at the same time. */
    @Test
    void readLock_8ReadersIn2Clients_holdAtTheSameTime() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        List<DistributedReadWriteLock> locks = List.of(client(uri).readWriteLock(name), client(uri).readWriteLock(name));
        CyclicBarrier allInside = new CyclicBarrier(8);
        List<Background<Void>> readers = new ArrayList<>();
        for (int r = 0; r < 8; r++) {
            DistributedLock read = locks.get(r % 2).readLock();
            readers.add(Background.start("reader-" + r, () -> {
                read.lock();
                try {
                    allInside.await(30, TimeUnit.SECONDS); // passes only if all 8 hold it together
                } finally {
                    read.unlock();
                }
                return null;
            }));
        }
        for (Background<Void> reader : readers) {
            reader.get();
        }
    }

    /**
     * A writer excludes readers and other writers: two fields written under the write lock are
     * never seen apart under the read lock, and writers never overlap.
     */
    @Test
    void writeLock_excludesReadersAndWriters_noTornState() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        List<DistributedReadWriteLock> locks = List.of(client(uri).readWriteLock(name), client(uri).readWriteLock(name));
        AtomicLong first = new AtomicLong();
        AtomicLong second = new AtomicLong();
        AtomicInteger writersInside = new AtomicInteger();
        AtomicInteger torn = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Background<Void>> workers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            DistributedLock write = locks.get(w).writeLock();
            workers.add(Background.start("writer-" + w, () -> {
                for (int i = 0; i < 30; i++) {
                    write.lock();
                    try {
                        if (writersInside.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        long value = first.get() + 1;
                        first.set(value);
                        LockSupport.parkNanos(100_000); // a reader slipping in now would see them apart
                        second.set(value);
                        writersInside.decrementAndGet();
                    } finally {
                        write.unlock();
                    }
                }
                return null;
            }));
        }
        for (int r = 0; r < 6; r++) {
            DistributedLock read = locks.get(r % 2).readLock();
            workers.add(Background.start("reader-" + r, () -> {
                for (int i = 0; i < 30; i++) {
                    read.lock();
                    try {
                        if (first.get() != second.get() || writersInside.get() != 0) {
                            torn.incrementAndGet();
                        }
                    } finally {
                        read.unlock();
                    }
                }
                return null;
            }));
        }
        for (Background<Void> worker : workers) {
            worker.get();
        }
        assertEquals(0, torn.get(), "reads that saw a write half done");
        assertEquals(0, overlaps.get(), "writers at once");
        assertEquals(60, second.get());
    }

    /* --------------- downgrade and upgrade --------------- */

    /** Downgrade: the writer takes the read lock, releases the write lock, and no writer gets in meanwhile. */
    @Test
    void writeLock_downgradedToRead_keepsWritersOutAndLetsReadersIn() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        DistributedReadWriteLock mine = client(uri).readWriteLock(name);
        DistributedReadWriteLock other = client(uri).readWriteLock(name);
        mine.writeLock().lock();
        mine.readLock().lock();
        mine.writeLock().unlock();
        assertTrue(mine.readLock().isHeldByCurrentThread());
        assertFalse(Background.start("other writer", () -> other.writeLock().tryLock(200, TimeUnit.MILLISECONDS)).get(),
                "no writer enters while the downgraded read hold lasts");
        assertTrue(Background.start("other reader", () -> {
            boolean acquired = other.readLock().tryLock(30, TimeUnit.SECONDS);
            other.readLock().unlock();
            return acquired;
        }).get(), "readers share the downgraded hold");
        mine.readLock().unlock();
        assertTrue(Background.start("other writer", () -> {
            boolean acquired = other.writeLock().tryLock(30, TimeUnit.SECONDS);
            other.writeLock().unlock();
            return acquired;
        }).get());
    }

    /** Upgrade: lock() and lockInterruptibly() throw, tryLock returns false, nothing hangs or changes. */
    @Test
    void writeLock_whileHoldingOnlyTheRead_refusesUpgrade() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        DistributedReadWriteLock lock = client(uri).readWriteLock(name);
        lock.readLock().lock();
        // Owner-bound calls, so on this thread: each returns or throws at once, with no wait at all.
        IllegalMonitorStateException upgrade = assertThrows(IllegalMonitorStateException.class, lock.writeLock()::lock);
        assertTrue(upgrade.getMessage().contains("upgrade"), upgrade.getMessage());
        assertThrows(IllegalMonitorStateException.class, lock.writeLock()::lockInterruptibly);
        assertFalse(lock.writeLock().tryLock());
        assertFalse(lock.writeLock().tryLock(1, TimeUnit.SECONDS));
        assertEquals(0, lock.writeLock().getHoldCount());
        assertEquals(1, lock.readLock().getHoldCount());
        lock.readLock().unlock();
        assertTrue(lock.writeLock().tryLock(), "free to write once the read hold is gone");
        lock.writeLock().unlock();
    }

    /* --------------- per-reader leases --------------- */

    /**
     * A child JVM holding a read lock is SIGKILLed: a writer gets in after that reader's lease,
     * while a live reader's hold is untouched meanwhile.
     */
    @Test
    void readLock_readerProcessKilled_writerGetsInAfterItsLeaseAndLiveReaderKeepsHold() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        String readers = prefix + ":rwlock:{" + name + "}:readers";
        DistributedLock liveReader = client(uri).readWriteLock(name).readLock();
        DistributedLock writer = client(uri).readWriteLock(name).writeLock();
        try (ChildJvm child = ChildJvm.start(ReadLockHolderMain.class, uri, prefix, name, "1000")) {
            String childId = child.awaitLine("READING", Duration.ofSeconds(60)).substring("READING ".length()).trim();
            liveReader.lock();
            Background<Boolean> waitingWriter = Background.start("writer", () -> {
                writer.lock();
                writer.unlock();
                return true;
            });
            Await.until("the writer queues", () -> admin.zcard(prefix + ":rwlock:{" + name + "}:queue") == 1);
            child.kill();
            Await.until("the dead reader's hold is gone", () -> admin.zrange(readers, 0, -1).stream()
                    .noneMatch(reader -> reader.startsWith(childId)));
            assertTrue(liveReader.isHeldByCurrentThread(), "the live reader keeps its hold");
            assertEquals(1, admin.zcard(readers), "only the live reader is left");
            assertTrue(waitingWriter.thread().isAlive(), "the writer still waits for the live reader");
            liveReader.unlock();
            assertTrue(waitingWriter.get(), "the writer got in");
        }
    }

    /* --------------- writer starvation --------------- */

    /**
     * 8 threads keep taking and releasing read locks; a writer that starts waiting gets the lock
     * before any read acquisition that began after it started waiting (an order log, not time).
     */
    @Test
    void writeLock_underAStreamOfReaders_goesBeforeReadersThatCameAfterIt() throws Exception {
        String uri = redis.server().uri();
        admin = opened.commands(uri);
        List<DistributedReadWriteLock> locks = List.of(client(uri).readWriteLock(name), client(uri).readWriteLock(name));
        AtomicLong clock = new AtomicLong();
        AtomicLong writerQueuedAt = new AtomicLong(Long.MAX_VALUE);
        AtomicLong writerAcquiredAt = new AtomicLong(Long.MAX_VALUE);
        List<long[]> reads = new java.util.concurrent.CopyOnWriteArrayList<>(); // {began, acquired}
        AtomicBoolean stop = new AtomicBoolean();
        List<Background<Void>> readers = new ArrayList<>();
        for (int r = 0; r < 8; r++) {
            DistributedLock read = locks.get(r % 2).readLock();
            readers.add(Background.start("reader-" + r, () -> {
                while (!stop.get()) {
                    long began = clock.incrementAndGet();
                    read.lock();
                    try {
                        reads.add(new long[] {began, clock.incrementAndGet()});
                        LockSupport.parkNanos(200_000);
                    } finally {
                        read.unlock();
                    }
                }
                return null;
            }));
        }
        Await.until("readers are busy", () -> reads.size() > 50);
        DistributedLock write = client(uri).readWriteLock(name).writeLock();
        Background<Void> writer = Background.start("writer", () -> {
            write.lock();
            try {
                writerAcquiredAt.set(clock.incrementAndGet());
            } finally {
                write.unlock();
            }
            return null;
        });
        Await.until("the writer queues", () -> admin.zcard(prefix + ":rwlock:{" + name + "}:queue") >= 1
                || writerAcquiredAt.get() != Long.MAX_VALUE);
        writerQueuedAt.set(clock.incrementAndGet());
        writer.get();
        Await.until("readers carry on after the writer", () -> reads.stream().anyMatch(r -> r[1] > writerAcquiredAt.get()));
        stop.set(true);
        for (Background<Void> reader : readers) {
            reader.get();
        }
        for (long[] read : reads) {
            if (read[0] > writerQueuedAt.get()) {
                assertTrue(read[1] > writerAcquiredAt.get(), "a read that began at " + read[0]
                        + ", after the writer queued at " + writerQueuedAt.get() + ", got in at " + read[1]
                        + ", before the writer at " + writerAcquiredAt.get());
            }
        }
    }

    /* --------------- wake-ups --------------- */

    /** A writer's release wakes every waiting reader with one message. */
    @Test
    void writeLock_releasedWith6ReadersWaiting_wakesThemAllWithOneMessage() throws Exception {
        RedisServer server = redis.startManaged();
        admin = opened.commands(server.uri());
        List<DistributedReadWriteLock> locks = List.of(client(server.uri()).readWriteLock(name),
                client(server.uri()).readWriteLock(name));
        DistributedLock write = client(server.uri()).readWriteLock(name).writeLock();
        write.lock();
        CountDownLatch allReading = new CountDownLatch(6);
        CountDownLatch finish = new CountDownLatch(1);
        List<Background<Void>> readers = new ArrayList<>();
        for (int r = 0; r < 6; r++) {
            DistributedLock read = locks.get(r % 2).readLock();
            readers.add(Background.start("reader-" + r, () -> {
                read.lock();
                try {
                    allReading.countDown();
                    finish.await();
                } finally {
                    read.unlock();
                }
                return null;
            }));
        }
        for (Background<Void> reader : readers) {
            Await.until(reader.thread().getName() + " sleeps on its wake-up", () -> RedisState.sleepsOnWakeup(reader.thread()));
        }
        admin.configResetstat();
        write.unlock();
        assertTrue(allReading.await(30, TimeUnit.SECONDS), "every reader got in");
        assertEquals(1, RedisState.publishes(admin.info("commandstats")), "one message woke them all");
        finish.countDown();
        for (Background<Void> reader : readers) {
            reader.get();
        }
    }

    /* --------------- helpers --------------- */

    /* --------------- waking readers --------------- */

    /**
     * A reader waits for a writer whose lease is far longer than the reader's (a fixed 90 s lease;
     * the reader's client leases for 1 s). The reader sleeps for the writer's remaining lease, so
     * its "readers wait" mark must outlive its own lease: the writer's release after that must
     * still wake it.
     */
    @Test
    void readLock_writerWithALongerLeaseReleasesAfterTheReadersLease_readerIsWoken() throws Exception {
        String uri = redis.server().uri();
        DistributedReadWriteLock writerSide = client(uri).readWriteLock(name);
        RedisSynchronizers readerClient = opened.add(RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(Duration.ofSeconds(1)).build());
        DistributedReadWriteLock readerSide = readerClient.readWriteLock(name);
        writerSide.writeLock().lock(90, TimeUnit.SECONDS);

        // lock(), not tryLock(timeout): a timed wait tries once more at its deadline and would
        // pass without any wake-up.
        Background<Boolean> reader = Background.start("reader", () -> {
            readerSide.readLock().lock();
            readerSide.readLock().unlock();
            return true;
        });
        Await.parked(reader.thread());
        // The scenario is time passing: past the reader's own 1 s lease, while it sleeps.
        Thread.sleep(2_500);
        writerSide.writeLock().unlock();

        assertTrue(reader.get(), "the reader was woken by the writer's release");
    }

    /* --------------- forceUnlock --------------- */

    /**
     * forceUnlock() on either half frees both, so the holders of both halves in this JVM learn at
     * once: their hold is lost (listener told, isHeldByCurrentThread() false, unlock() throws).
     */
    @Test
    void forceUnlock_onTheWriteLockWhileThisClientReads_readersLearnAtOnce() throws Exception {
        java.util.concurrent.BlockingQueue<dev.synchronizers.LostHold> lost = new java.util.concurrent.LinkedBlockingQueue<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(redis.server().uri())
                .keyPrefix(prefix).lease(Duration.ofSeconds(30)).lostHoldListener(lost::add).build());
        DistributedReadWriteLock rw = client.readWriteLock(name);
        rw.readLock().lock();

        assertTrue(rw.writeLock().forceUnlock());
        assertFalse(rw.readLock().isHeldByCurrentThread(), "the reader knows at once");

        dev.synchronizers.LostHold report = lost.poll(10, TimeUnit.SECONDS);
        assertTrue(report != null && report.kind().equals("read lock"), "the reader was told at once: " + report);
        assertFalse(rw.readLock().isHeldByCurrentThread());
        assertThrows(dev.synchronizers.LostHoldException.class, rw.readLock()::unlock);
    }

    /** The same from the other side: forceUnlock() on the read lock tells this client's writer. */
    @Test
    void forceUnlock_onTheReadLockWhileThisClientWrites_theWriterLearnsAtOnce() throws Exception {
        java.util.concurrent.BlockingQueue<dev.synchronizers.LostHold> lost = new java.util.concurrent.LinkedBlockingQueue<>();
        RedisSynchronizers client = opened.add(RedisSynchronizers.builder().uri(redis.server().uri())
                .keyPrefix(prefix).lease(Duration.ofSeconds(30)).lostHoldListener(lost::add).build());
        DistributedReadWriteLock rw = client.readWriteLock(name);
        rw.writeLock().lock();

        assertTrue(rw.readLock().forceUnlock());
        assertFalse(rw.writeLock().isHeldByCurrentThread(), "the writer knows at once");

        dev.synchronizers.LostHold report = lost.poll(10, TimeUnit.SECONDS);
        assertTrue(report != null && report.kind().equals("write lock"), "the writer was told at once: " + report);
        assertFalse(rw.writeLock().isHeldByCurrentThread());
        assertThrows(dev.synchronizers.LostHoldException.class, rw.writeLock()::unlock);
    }

    private RedisSynchronizers client(String uri) {
        RedisSynchronizers client = RedisSynchronizers.builder().uri(uri).keyPrefix(prefix)
                .lease(Duration.ofSeconds(30)).build();
        opened.add(client);
        return client;
    }

}
