package dev.synchronizers.soak;

import dev.synchronizers.DistributedCountDownLatch;
import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.LostHoldException;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.redis.RedisSynchronizers;
import dev.synchronizers.redis.Redlock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One client JVM of the fault soak: a {@link RedisSynchronizers} with a short lease and command
 * timeout, and {@link #THREADS} threads that run a random mix of operations on the names of
 * {@link #LOCKS}, {@link #FAIR_LOCKS}, {@link #READ_WRITE_LOCKS}, {@link #SEMAPHORES} and {@link
 * #LATCHES} until the {@link Witness} says stop, recording everything in a {@link History}.
 *
 * <p>Every acquisition brackets its work with {@link Witness#enter}/{@link Witness#exit} and, where
 * the kind has a fencing token, fenced writes at both ends. Each operation has a bound: its wait,
 * its work, and {@code slackMillis} for the Redis calls around them; a watcher thread records an
 * operation that runs past its bound while it still runs ({@code HUNG}), so that a hang is on file
 * even if this JVM is killed before it ends.
 *
 * <p>Given several Redis URIs (comma-separated), it is a worker of the Redlock soak instead: a
 * {@link Redlock} over those nodes, and only lock operations, on the names of {@link #LOCKS}.
 *
 * <p>Arguments: {@code <redis uri>[,<redis uri>...] <witness uri> <key prefix> <jvm id> <history file> <seed>
 * <lease millis> <command timeout millis> <slack millis> [cache|nocache <home lock>]}. Given a home
 * lock (an index into {@link #LOCKS}), a quarter of the operations are added non-fair lock
 * operations, and {@value #HOME_PERCENT}% of all its non-fair lock operations go to the home lock,
 * the rest to any: each lock has a client that mostly keeps it, and the others come asking. With
 * {@code cache} the client
 * caches non-fair locks ({@link RedisSynchronizers.Builder#lockCaching}), and each acquisition of
 * one says in its {@code ACQ} event whether it came from the cache ({@code cached}) and whether it
 * was a local re-take of a cache already held in Redis ({@code retake}: its token follows the
 * previous cached take's of this JVM, which only a take from the same block does). Prints {@code
 * READY} once connected and {@code DONE} once every thread stopped and the client is closed; exits 0.
 */
public final class SoakWorkerMain {

    /** The kind a Redlock's lock reports its lost holds as. */
    static final String REDLOCK = "redlock";
    /** Threads per worker JVM. */
    static final int THREADS = 4;
    /** Non-fair lock names. */
    static final List<String> LOCKS = List.of("L0", "L1");
    /** Fair lock names. */
    static final List<String> FAIR_LOCKS = List.of("F0");
    /** Read-write lock names. */
    static final List<String> READ_WRITE_LOCKS = List.of("RW0");
    /** Semaphore names and their total permits. */
    static final Map<String, Integer> SEMAPHORES = Map.of("S0", 3);
    /** Countdown latch names. */
    static final List<String> LATCHES = List.of("C0");
    /** The longest wait of a timed acquire or await. */
    static final long MAX_WAIT_MILLIS = 1500;
    /** The longest work inside a critical section: past a 2 s lease, so renewals matter. */
    static final long MAX_WORK_MILLIS = 3500;
    /** A write hold's weight inside a read-write lock: more than any number of readers may share. */
    static final int WRITE_WEIGHT = 1000;

    /** The client, or null in a Redlock worker. */
    private final RedisSynchronizers client;
    /** The Redlock, or null in a worker of the one-server soak. */
    private final Redlock redlock;
    private final Witness witness;
    private final History history;
    private final String jvm;
    private final long slackMillis;
    private final long seed;
    /** In a worker with a home lock: the share of its non-fair lock operations on its home lock. */
    static final int HOME_PERCENT = 70;

    /** The index in {@link #LOCKS} of the lock this worker mostly uses, or -1 for an even mix. */
    private final int home;
    /** Whether the client caches non-fair locks. */
    private final boolean caching;
    /** By lock name: the token of this JVM's last take from its cache, to tell a local re-take. */
    private final Map<String, Long> lastCachedToken = new ConcurrentHashMap<>();
    /** What each thread is doing now: hold id, start, bound; watched for hangs. */
    private final Map<Thread, Running> running = new ConcurrentHashMap<>();

    private record Running(String hold, long startNanos, long boundMillis) {
    }

    private SoakWorkerMain(RedisSynchronizers client, Redlock redlock, Witness witness, History history, String jvm,
            long slackMillis, long seed, boolean caching, int home) {
        this.client = client;
        this.home = home;
        this.caching = caching;
        this.redlock = redlock;
        this.witness = witness;
        this.history = history;
        this.jvm = jvm;
        this.slackMillis = slackMillis;
        this.seed = seed;
    }

    /**
     * The synchronizer of a name as the witness calls it: {@code <kind without spaces>:<name>}, e.g.
     * {@code fairlock:F0}; both halves of a read-write lock are {@code rw:<name>}.
     */
    static String synchronizer(String kind, String name) {
        return kind.replace(" ", "") + ":" + name;
    }

    /** The name a worker's connection to the witness goes by. */
    static String clientName(String jvm) {
        return "soak-" + jvm;
    }

    /** Every inside key the workers use, for {@link Witness#forget}. */
    static List<String> insideKeys() {
        List<String> keys = new ArrayList<>();
        LOCKS.forEach(name -> keys.add(Witness.insideKey(synchronizer("lock", name))));
        LOCKS.forEach(name -> keys.add(Witness.insideKey(synchronizer(REDLOCK, name))));
        FAIR_LOCKS.forEach(name -> keys.add(Witness.insideKey(synchronizer("fair lock", name))));
        READ_WRITE_LOCKS.forEach(name -> keys.add(Witness.insideKey(synchronizer("rw", name))));
        SEMAPHORES.keySet().forEach(name -> keys.add(Witness.insideKey(synchronizer("semaphore", name))));
        return keys;
    }

    public static void main(String[] args) throws Exception {
        String redisUri = args[0];
        String jvm = args[3];
        long leaseMillis = Long.parseLong(args[6]);
        long timeoutMillis = Long.parseLong(args[7]);
        History history = History.create(Path.of(args[4]));
        Witness witness = Witness.connect(args[1], clientName(jvm));
        boolean caching = args.length > 9 && args[9].equals("cache");
        RedisSynchronizers client = null;
        Redlock redlock = null;
        if (redisUri.contains(",")) {
            redlock = connectRedlock(redisUri.split(","), args[2], leaseMillis, timeoutMillis, history);
            history.record("START", jvm, redlock.clientId(), ProcessHandle.current().pid());
        } else {
            client = connect(redisUri, args[2], leaseMillis, timeoutMillis, caching, history);
            history.record("START", jvm, client.clientId(), ProcessHandle.current().pid(),
                    caching ? "cache" : "nocache");
        }
        System.out.println("READY");
        System.out.flush();
        new SoakWorkerMain(client, redlock, witness, history, jvm, Long.parseLong(args[8]), Long.parseLong(args[5]),
                caching, args.length > 10 ? Integer.parseInt(args[10]) : -1).run();
        if (redlock != null) {
            redlock.close();
        } else {
            client.close();
        }
        history.record("DONE");
        history.close();
        witness.close();
        System.out.println("DONE");
        System.out.flush();
        System.exit(0);
    }

    /** Connects, retrying while the server is stalled or cut off: this JVM may start mid-fault. */
    private static RedisSynchronizers connect(String uri, String prefix, long leaseMillis, long timeoutMillis,
            boolean caching, History history) throws InterruptedException {
        return retryWhileUnavailable(() -> RedisSynchronizers.builder()
                .uri(uri)
                .keyPrefix(prefix)
                .lockCaching(caching)
                .lease(Duration.ofMillis(leaseMillis))
                .commandTimeout(Duration.ofMillis(timeoutMillis))
                .lostHoldListener(hold -> history.record("LOST", hold.name(), hold.kind(), hold.threadId(),
                        hold.fencingToken(), hold.cause()))
                .build());
    }

    /** As {@link #connect}, for a Redlock over {@code uris}: a quorum of them may be stalled or cut off now. */
    private static Redlock connectRedlock(String[] uris, String prefix, long leaseMillis, long timeoutMillis,
            History history) throws InterruptedException {
        return retryWhileUnavailable(() -> Redlock.builder()
                .nodes(uris)
                .keyPrefix(prefix)
                .lease(Duration.ofMillis(leaseMillis))
                .commandTimeout(Duration.ofMillis(timeoutMillis))
                .lostHoldListener(hold -> history.record("LOST", hold.name(), hold.kind(), hold.threadId(),
                        hold.fencingToken(), hold.cause()))
                .build());
    }

    /** Builds a client, again every 200 ms for up to a minute while Redis is unavailable. */
    private static <T> T retryWhileUnavailable(Supplier<T> build) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                return build.get();
            } catch (SynchronizerUnavailableException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(200);   // a retry interval; servers may be SIGSTOPped
            }
        }
    }

    private void run() throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            int index = i;
            Thread thread = new Thread(() -> loop(index), jvm + ".t" + i);
            threads.add(thread);
        }
        Thread watcher = new Thread(this::watchForHangs, jvm + "-hang-watcher");
        watcher.setDaemon(true);
        watcher.start();
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join();
        }
    }

    /** Records, once each, operations still running past their bound. */
    private void watchForHangs() {
        List<String> reported = new ArrayList<>();
        while (true) {
            for (Running op : running.values()) {
                long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - op.startNanos());
                if (elapsed > op.boundMillis() && !reported.contains(op.hold())) {
                    reported.add(op.hold());
                    history.record("HUNG", op.hold(), elapsed, op.boundMillis());
                }
            }
            try {
                TimeUnit.SECONDS.sleep(1);   // the sampling period of a watcher, not a synchronisation
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** One thread's loop: operations until told to stop. */
    private void loop(int index) {
        SplittableRandom random = new SplittableRandom(seed * 31 + index);
        int sequence = 0;
        while (!witness.stopRequested()) {
            String hold = Thread.currentThread().getName() + "." + (++sequence);
            try {
                operation(hold, random);
            } catch (RuntimeException | Error e) {
                history.record("ERR", hold, e);
                running.remove(Thread.currentThread());
            }
        }
    }

    private void operation(String hold, SplittableRandom random) {
        long wait = random.nextLong(MAX_WAIT_MILLIS + 1);
        long work = random.nextInt(20) == 0 ? 2000 + random.nextLong(MAX_WORK_MILLIS - 1999) : 20 + random.nextLong(230);
        if (redlock != null) {
            String name = LOCKS.get(random.nextInt(LOCKS.size()));
            lockOp(hold, REDLOCK, name, redlock.lock(name), synchronizer(REDLOCK, name), true, 1, 1, wait, work);
            return;
        }
        int pick = random.nextInt(100);
        if (home >= 0 && pick < 25) {
            pick = 0;   // an added non-fair lock operation
        } else if (home >= 0) {
            pick = random.nextInt(100);
        }
        if (pick < 20) {
            String name = home >= 0 && random.nextInt(100) < HOME_PERCENT
                    ? LOCKS.get(home % LOCKS.size())
                    : LOCKS.get(random.nextInt(LOCKS.size()));
            lockOp(hold, "lock", name, client.lock(name), synchronizer("lock", name), true, 1, 1, wait, work);
        } else if (pick < 35) {
            String name = FAIR_LOCKS.get(random.nextInt(FAIR_LOCKS.size()));
            lockOp(hold, "fair lock", name, client.fairLock(name), synchronizer("fair lock", name), true, 1, 1,
                    wait, work);
        } else if (pick < 50) {
            String name = READ_WRITE_LOCKS.get(random.nextInt(READ_WRITE_LOCKS.size()));
            lockOp(hold, "write lock", name, client.readWriteLock(name).writeLock(), synchronizer("rw", name), true,
                    WRITE_WEIGHT, WRITE_WEIGHT, wait, work);
        } else if (pick < 62) {
            String name = READ_WRITE_LOCKS.get(random.nextInt(READ_WRITE_LOCKS.size()));
            lockOp(hold, "read lock", name, client.readWriteLock(name).readLock(), synchronizer("rw", name), false,
                    1, WRITE_WEIGHT, wait, work);
        } else if (pick < 90) {
            List<String> names = List.copyOf(SEMAPHORES.keySet());
            String name = names.get(random.nextInt(names.size()));
            semaphoreOp(hold, name, random, wait, work);
        } else {
            String name = LATCHES.get(random.nextInt(LATCHES.size()));
            latchOp(hold, name, random, wait);
        }
    }

    private long begin(String hold, String op, String name, long wait, long bound) {
        history.record("OP", hold, Thread.currentThread().getName(), op, name, wait, bound,
                Thread.currentThread().getId());
        long start = System.nanoTime();
        running.put(Thread.currentThread(), new Running(hold, start, bound));
        return start;
    }

    private void end(String hold, long start, long bound) {
        running.remove(Thread.currentThread());
        history.record("END", hold, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), bound);
    }

    private void lockOp(String hold, String kind, String name, DistributedLock lock, String synchronizer,
            boolean exclusive, int weight, int limit, long wait, long work) {
        long bound = wait + work + slackMillis;
        long start = begin(hold, kind, name, wait, bound);
        boolean acquired;
        try {
            acquired = lock.tryLock(wait, TimeUnit.MILLISECONDS);
        } catch (SynchronizerUnavailableException e) {
            history.record("NOACQ", hold, "unavailable");
            end(hold, start, bound);
            return;
        } catch (InterruptedException e) {
            throw new IllegalStateException("a soak thread is never interrupted", e);
        }
        if (!acquired) {
            history.record("NOACQ", hold, "timeout");
            end(hold, start, bound);
            return;
        }
        long token;
        try {
            token = lock.fencingToken();
        } catch (IllegalMonitorStateException e) {
            token = -1;   // lost already: the unlock below says so too
        }
        String from = caching && kind.equals("lock") ? cacheOrigin(name, lock, token) : "";
        if (from.isEmpty()) {
            history.record("ACQ", hold, token, weight);
        } else {
            history.record("ACQ", hold, token, weight, from);
        }
        String inside = Witness.insideKey(synchronizer);
        String fence = Witness.fenceKey(synchronizer);
        try {
            witness.enter(inside, hold, weight, limit);
            if (token >= 0) {
                witness.fence(fence, token, exclusive, "enter", hold);
            }
            work(work);
            if (token >= 0) {
                witness.fence(fence, token, exclusive, "exit", hold);
            }
        } finally {
            witness.exit(inside, hold);
            try {
                lock.unlock();
                history.record("REL", hold, "ok");
            } catch (LostHoldException e) {
                history.record("REL", hold, "lost:" + e.lostCause());
            } catch (SynchronizerUnavailableException e) {
                history.record("REL", hold, "unavailable");
            }
        }
        end(hold, start, bound);
    }

    /**
     * For a hold of a non-fair lock just acquired by this thread: {@code retake} if it came from
     * this client's cache with the token after its last cached take's (a local take from the same
     * block: no round trip), {@code cached} if it came from the cache otherwise (the take that put
     * the cache in Redis, or the first after a reservation), or empty. Read from {@code toString()},
     * which makes no network call; only this JVM's threads take from its cache, one at a time.
     */
    private String cacheOrigin(String name, DistributedLock lock, long token) {
        if (token < 0 || !lock.toString().contains("cached by this client: held")) {
            return "";
        }
        Long last = lastCachedToken.put(name, token);
        return last != null && token == last + 1 ? "retake" : "cached";
    }

    private void semaphoreOp(String hold, String name, SplittableRandom random, long wait, long work) {
        DistributedSemaphore semaphore = client.semaphore(name);
        int total = SEMAPHORES.get(name);
        int pick = random.nextInt(100);
        String op = pick < 70 ? "tryAcquire(n,timeout)" : pick < 95 ? "tryAcquire(n)" : "drainPermits";
        int asked = pick < 95 ? 1 + random.nextInt(2) : 0;
        long bound = wait + work + slackMillis;
        long start = begin(hold, "semaphore " + op + " " + asked, name, wait, bound);
        int taken;
        try {
            if (pick < 70) {
                taken = semaphore.tryAcquire(asked, wait, TimeUnit.MILLISECONDS) ? asked : 0;
            } else if (pick < 95) {
                taken = semaphore.tryAcquire(asked) ? asked : 0;
            } else {
                taken = semaphore.drainPermits();
            }
        } catch (SynchronizerUnavailableException e) {
            history.record("NOACQ", hold, "unavailable");
            end(hold, start, bound);
            return;
        } catch (InterruptedException e) {
            throw new IllegalStateException("a soak thread is never interrupted", e);
        }
        if (taken == 0) {
            history.record("NOACQ", hold, "timeout");
            end(hold, start, bound);
            return;
        }
        history.record("ACQ", hold, -1, taken);
        String inside = Witness.insideKey(synchronizer("semaphore", name));
        try {
            witness.enter(inside, hold, taken, total);
            work(work);
        } finally {
            witness.exit(inside, hold);
            try {
                semaphore.release(taken);
                history.record("REL", hold, "ok");
            } catch (LostHoldException e) {
                history.record("REL", hold, "lost:" + e.lostCause());
            } catch (SynchronizerUnavailableException e) {
                // Dropped locally; the client retries the (idempotent) release itself.
                history.record("REL", hold, "unavailable");
            }
        }
        end(hold, start, bound);
    }

    private void latchOp(String hold, String name, SplittableRandom random, long wait) {
        DistributedCountDownLatch latch = client.countDownLatch(name);
        int pick = random.nextInt(100);
        String op = pick < 40 ? "await" : pick < 80 ? "countDown" : "trySetCount";
        long bound = wait + slackMillis;
        long start = begin(hold, "latch " + op, name, wait, bound);
        try {
            String result;
            if (pick < 40) {
                result = Boolean.toString(latch.await(wait, TimeUnit.MILLISECONDS));
            } else if (pick < 80) {
                latch.countDown();
                result = "counted";
            } else {
                result = Boolean.toString(latch.getCount() == 0 && latch.trySetCount(3));
            }
            history.record("LATCH", hold, op, result);
        } catch (SynchronizerUnavailableException e) {
            history.record("LATCH", hold, op, "unavailable");
        } catch (InterruptedException e) {
            throw new IllegalStateException("a soak thread is never interrupted", e);
        }
        end(hold, start, bound);
    }

    /** The work done under a hold: time spent inside, which the nemesis's faults overlap. */
    private static void work(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            throw new IllegalStateException("a soak thread is never interrupted", e);
        }
    }
}
