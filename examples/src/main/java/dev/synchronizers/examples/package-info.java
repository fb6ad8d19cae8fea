/**
 * The runnable demo that the README starts: {@link dev.synchronizers.examples.StockDemo} sells a
 * limited stock from several JVMs, first under a textbook Redis lock, then under {@link
 * dev.synchronizers.DistributedLock}, and counts the oversold units and lost updates; then it
 * bounds the concurrent calls to a slow service, per JVM and then with {@link
 * dev.synchronizers.DistributedSemaphore}, and prints the peak the service saw.
 */
package dev.synchronizers.examples;
