package dev.synchronizers.testkit;

import java.util.concurrent.CountDownLatch;

/**
 * The main class {@link RedisServersTest} runs in a child JVM. With no argument it prints
 * {@code READY} and blocks forever; with {@code fail} it prints to standard error and exits 3.
 */
public final class Sleeper {

    private Sleeper() {
    }

    /** Prints READY and blocks, or fails as described in the class comment. */
    public static void main(String[] args) throws InterruptedException {
        if (args.length > 0 && args[0].equals("fail")) {
            System.out.println("starting");
            System.err.println("boom: " + System.getProperty("sleeper.detail"));
            System.exit(3);
        }
        System.out.println("READY pid " + ProcessHandle.current().pid());
        new CountDownLatch(1).await();
    }
}
