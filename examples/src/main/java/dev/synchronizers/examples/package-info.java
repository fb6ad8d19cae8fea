/**
 * The runnable demo that the README starts: {@link dev.synchronizers.examples.StockDemo} sells a
 * limited stock from several JVMs, first under a textbook Redis lock, then under {@link
 * dev.synchronizers.DistributedLock}, and counts the oversold units and lost updates.
 */
package dev.synchronizers.examples;
